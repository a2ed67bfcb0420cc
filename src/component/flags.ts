// Flag declarations and the one command-line parser every orch component uses.
// Contract: upstream (pflag) syntax — `--name=value`, `--name value`, bare
// booleans, declared one-letter shorthands (`-v=2`, `-v 2`, `-v2`), `--` ends
// flags; every usage error is a FlagError (exit status 2). The parsed result
// keeps each flag's value, default and whether it was set: /flagz prints it
// (seed 002, "Structured diagnostic responses").

import { formatDuration, parseDuration } from "../machinery/duration.js";

export type FlagKind = "string" | "bool" | "int" | "float" | "duration" | "strings" | "map";

export type StringMap = Readonly<Record<string, string>>;

/** One declared flag. `T` is the type of its parsed value. */
export interface FlagDecl<T = unknown> {
  readonly kind: FlagKind;
  readonly description: string;
  readonly default: T;
  /** One-letter shorthand (`v` gives `-v`); only declared shorthands parse. */
  readonly short?: string;
  /** Heading the flag is listed under in --help. */
  readonly section?: string;
  /** Redacted on /flagz (seed 002: "confidential values may be redacted"). */
  readonly sensitive?: boolean;
  /** Set: the flag still works, warns when used and is hidden from --help. */
  readonly deprecated?: string;
  /** Allowed values of a string flag, shown in --help. */
  readonly choices?: readonly string[];
  /** Type shown in --help (pflag's names by default: string, int, duration, strings...). */
  readonly typeName?: string;
  /** Extra check on each occurrence's parsed value; returns why it is wrong. */
  check?(value: T): string | undefined;
}

export type FlagDecls = Readonly<Record<string, FlagDecl>>;
export type FlagName<D extends FlagDecls> = Extract<keyof D, string>;
export type FlagValue<F> = F extends FlagDecl<infer T> ? T : never;
export type FlagValues<D extends FlagDecls> = { readonly [N in keyof D]: FlagValue<D[N]> };

/** What declares positional arguments; without it a command takes none. */
export interface PositionalSpec {
  readonly name: string;
  readonly description: string;
  readonly min?: number;
  readonly max?: number;
}

export type FlagErrorCode =
  | "unknown-flag"
  | "missing-value"
  | "invalid-value"
  | "bad-syntax"
  | "unexpected-argument";

/** A command-line usage error. Components exit with `exitCode` (2, as upstream does). */
export class FlagError extends Error {
  readonly code: FlagErrorCode;
  readonly flag: string | undefined;
  readonly value: string | undefined;
  readonly exitCode = 2;
  constructor(options: { code: FlagErrorCode; message: string; flag?: string; value?: string; cause?: unknown }) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "FlagError";
    this.code = options.code;
    this.flag = options.flag;
    this.value = options.value;
  }
}

// ---- declaring flags -------------------------------------------------------

interface CommonOptions {
  description: string;
  short?: string;
  section?: string;
  sensitive?: boolean;
  deprecated?: string;
  typeName?: string;
}

interface CheckOption<T> {
  check?: (value: T) => string | undefined;
}

function declare<T>(
  kind: FlagKind,
  options: CommonOptions & { choices?: readonly string[] },
  dflt: T,
  check?: (value: T) => string | undefined,
): FlagDecl<T> {
  // Copy only the declaration fields, so builder-only options (min, max) stay out of it.
  const decl: { -readonly [K in keyof FlagDecl<T>]: FlagDecl<T>[K] } = { kind, description: options.description, default: dflt };
  if (options.short !== undefined) decl.short = options.short;
  if (options.section !== undefined) decl.section = options.section;
  if (options.sensitive !== undefined) decl.sensitive = options.sensitive;
  if (options.deprecated !== undefined) decl.deprecated = options.deprecated;
  if (options.typeName !== undefined) decl.typeName = options.typeName;
  if (options.choices !== undefined) decl.choices = Object.freeze([...options.choices]);
  if (check !== undefined) decl.check = check;
  return Object.freeze(decl);
}

