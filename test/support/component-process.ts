// Runs an orch component other than the API server (controller-manager,
// proxy, cloud-controller-manager, ...) as a real child process on a port
// picked at run time, and reads its HTTPS URL from the line the component
// base logs when it serves. Stopped with SIGTERM (then SIGKILL).

import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../../bin/orch.js", import.meta.url));

export interface ComponentProcess {
  readonly url: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startComponent(subcommand: string, args: string[], options: { readyTimeoutMs?: number } = {}): Promise<ComponentProcess> {
  const child: ChildProcess = spawn(process.execPath, [BIN, subcommand, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`orch ${subcommand} not serving after ${options.readyTimeoutMs ?? 20000} ms:\n${output}`)), options.readyTimeoutMs ?? 20000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /: serving \/healthz.* on (https:\/\/\S+)/.exec(output);
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
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
