// bench/server-cpu: the API server's own CPU time per request (user + system,
// read from /proc/PID/stat around each phase), for GET, CREATE, update (GET
// then PUT of the whole pod) and merge PATCH of a ~3 KB pod. Throughput
// figures (bench/api, bench/writes) swing 2–5× on a shared 2-core machine;
// CPU time spent per request barely moves with the load around it, so this is
// the figure to compare two builds with (run each build's copy in turns).
// Compares the lmdb store with etcd 3.4 (whose own CPU is not counted).
// Usage: node dist/bench/server-cpu/index.js [--json] [--runs=N] [--only=lmdb,etcd] [--requests=N]

import { readFileSync } from "node:fs";
import type { Backend } from "../../test/support/orch-backend.js";
import type { OrchProcess } from "../../test/support/orch-process.js";
import { sampleOnBackends } from "../support/backend-runs.js";
import { benchClient, benchPod, ensureNamespace, expectStatus, type BenchClient } from "../support/http2-client.js";
import { parseArgs, printReport, type Metric, type Report } from "../support/report.js";

const CONCURRENCY = 16;
const NS = "/api/v1/namespaces/cpu/pods";
/** Linux's USER_HZ: /proc reports CPU time in these ticks. */
const TICKS_PER_SECOND = 100;

const METRICS: Metric[] = [
  { name: "GET, server CPU per request", unit: "µs", better: "lower" },
  { name: "CREATE, server CPU per request", unit: "µs", better: "lower" },
  { name: "update (GET + PUT), server CPU per update", unit: "µs", better: "lower" },
  { name: "merge patch, server CPU per request", unit: "µs", better: "lower" },
];

/** Seconds of CPU the process has used so far (utime + stime). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** `count` operations from CONCURRENCY workers; the server's CPU µs per operation. */
async function phase(pid: number, count: number, op: (i: number, worker: number) => Promise<void>): Promise<number> {
  let next = 0;
  const before = cpuSeconds(pid);
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (next < count) await op(next++, worker);
    }),
  );
  return ((cpuSeconds(pid) - before) / count) * 1e6;
}

async function measure(orch: OrchProcess, requests: number): Promise<Record<string, number>> {
  const c: BenchClient = benchClient(orch);
  try {
    await ensureNamespace(c, "cpu");
    const create = (prefix: string) => async (i: number) => void expectStatus(await c.request("POST", NS, benchPod(`${prefix}-${i}`, i)), 201, "create");
    await phase(orch.pid, Math.min(500, requests), create("warm")); // JIT and first writes, not measured
    const out: Record<string, number> = {};
    out[METRICS[1]!.name] = await phase(orch.pid, requests, create("p"));
    out[METRICS[0]!.name] = await phase(orch.pid, requests * 3, async (i) => void expectStatus(await c.request("GET", `${NS}/p-${i % requests}`), 200, "get"));
    // One pod per worker, so updates do not conflict.
    out[METRICS[2]!.name] = await phase(orch.pid, requests, async (i, worker) => {
      const pod = JSON.parse(expectStatus(await c.request("GET", `${NS}/p-${worker}`), 200, "get").toString());
      pod.metadata.annotations.n = String(i);
      expectStatus(await c.request("PUT", `${NS}/p-${worker}`, pod), 200, "put");
    });
    out[METRICS[3]!.name] = await phase(orch.pid, requests, async (i, worker) =>
      void expectStatus(await c.request("PATCH", `${NS}/p-${worker}`, { metadata: { annotations: { m: String(i) } } }, "application/merge-patch+json"), 200, "patch"),
    );
    return out;
  } finally {
    c.close();
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const requestsArg = process.argv.find((a) => a.startsWith("--requests="));
  const requests = requestsArg === undefined ? 3000 : Number(requestsArg.slice("--requests=".length));
  if (!Number.isInteger(requests) || requests < CONCURRENCY) throw new Error(`--requests must be an integer ≥ ${CONCURRENCY}`);
  const report: Report = {
    title: `bench/server-cpu: the API server's CPU time per request (${requests} creates, updates and patches, ${requests * 3} GETs)`,
    comparedWith: "the same server on etcd 3.4 (only the API server's CPU counted) instead of the embedded lmdb store",
    runs: args.runs,
    metrics: METRICS,
    samples: {},
  };
  report.samples = await sampleOnBackends(
    (["lmdb", "etcd"] as Backend[]).filter((b) => args.only.length === 0 || args.only.includes(b)),
    args,
    (orch) => measure(orch, requests),
  );
  printReport(report, args.json);
}

await main();