/** Builders for flag declarations: `{ "data-dir": flag.string({ default: "./.orch", description }) }`. */
export const flag = {
  string(options: CommonOptions & CheckOption<string> & { default?: string }): FlagDecl<string> {
    return declare("string", options, options.default ?? "", options.check);
  },
  /** A string flag limited to `choices`; its value type is the union of them. */
  oneOf<C extends string>(options: CommonOptions & { choices: readonly C[]; default: C }): FlagDecl<C> {
    const choices: readonly string[] = options.choices;
    return declare<C>("string", options, options.default, (v) =>
      choices.includes(v) ? undefined : `must be one of ${choices.join(", ")}`,
    );
  },
  bool(options: CommonOptions & { default?: boolean }): FlagDecl<boolean> {
    return declare("bool", options, options.default ?? false);
  },
  int(options: CommonOptions & CheckOption<number> & { default?: number; min?: number; max?: number }): FlagDecl<number> {
    const { min, max, check } = options;
    return declare("int", options, options.default ?? 0, (v) => {
      if (min !== undefined && v < min) return `must be at least ${min}`;
      if (max !== undefined && v > max) return `must be at most ${max}`;
      return check?.(v);
    });
  },
  float(options: CommonOptions & CheckOption<number> & { default?: number }): FlagDecl<number> {
    return declare("float", options, options.default ?? 0, options.check);
  },
  /** Value in milliseconds; the default may be written Go-style ("5m"). */
  duration(options: CommonOptions & CheckOption<number> & { default?: string | number }): FlagDecl<number> {
    const d = options.default ?? 0;
    return declare("duration", options, typeof d === "string" ? parseDuration(d) : d, options.check);
  },
  /** Repeatable and comma-separated: `--x=a,b --x c` gives [a, b, c]. */
  strings(options: CommonOptions & CheckOption<readonly string[]> & { default?: readonly string[] }): FlagDecl<readonly string[]> {
    return declare("strings", options, Object.freeze([...(options.default ?? [])]), options.check);
  },
  /** `k=v,k2=v2`, repeatable; later keys override earlier ones. */
  map(options: CommonOptions & CheckOption<StringMap> & { default?: StringMap }): FlagDecl<StringMap> {
    return declare("map", options, Object.freeze({ ...(options.default ?? {}) }), options.check);
  },
} as const;

// ---- per-kind behaviour ----------------------------------------------------

interface KindOps {
  readonly typeName: string;
  /** Raw text of one occurrence to a value; throws an Error whose message says why not. */
  parse(raw: string): unknown;
  /** How a second occurrence combines with the first (lists append, maps merge); default: replace. */
  combine?(previous: unknown, next: unknown): unknown;
  /** Text form, as pflag's Value.String() prints it (and so /flagz). */
  format(value: unknown): string;
}

// strconv.ParseBool's spellings, which upstream flags and feature gates accept.
const TRUE_WORDS = new Set(["1", "t", "T", "true", "TRUE", "True"]);
const FALSE_WORDS = new Set(["0", "f", "F", "false", "FALSE", "False"]);

/** Parses a boolean the way Go's strconv.ParseBool does. */
export function parseBool(raw: string): boolean {
  if (TRUE_WORDS.has(raw)) return true;
  if (FALSE_WORDS.has(raw)) return false;
  throw new Error("not a boolean (true or false)");
}

const INT = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function splitList(raw: string): string[] {
  return raw.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

/** Parses `k=v,k2=v2` (spaces around items trimmed); throws an Error naming a malformed item. */
export function parseStringMap(raw: string): StringMap {
  const out: Record<string, string> = {};
  for (const item of splitList(raw)) {
    const eq = item.indexOf("=");
    const key = eq < 0 ? "" : item.slice(0, eq).trim();
    if (key === "") throw new Error(`"${item}" is not in key=value form`);
    out[key] = item.slice(eq + 1).trim();
  }
  return Object.freeze(out);
}

const KINDS: Readonly<Record<FlagKind, KindOps>> = {
  string: { typeName: "string", parse: (raw) => raw, format: (v) => String(v) },
  bool: { typeName: "", parse: parseBool, format: (v) => String(v) },
  int: {
    typeName: "int",
    parse(raw) {
      const n = Number(raw);
      if (!INT.test(raw) || !Number.isSafeInteger(n)) throw new Error("not an integer");
      return n;
    },
    format: (v) => String(v),
  },
  float: {
    typeName: "float",
    parse(raw) {
      if (!FLOAT.test(raw)) throw new Error("not a number");
      return Number(raw);
    },
    format: (v) => String(v),
  },
  duration: {
    typeName: "duration",
    parse: (raw) => parseDuration(raw),
    format: (v) => formatDuration(v as number),
  },
  strings: {
    typeName: "strings",
    parse: (raw) => Object.freeze(splitList(raw)),
    combine: (prev, next) => Object.freeze([...(prev as string[]), ...(next as string[])]),
    format: (v) => `[${(v as string[]).join(",")}]`,
  },
  map: {
    typeName: "mapStringString",
    parse: (raw) => parseStringMap(raw),
    combine: (prev, next) => Object.freeze({ ...(prev as StringMap), ...(next as StringMap) }),
    format: (v) =>
      Object.entries(v as StringMap)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, val]) => `${k}=${val}`)
        .join(","),
  },
};

