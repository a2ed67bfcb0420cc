// Runs the real, unmodified kubectl binaries against a test server, with a
// private cache folder (the /usr/bin/kubectl dispatcher caches discovery under
// ~/.kube otherwise; KUBECTL.md).

import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const KUBECTL_133 = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33";

export function kubectlPath(version = "1.33"): string | undefined {
  const path = `/usr/lib/google-cloud-sdk/bin/kubectl.${version}`;
  return existsSync(path) ? path : undefined;
}

/** Why kubectl tests cannot run here (printed as the skip reason), or undefined. */
export function kubectlSkipReason(): string | undefined {
  if (kubectlPath() !== undefined) return undefined;
  const reason = `kubectl not found at ${KUBECTL_133}`;
  if (process.env.CI === "true") throw new Error(`${reason}; CI=true, so kubectl tests fail instead of skipping`);
  return reason;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class Kubectl {
  readonly #base: string[];
  readonly #binary: string;

  constructor(kubeconfig: string, version = "1.33") {
    this.#binary = kubectlPath(version) ?? KUBECTL_133;
    this.#base = ["--kubeconfig", kubeconfig, "--cache-dir", mkdtempSync(join(tmpdir(), "orch-kubectl-cache-"))];
  }

  run(args: string[], options: { input?: string; timeoutMs?: number; env?: Record<string, string> } = {}): Promise<KubectlResult> {
    return new Promise((resolve) => {
      const env = options.env === undefined ? undefined : { ...process.env, ...options.env };
      // maxBuffer: an API server's /metrics passes execFile's default of 1 MiB after a few hundred kinds of request.
      const child = execFile(this.#binary, [...this.#base, ...args], { timeout: options.timeoutMs ?? 30_000, maxBuffer: 64 << 20, ...(env ? { env } : {}) }, (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof (err as { code?: unknown }).code === "number" ? ((err as { code: number }).code) : 1;
        resolve({ code, stdout, stderr });
      });
      if (options.input !== undefined) child.stdin!.end(options.input);
    });
  }

  /** Run and insist on success; returns stdout. */
  async ok(...args: string[]): Promise<string> {
    const r = await this.run(args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")} failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /** Start a long-running kubectl (get -w, wait) and collect its output. */
  spawn(args: string[]): { child: ChildProcess; output(): string; exited: Promise<number> } {
    const child = spawn(this.#binary, [...this.#base, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number>((r) => child.once("exit", (code) => r(code ?? -1)));
    return { child, output: () => out, exited };
  }
}
