// Runs the real `orch` command (bin/orch.js) as a child process for
// end-to-end tests: a fresh data folder, a port picked at run time, and the
// ready line parsed for the URL. Stopped with SIGTERM (then SIGKILL).

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../../bin/orch.js", import.meta.url));

export interface OrchProcess {
  url: string;
  pid: number;
  dataDir: string;
  kubeconfig: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startOrch(subcommand: string, args: string[] = [], options: { dataDir?: string; readyTimeoutMs?: number } = {}): Promise<OrchProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), `orch-e2e-${subcommand}-`));
  // ORCH_NODE_ARGS passes node flags to the child (e.g. --cpu-prof when profiling a benchmark).
  const nodeArgs = (process.env["ORCH_NODE_ARGS"] ?? "").split(" ").filter((a) => a !== "");
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, BIN, subcommand, "--data-dir", dataDir, "--secure-port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`orch ${subcommand} not ready after ${options.readyTimeoutMs ?? 20000} ms:\n${output}`)), options.readyTimeoutMs ?? 20000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /ready: serving (https:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`orch ${subcommand} exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    pid: child.pid!,
    dataDir,
    kubeconfig: join(dataDir, "admin.kubeconfig"),
    output: () => output,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise<void>((r) => child.once("exit", () => r()));
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