/** The text form of a value of a flag of this kind, as --help and /flagz print it. */
export function formatFlagValue(kind: FlagKind, value: unknown): string {
  return KINDS[kind].format(value);
}

// ---- parse results ---------------------------------------------------------

/** One flag of a parsed command line, as /flagz lists it. */
export interface FlagEntry {
  readonly name: string;
  readonly kind: FlagKind;
  readonly description: string;
  readonly value: unknown;
  readonly default: unknown;
  /** True when the command line named the flag, even with its default value. */
  readonly set: boolean;
  readonly sensitive: boolean;
  /** `value` and `default` as text (pflag's Value.String()). */
  readonly text: string;
  readonly defaultText: string;
}

/** The flags of one parsed command line; immutable. */
export class ParsedFlags<D extends FlagDecls> {
  readonly values: FlagValues<D>;
  /** Positional arguments (only when the command declares them). */
  readonly args: readonly string[];
  /** Deprecation notices for flags that were used; the caller prints them. */
  readonly warnings: readonly string[];
  #decls: D;
  #set: ReadonlySet<string>;

  constructor(options: { decls: D; values: FlagValues<D>; set: ReadonlySet<string>; args: readonly string[]; warnings: readonly string[] }) {
    this.#decls = options.decls;
    this.values = Object.freeze({ ...options.values });
    this.#set = options.set;
    this.args = Object.freeze([...options.args]);
    this.warnings = Object.freeze([...options.warnings]);
  }

  get<N extends FlagName<D>>(name: N): FlagValues<D>[N] {
    return this.values[name];
  }

  /** Whether the command line named the flag (upstream's `flags.Changed`). */
  isSet(name: FlagName<D>): boolean {
    return this.#set.has(name);
  }

