// The closed-loop load of the API benchmarks: N streams on one HTTP/2
// connection sending one request shape back to back for a while. The
// generator is h2load (nghttp2's HTTP/2 load tester, Debian's nghttp2-client)
// when it is installed: written in C, it spends a small fraction of what a
// Node.js client spends per request, and on a 2-core machine the generator's
// CPU is taken from the server it measures (the node:http2 client cost
// 250-400 µs per request, about as much as orch's server). Without h2load, or
// with --client=node, this process's node:http2 client does the same loop.
// Both columns of a run always use the same generator.

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { OrchProcess } from "../../test/support/orch-process.js";
import { closedLoop, type BenchClient } from "./http2-client.js";
import { cpuUs } from "./report.js";

export type Generator = { kind: "h2load"; version: string } | { kind: "node"; why: string };

/** h2load unless `--client=node` or it is not installed (then why not). */
export function chooseGenerator(argv: string[]): Generator {
  if (argv.includes("--client=node")) return { kind: "node", why: "--client=node" };
  try {
    const version = execFileSync("h2load", ["--version"], { encoding: "utf8" }).trim();
    return { kind: "h2load", version };
  } catch {
    if (argv.includes("--client=h2load")) throw new Error("--client=h2load: h2load is not installed (apt-get install nghttp2-client)");
    return { kind: "node", why: "h2load is not installed (apt-get install nghttp2-client)" };
  }
}

export function describeGenerator(g: Generator): string {
  return g.kind === "h2load" ? `load generator ${g.version} (C, one connection)` : `load generator: this process's node:http2 client (${g.why})`;
}

export interface LoadSpec {
  method: "GET" | "POST";
  path: string;
  /** POST: the JSON body sent by every request (unique names come from metadata.generateName). */
  body?: unknown;
  streams: number;
  ms: number;
  /** Every answer must have this status. */
  status: number;
}

export interface LoadResult {
  /** Answered requests per second. */
  rate: number;
  answered: number;
  /** The server's CPU (all its threads) per answered request, µs. */
  cpuPerRequest: number;
}

export async function runLoad(g: Generator, server: OrchProcess, c: BenchClient, spec: LoadSpec): Promise<LoadResult> {
  const before = cpuUs(server.pid);
  const { rate, answered } = g.kind === "h2load" ? await h2load(server, c.token, spec) : await nodeLoad(c, spec);
  return { rate, answered, cpuPerRequest: (cpuUs(server.pid) - before) / Math.max(1, answered) };
}

async function nodeLoad(c: BenchClient, spec: LoadSpec): Promise<{ rate: number; answered: number }> {
  let answered = 0;
  const rate = await closedLoop(spec.streams, spec.ms, async () => {
    const r = await c.request(spec.method, spec.path, spec.body);
    if (r.status !== spec.status) throw new Error(`${spec.method} ${spec.path}: ${r.status} ${r.body.toString().slice(0, 200)}`);
    answered++;
  });
  return { rate, answered };
}

async function h2load(server: OrchProcess, token: string, spec: LoadSpec): Promise<{ rate: number; answered: number }> {
  const dir = mkdtempSync(join(tmpdir(), "bench-h2load-"));
  try {
    const args = ["-c", "1", "-m", String(spec.streams), "-D", `${spec.ms}ms`, "-H", `authorization: Bearer ${token}`];
    if (spec.body !== undefined) {
      const file = join(dir, "body.json");
      writeFileSync(file, JSON.stringify(spec.body));
      args.push("-d", file, "-H", "content-type: application/json");
    }
    // h2load sends GET, or POST when given -d.
    if ((spec.body === undefined) !== (spec.method === "GET")) throw new Error(`h2load: ${spec.method} needs ${spec.method === "GET" ? "no body" : "a body"}`);
    const out = await output("h2load", [...args, `${server.url}${spec.path}`]);
    return parseH2load(out, spec.status);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** h2load's summary: answered requests per second; throws when a request failed or had another status class. */
export function parseH2load(out: string, status: number): { rate: number; answered: number } {
  const finished = /finished in ([\d.]+)(m?s)/.exec(out);
  const requests = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  if (finished === null || requests === null || codes === null) throw new Error(`h2load: unexpected output:\n${out}`);
  const seconds = Number(finished[1]) / (finished[2] === "ms" ? 1000 : 1);
  const [failed, errored] = [Number(requests[5]), Number(requests[6])];
  const byClass = codes.slice(1).map(Number);
  const wanted = Math.floor(status / 100) - 2;
  const others = byClass.reduce((sum, n, i) => (i === wanted ? sum : sum + n), 0);
  const answered = byClass[wanted]!;
  // A stray answer of another class (a generated name that clashed, a 429) is reported and left out of the
  // rate; more than one in a thousand means the phase measured something else, and it fails.
  const problem = `h2load: ${failed} failed, ${errored} errored, ${codes[0]} (wanted ${status})`;
  // h2load's "failed" already counts the answers of a non-2xx/3xx status and the errored ones: count each stray once.
  const strays = Math.max(failed, others + errored);
  if (strays > answered / 1000) throw new Error(problem);
  if (strays > 0) process.stderr.write(`${problem}: left out of the rate\n`);
  return { rate: answered / seconds, answered };
}

function output(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited with ${code}:\n${out}`))));
  });
}
