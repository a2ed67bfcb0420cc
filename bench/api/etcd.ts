// bench/api/etcd: what one consistent GET and one CREATE of a pod cost on etcd,
// orch against upstream's kube-apiserver, each on its own etcd 3.4: requests
// per second (64 streams), the API server's CPU per request, etcd's CPU per
// request (its process_cpu_seconds_total) and etcd calls per request (its
// grpc_server_handled_total, every method counted). The CPU and call rows
// barely move with the machine's load, unlike req/s: they are the ones to read
// on a shared machine. Columns alternate within each run.
// Requests come from h2load when installed (bench/support/load.ts; --client=node for this process's client).
// Column etcd-plain is orch with --etcd-compression=false: what compressing values costs and saves.
// Usage: node dist/bench/api/etcd.js [--json] [--runs=N] [--only=etcd,etcd-plain,upstream] [--phase-ms=3000] [--upstream=PATH] [--client=node|h2load]
// ORCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the orch server.

import { readFileSync } from "node:fs";
import { startOrch, type OrchProcess } from "../../test/support/orch-process.js";
import { benchClient, ensureNamespace, fillPods, generatedPod, type BenchClient } from "../support/http2-client.js";
import { chooseGenerator, describeGenerator, runLoad, type Generator, type LoadSpec } from "../support/load.js";
import { parseArgs, printReport, type Metric, type Report } from "../support/report.js";
import { startUpstream, upstreamBinary } from "../support/upstream-apiserver.js";

const METRICS: Metric[] = [
  { name: "GET/s (consistent, 64 streams)", unit: "req/s", better: "higher" },
  { name: "CREATE/s (64 streams)", unit: "req/s", better: "higher" },
  { name: "server CPU per GET", unit: "µs", better: "lower" },
  { name: "server CPU per CREATE", unit: "µs", better: "lower" },
  { name: "etcd CPU per GET", unit: "µs", better: "lower" },
  { name: "etcd CPU per CREATE", unit: "µs", better: "lower" },
  { name: "etcd calls per GET", unit: "calls", better: "lower" },
  { name: "etcd calls per CREATE", unit: "calls", better: "lower" },
];

let PHASE_MS = 3000;
let GENERATOR: Generator = { kind: "node", why: "not chosen yet" };

/** etcd's own counters: CPU µs so far and unary gRPC calls handled so far (watch streams left out). */
async function etcdCounters(endpoint: string): Promise<{ cpuUs: number; calls: number }> {
  const text = await (await fetch(`${endpoint}/metrics`)).text();
  let cpu = 0;
  let calls = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("process_cpu_seconds_total ")) cpu = Number(line.split(" ")[1]) * 1e6;
    else if (line.startsWith("grpc_server_handled_total{") && line.includes('grpc_type="unary"')) calls += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return { cpuUs: cpu, calls };
}

async function phase(server: OrchProcess, etcd: string, c: BenchClient, spec: Omit<LoadSpec, "ms" | "streams">): Promise<{ rate: number; cpu: number; etcdCpu: number; calls: number }> {
  const etcdBefore = await etcdCounters(etcd);
  const { rate, answered, cpuPerRequest } = await runLoad(GENERATOR, server, c, { ...spec, streams: 64, ms: PHASE_MS });
  const etcdAfter = await etcdCounters(etcd);
  const n = Math.max(1, answered);
  // The /metrics read itself is not a gRPC call; a few background calls (leases, compaction) are counted with the requests.
  return { rate, cpu: cpuPerRequest, etcdCpu: (etcdAfter.cpuUs - etcdBefore.cpuUs) / n, calls: (etcdAfter.calls - etcdBefore.calls) / n };
}

async function measure(server: OrchProcess, etcd: string): Promise<Record<string, number>> {
  const c: BenchClient = benchClient(server);
  try {
    await ensureNamespace(c, "bench");
    await fillPods(c, "bench", 100, "p");
    const get = await phase(server, etcd, c, { method: "GET", path: "/api/v1/namespaces/bench/pods/p-7", status: 200 });
    await ensureNamespace(c, "creates");
    const create = await phase(server, etcd, c, { method: "POST", path: "/api/v1/namespaces/creates/pods", body: generatedPod("c-"), status: 201 });
    const values = [get.rate, create.rate, get.cpu, create.cpu, get.etcdCpu, create.etcdCpu, get.calls, create.calls];
    return Object.fromEntries(METRICS.map((m, i) => [m.name, values[i]!]));
  } finally {
    c.close();
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const args = parseArgs(argv);
  const phaseArg = argv.find((a) => a.startsWith("--phase-ms="));
  if (phaseArg !== undefined) PHASE_MS = Number(phaseArg.slice("--phase-ms=".length));
  GENERATOR = chooseGenerator(argv);
  const upstream = upstreamBinary(argv);
  const columns = ["etcd", "etcd-plain", "upstream"].filter((b) => args.only.length === 0 || args.only.includes(b));
  if ("skip" in upstream && columns.includes("upstream")) {
    process.stderr.write(`bench/api/etcd: no upstream column: ${upstream.skip}\n`);
    columns.splice(columns.indexOf("upstream"), 1);
  }
  const report: Report = {
    title: `bench/api/etcd: per-request cost of a consistent GET and a CREATE on etcd (${PHASE_MS} ms per phase)`,
    comparedWith: `${columns.includes("upstream") ? "upstream kube-apiserver on its own etcd 3.4 (AlwaysAllow, token auth)" : "nothing (no upstream column)"}; ${describeGenerator(GENERATOR)}`,
    runs: args.runs,
    metrics: METRICS,
    samples: Object.fromEntries(columns.map((c) => [c, {}])),
    ...(columns.includes("upstream") ? { ratioTo: "upstream" } : {}),
  };
  const { startEtcd } = await import("../../src/storage/etcd/testing/etcd-server.js");
  for (let run = 0; run < args.runs; run++) {
    for (const column of columns) {
      const etcd = await startEtcd({ extraArgs: ["--quota-backend-bytes=8589934592"] });
      const server =
        column === "upstream"
          ? await startUpstream((upstream as { path: string }).path, etcd.endpoints)
          : await startOrch("apiserver", ["--storage-backend=etcd", `--etcd-servers=${etcd.endpoints.join(",")}`, `--etcd-compression=${column === "etcd"}`]);
      try {
        for (const [k, v] of Object.entries(await measure(server, etcd.endpoints[0]!))) (report.samples[column]![k] ??= []).push(v);
      } finally {
        await server.stop();
        await etcd.stop();
      }
      if (!args.json) process.stderr.write(`${column}: run ${run + 1}/${args.runs} done (load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")})\n`);
    }
  }
  printReport(report, args.json);
}

await main();