  /**
   * A copy whose flags not named on the command line take these values
   * instead of their declared defaults (defaults derived at run time, as
   * `orch server` derives a second server's from what the first one holds).
   */
  withDefaults(values: Partial<FlagValues<D>>): ParsedFlags<D> {
    const unset = Object.fromEntries(Object.entries(values).filter(([name]) => !this.#set.has(name)));
    return new ParsedFlags({ decls: this.#decls, values: { ...this.values, ...unset } as FlagValues<D>, set: this.#set, args: this.args, warnings: this.warnings });
  }

  /** Every declared flag, sorted by name, with value, default and whether it was set. */
  list(): readonly FlagEntry[] {
    return Object.keys(this.#decls).sort().map((name) => {
      const decl = this.#decls[name] as FlagDecl;
      const value = (this.values as Record<string, unknown>)[name];
      const ops = KINDS[decl.kind];
      return Object.freeze({
        name,
        kind: decl.kind,
        description: decl.description,
        value,
        default: decl.default,
        set: this.#set.has(name),
        sensitive: decl.sensitive === true,
        text: ops.format(value),
        defaultText: ops.format(decl.default),
      });
    });
  }
}

export type ParseOutcome<D extends FlagDecls> =
  | { readonly help: true }
  | { readonly help: false; readonly flags: ParsedFlags<D> };

export interface FlagSetOptions<D extends FlagDecls> {
  /** How errors and usage name the command, e.g. "orch apiserver". */
  readonly command: string;
  readonly description?: string;
  readonly flags: D;
  readonly positionals?: PositionalSpec;
}

const NAME = /^[a-z0-9][a-z0-9-]*$/;
/** --help wraps descriptions at this width unless told the terminal's. */
export const DEFAULT_USAGE_WIDTH = 120;

/** A command's declared flags: parses its argument list and prints its usage. */
export class FlagSet<D extends FlagDecls> {
  readonly command: string;
  #description: string;
  #decls: D;
  #byShort = new Map<string, string>();
  #positionals: PositionalSpec | undefined;

  constructor(options: FlagSetOptions<D>) {
    this.command = options.command;
    this.#description = options.description ?? "";
    this.#decls = options.flags;
    this.#positionals = options.positionals;
    // Declaration mistakes are programming errors: fail at startup, not at parse.
    for (const [name, decl] of Object.entries(this.#decls)) {
      if (!NAME.test(name) || name === "help") throw new Error(`${this.command}: bad flag name "${name}"`);
      if (decl.short !== undefined) {
        if (decl.short.length !== 1 || decl.short === "h" || this.#byShort.has(decl.short)) {
          throw new Error(`${this.command}: bad or duplicate shorthand "${decl.short}" for --${name}`);
        }
        this.#byShort.set(decl.short, name);
      }
    }
  }

  /** Parses `argv` (without the command words); throws FlagError on any usage error. */
  parse(argv: readonly string[]): ParseOutcome<D> {
    const values = new Map<string, unknown>();
    const set = new Set<string>();
    const args: string[] = [];
    const warnings: string[] = [];

    const apply = (name: string, raw: string): void => {
      const decl = this.#decls[name] as FlagDecl;
      const ops = KINDS[decl.kind];
      let value: unknown;
      try {
        value = ops.parse(raw);
        const problem = decl.check?.(value);
        if (problem !== undefined) throw new Error(problem);
      } catch (err) {
        throw new FlagError({
          code: "invalid-value",
          message: `invalid argument "${raw}" for "${this.#label(name)}" flag: ${(err as Error).message}`,
          flag: `--${name}`,
          value: raw,
          cause: err,
        });
      }
      // The first use replaces the default; later uses of lists and maps accumulate (pflag).
      values.set(name, set.has(name) && ops.combine ? ops.combine(values.get(name), value) : value);
      if (decl.deprecated !== undefined && !set.has(name)) {
        warnings.push(`Flag --${name} has been deprecated, ${decl.deprecated}`);
      }
      set.add(name);
    };

    for (let i = 0; i < argv.length; i++) {
      const arg = argv[i] as string;
      if (arg === "--") {
        args.push(...argv.slice(i + 1));
        break;
      }
      if (arg.startsWith("--")) {
        const body = arg.slice(2);
        const eq = body.indexOf("=");
        const name = eq < 0 ? body : body.slice(0, eq);
        if (name === "" || name.startsWith("-")) {
          throw new FlagError({ code: "bad-syntax", message: `bad flag syntax: ${arg}`, flag: arg });
        }
        if (name === "help") {
          if (eq < 0 || this.#helpValue(body.slice(eq + 1))) return { help: true };
          continue;
        }
        const decl = this.#decls[name];
        if (decl === undefined) {
          throw new FlagError({ code: "unknown-flag", message: `unknown flag: --${name}`, flag: `--${name}` });
        }
        if (eq >= 0) apply(name, body.slice(eq + 1));
        else if (decl.kind === "bool") apply(name, "true");
        // Like pflag, a value-taking flag consumes the next word whatever it looks like.
        else if (i + 1 < argv.length) apply(name, argv[++i] as string);
        else throw new FlagError({ code: "missing-value", message: `flag needs an argument: --${name}`, flag: `--${name}` });
        continue;
      }
      if (arg.startsWith("-") && arg.length > 1) {
        const short = arg[1] as string;
        const rest = arg.slice(2);
        if (short === "h" && rest === "") return { help: true };
        const name = this.#byShort.get(short);
        if (name === undefined) {
          throw new FlagError({ code: "unknown-flag", message: `unknown shorthand flag: '${short}' in ${arg}`, flag: `-${short}` });
        }
        const decl = this.#decls[name] as FlagDecl;
        if (rest.startsWith("=")) apply(name, rest.slice(1));
        else if (rest !== "") {
          // Combined shorthands (-abc) are not supported: with one-letter flags this rare, a typo is likelier.
          if (decl.kind === "bool") {
            throw new FlagError({ code: "unknown-flag", message: `unknown shorthand flag: '${rest[0]}' in ${arg}`, flag: arg });
          }
          apply(name, rest);
        } else if (decl.kind === "bool") apply(name, "true");
        else if (i + 1 < argv.length) apply(name, argv[++i] as string);
        else throw new FlagError({ code: "missing-value", message: `flag needs an argument: '${short}' in ${arg}`, flag: `-${short}` });
        continue;
      }
      args.push(arg);
    }

    this.#checkPositionals(args);
    const result: Record<string, unknown> = {};
    for (const [name, decl] of Object.entries(this.#decls)) {
      result[name] = values.has(name) ? values.get(name) : decl.default;
    }
    return {
      help: false,
      flags: new ParsedFlags({ decls: this.#decls, values: result as FlagValues<D>, set, args, warnings }),
    };
  }

  /** The --help text, generated from the declarations (pflag's layout, grouped by section). */
  usage(options: { width?: number } = {}): string {
    const totalWidth = options.width ?? DEFAULT_USAGE_WIDTH;
    const out: string[] = [];
    if (this.#description) out.push(this.#description, "");
    const positional = this.#positionals ? ` ${this.#positionals.name}...` : "";
    out.push("Usage:", `  ${this.command} [flags]${positional}`, "");
    if (this.#positionals) out.push("Arguments:", `  ${this.#positionals.name}   ${this.#positionals.description}`, "");

    // Sections in the order they are first declared; flags sorted by name within each.
    const sections = new Map<string, Array<[string, string]>>();
    for (const decl of Object.values(this.#decls)) sections.set(decl.section ?? "Flags", []);
    for (const name of Object.keys(this.#decls).sort()) {
      const decl = this.#decls[name] as FlagDecl;
      if (decl.deprecated === undefined) sections.get(decl.section ?? "Flags")?.push(this.#usageRow(name, decl));
    }
    for (const [section, rows] of sections) if (rows.length === 0) sections.delete(section);
    sections.set("Global flags", [["  -h, --help", `help for ${this.command}`]]);
    for (const [section, rows] of sections) {
      out.push(`${section}:`, "");
      const width = Math.max(...rows.map(([left]) => left.length)) + 3;
      for (const [left, text] of rows) out.push(left.padEnd(width) + wrap(text, width, totalWidth));
      out.push("");
    }
    return out.join("\n");
  }

  #usageRow(name: string, decl: FlagDecl): [string, string] {
    const ops = KINDS[decl.kind];
    const typeName = decl.typeName ?? ops.typeName;
    const left = `  ${decl.short ? `-${decl.short}, ` : "    "}--${name}${typeName ? ` ${typeName}` : ""}`;
    let text = decl.description;
    if (decl.choices) text += ` (one of ${decl.choices.join(", ")})`;
    const dflt = ops.format(decl.default);
    // pflag leaves out zero defaults ("", 0, false, [], no entries).
    if (!["", "0", "0s", "false", "[]"].includes(dflt)) {
      text += decl.kind === "string" ? ` (default "${dflt}")` : ` (default ${dflt})`;
    }
    return [left, text];
  }

  #label(name: string): string {
    const decl = this.#decls[name] as FlagDecl;
    return decl.short ? `-${decl.short}, --${name}` : `--${name}`;
  }

  #helpValue(raw: string): boolean {
    try {
      return parseBool(raw);
    } catch {
      throw new FlagError({ code: "invalid-value", message: `invalid argument "${raw}" for "-h, --help" flag: not a boolean`, flag: "--help", value: raw });
    }
  }

  #checkPositionals(args: readonly string[]): void {
    const spec = this.#positionals;
    if (!spec) {
      if (args.length > 0) {
        throw new FlagError({
          code: "unexpected-argument",
          message: `unexpected argument "${args[0]}": ${this.command} takes no arguments`,
          value: args[0] as string,
        });
      }
      return;
    }
    if (spec.min !== undefined && args.length < spec.min) {
      throw new FlagError({ code: "unexpected-argument", message: `${this.command} needs at least ${spec.min} ${spec.name} argument(s)` });
    }
    if (spec.max !== undefined && args.length > spec.max) {
      throw new FlagError({
        code: "unexpected-argument",
        message: `unexpected argument "${args[spec.max]}": ${this.command} takes at most ${spec.max} ${spec.name} argument(s)`,
        value: args[spec.max] as string,
      });
    }
  }
}

/** Word-wraps `text` to `width` columns, continuation lines indented to `indent`; keeps explicit newlines. */
function wrap(text: string, indent: number, width: number): string {
  const room = Math.max(width - indent, 40);
  const lines: string[] = [];
  for (const paragraph of text.split("\n")) {
    const lead = /^\s*/.exec(paragraph)?.[0] ?? "";
    let line = "";
    for (const word of paragraph.trim().split(/\s+/)) {
      if (line !== "" && line.length + 1 + word.length > room) {
        lines.push(line);
        line = lead + word;
      } else {
        line = line === "" ? lead + word : `${line} ${word}`;
      }
    }
    lines.push(line);
  }
  return lines.join(`\n${" ".repeat(indent)}`);
}
