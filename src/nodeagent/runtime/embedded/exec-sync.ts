// ExecSync in the embedded runtime: the command runs inside the container's
// namespaces (or beside it, without them) with its environment; its output is
// capped as upstream's, and a timeout kills it.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { status as Code } from "@grpc/grpc-js";
import type * as cri from "../../cri/types.js";
import { RuntimeError } from "./errors.js";
import { signalNumber } from "./host.js";
import { execArgv, type Isolation } from "./launcher.js";
import type { ContainerRecord } from "./records.js";

/** Upstream caps ExecSync output at 16 MiB per stream (CVE-2022-1708). */
const EXEC_OUTPUT_CAP = 16 * 1024 * 1024;

export function execSync(c: ContainerRecord, isolation: Isolation, req: cri.ExecSyncRequest): Promise<cri.ExecSyncResponse> {
  if (c.state !== "CONTAINER_RUNNING") throw new RuntimeError(Code.FAILED_PRECONDITION, `container ${c.id} is not running (${c.state})`);
  if (req.cmd.length === 0) throw new RuntimeError(Code.INVALID_ARGUMENT, "exec requires a command");
  const argv = execArgv(c.pid, isolation, req.cmd);
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      stdio: ["ignore", "pipe", "pipe"],
      env: Object.fromEntries(c.process.env.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)])),
      ...(isolation.namespaces ? {} : { cwd: existsSync(c.process.cwd) ? c.process.cwd : "/" }),
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const collect = (into: Buffer[]) => {
      let size = 0;
      return (chunk: Buffer): void => {
        if (size >= EXEC_OUTPUT_CAP) return;
        into.push(chunk.subarray(0, EXEC_OUTPUT_CAP - size));
        size += chunk.length;
      };
    };
    child.stdout!.on("data", collect(out));
    child.stderr!.on("data", collect(err));
    let timedOut = false;
    const timer = req.timeout > 0 ? setTimeout(() => { timedOut = true; child.kill("SIGKILL"); }, req.timeout * 1000) : undefined;
    child.once("error", (e) => { clearTimeout(timer); reject(new RuntimeError(Code.UNKNOWN, `exec in container ${c.id}: ${e.message}`)); });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (timedOut) return reject(new RuntimeError(Code.DEADLINE_EXCEEDED, `command ${JSON.stringify(req.cmd.join(" "))} timed out after ${req.timeout}s`));
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err), exitCode: code ?? 128 + signalNumber(signal) });
    });
  });
}
