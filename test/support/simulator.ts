// `orch simulate-nodes` run as a child process by end-to-end tests.

import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../../bin/orch.js", import.meta.url));

export interface Simulator {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** `orch simulate-nodes ARGS` as a child process, once it says its nodes are ready. */
export async function startSimulator(args: string[]): Promise<Simulator> {
  const child = spawn(process.execPath, [BIN, "simulate-nodes", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`simulate-nodes not ready:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/ready: \d+ nodes simulated/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`simulate-nodes exited with ${code}:\n${output}`));
    });
  });
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await exited;
    },
  };
}
