// `orch <command>`: dispatches to the subcommands, one file each in this folder.
// Contract: usage errors exit 2, --help and --version exit 0; otherwise the
// subcommand's run() decides. bin/orch.js calls main() with process.argv.

import { setMaxListeners } from "node:events";
import { orchVersion, type FlagDecls } from "../component/index.js";
import { command as apiserver } from "./apiserver.js";
import { command as cloudControllerManager } from "./cloud-controller-manager.js";
import { runCommand, type Command, type Io } from "./command.js";
import { command as controllerManager } from "./controller-manager.js";
import { command as etcd } from "./etcd.js";
import { command as images } from "./images.js";
import { command as nodeagent } from "./nodeagent.js";
import { command as proxy } from "./proxy.js";
import { command as scheduler } from "./scheduler.js";
import { command as server } from "./server.js";
import { command as simulateNodes } from "./simulate-nodes.js";
import { command as snapshot } from "./snapshot.js";

// Each subcommand keeps its own flag types; the list only needs what they share.
type AnyCommand = Command<FlagDecls>;

/** The subcommands in the order `orch --help` lists them. */
export const commands: readonly AnyCommand[] = [
  server,
  apiserver,
  controllerManager,
  scheduler,
  nodeagent,
  proxy,
  cloudControllerManager,
  images,
  snapshot,
  etcd,
  simulateNodes,
];

export function usage(): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 3;
  return [
    `orch is a cluster orchestrator (v${orchVersion()}).`,
    "",
    "Usage:",
    "  orch <command> [flags]",
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    "",
    "Flags:",
    "  -h, --help      help for orch",
    "      --version   print the version and exit",
    "",
    "Run 'orch <command> --help' for the flags of a command.",
    "",
  ].join("\n");
}

/** Runs `orch` with `argv` (the words after `orch`); resolves to the exit status. */
export async function main(argv: readonly string[], io: Io = process): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h" || (first === "help" && rest.length === 0)) {
    io.stdout.write(usage());
    return 0;
  }
  if (first === "--version") {
    io.stdout.write(`orch v${orchVersion()}\n`);
    return 0;
  }
  // `orch help apiserver` is `orch apiserver --help`.
  const [name, args] = first === "help" ? [rest[0] as string, ["--help"]] : [first, rest];
  const command = commands.find((c) => c.name === name);
  if (command === undefined) {
    const what = name.startsWith("-") ? `unknown flag: ${name}` : `unknown command "${name}"`;
    io.stderr.write(`orch: ${what}\nRun 'orch --help' for usage.\n`);
    return 2;
  }
  return withSignals((signal) => runCommand(command, args, { stdout: io.stdout, stderr: io.stderr, signal }));
}

/**
 * Runs `body` with a signal aborted by the first SIGINT or SIGTERM; a second
 * one exits at once with status 1, as upstream components do.
 */
async function withSignals(body: (signal: AbortSignal) => Promise<number>): Promise<number> {
  const controller = new AbortController();
  // Every part of a process (orch server runs five) listens for the one stop signal: no leak to warn about.
  setMaxListeners(0, controller.signal);
  const onSignal = (): void => {
    if (controller.signal.aborted) process.exit(1);
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    return await body(controller.signal);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
