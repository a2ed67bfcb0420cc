// The shape of an `orch` subcommand and the one place that runs it: parse the
// declared flags (usage errors exit 2), build the feature gates, call run().
// Each subcommand file exports a Command; later work replaces its run().

import {
  FeatureGateError,
  FlagError,
  FlagSet,
  defaultFeatureGates,
  parseFeatureGates,
  type FeatureGates,
  type FlagDecls,
  type ParsedFlags,
  type PositionalSpec,
} from "../component/index.js";

export interface Output {
  write(chunk: string): unknown;
}

export interface Io {
  readonly stdout: Output;
  readonly stderr: Output;
}

export interface RunContext extends Io {
  /** How messages name the command: "orch apiserver". */
  readonly command: string;
  /** From --feature-gates; immutable. */
  readonly featureGates: FeatureGates;
  /** Aborted on SIGINT/SIGTERM: a long-running component shuts down gracefully when it fires. */
  readonly signal: AbortSignal;
}

export interface Command<D extends FlagDecls = FlagDecls> {
  /** The subcommand word: "apiserver". */
  readonly name: string;
  /** One line for `orch --help`. */
  readonly summary: string;
  /** The paragraph opening `orch <name> --help`. */
  readonly description: string;
  readonly flags: D;
  readonly positionals?: PositionalSpec;
  /** Checks across flags (for example a backend and its address); returns why the combination is wrong (exit 2). */
  validate?(flags: ParsedFlags<D>): string | undefined;
  /** Does the component's work; resolves to the exit status (default 0). */
  run(flags: ParsedFlags<D>, context: RunContext): Promise<number | void> | number | void;
}

/** Identity with type inference: `export const command = defineCommand({ ... })`. */
export function defineCommand<D extends FlagDecls>(command: Command<D>): Command<D> {
  return Object.freeze(command);
}

export interface RunOptions extends Io {
  readonly signal: AbortSignal;
}

/** Parses `argv` for `command` and runs it; returns the exit status. */
export async function runCommand<D extends FlagDecls>(command: Command<D>, argv: readonly string[], options: RunOptions): Promise<number> {
  const name = `orch ${command.name}`;
  const set = new FlagSet({ command: name, description: command.description, flags: command.flags, ...(command.positionals ? { positionals: command.positionals } : {}) });
  const usageError = (message: string): number => {
    options.stderr.write(`${name}: ${message}\nRun '${name} --help' for usage.\n`);
    return 2;
  };

  let flags: ParsedFlags<D>;
  let featureGates: FeatureGates;
  try {
    const outcome = set.parse(argv);
    if (outcome.help) {
      options.stdout.write(set.usage(usageWidth(options.stdout)));
      return 0;
    }
    flags = outcome.flags;
    featureGates = featureGatesOf(flags.values);
  } catch (err) {
    if (err instanceof FlagError || err instanceof FeatureGateError) return usageError(err.message);
    throw err;
  }
  const problem = command.validate?.(flags);
  if (problem !== undefined) return usageError(problem);
  for (const warning of [...flags.warnings, ...featureGates.warnings]) options.stderr.write(`${name}: warning: ${warning}\n`);

  try {
    const status = await command.run(flags, { command: name, stdout: options.stdout, stderr: options.stderr, featureGates, signal: options.signal });
    return status ?? 0;
  } catch (err) {
    options.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/** The feature gates a command line's `--feature-gates` asks for (the defaults when it has none). */
export function featureGatesOf(values: Readonly<Record<string, unknown>>): FeatureGates {
  const gates = values["feature-gates"];
  return isStringMap(gates) ? parseFeatureGates(gates) : defaultFeatureGates();
}

// Like upstream, wrap help to the terminal when there is one.
function usageWidth(out: Output): { width?: number } {
  const columns = (out as { isTTY?: boolean; columns?: number }).isTTY ? (out as { columns?: number }).columns : undefined;
  return columns !== undefined && columns >= 60 ? { width: columns } : {};
}

function isStringMap(value: unknown): value is Readonly<Record<string, string>> {
  return typeof value === "object" && value !== null && Object.values(value).every((v) => typeof v === "string");
}
