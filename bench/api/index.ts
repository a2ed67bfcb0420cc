// bench/api: the API server end to end, lmdb and etcd side by side. The
// server runs as a real `orch apiserver` child process; the client is on the
// same machine over HTTP/2 (one TLS session, many streams), as kubectl and
// our controllers talk to it. Compares the two storage backends; targets are
// the (≥ 3,000 GET/s, ≥ 1,500 CREATE/s on lmdb, fan-out p99 < 100 ms,
// 50k-pod LIST < 2 s).
// With $KUBE_APISERVER_BIN (or --upstream=PATH) set, upstream's kube-apiserver
// on its own etcd is a third column, measured in the same run (the columns
// alternate within each run) and every row gets a ratio against it.
// The request-rate rows are driven by h2load when installed (bench/support/load.ts: a C
// generator leaves the 2 cores to the server; --client=node uses this process's client).
// Usage: node dist/bench/api/index.js [--json] [--runs=N] [--only=lmdb,etcd,upstream] [--big=50000] [--phase-ms=3000] [--upstream=PATH] [--fanout-only] [--client=node|h2load]

import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { startOrch, type OrchProcess } from "../../test/support/orch-process.js";
import { benchClient as client, benchPod as pod, ensureNamespace, fillPods as fill, generatedPod, type BenchClient as Client } from "../support/http2-client.js";
import { chooseGenerator, describeGenerator, runLoad, type Generator, type LoadSpec } from "../support/load.js";
import { cpuUs, parseArgs, percentile, printReport, type Metric, type Report } from "../support/report.js";
import { startUpstream, upstreamBinary } from "../support/upstream-apiserver.js";

const METRICS: Metric[] = [
  { name: "GET/s (one pod, 64 streams)", unit: "req/s", better: "higher", target: 3000 },
  { name: "GET rv=0/s (one pod, 64 streams)", unit: "req/s", better: "higher" },
  { name: "LIST of 500 pods/s", unit: "req/s", better: "higher" },
  { name: "CREATE/s (64 streams)", unit: "req/s", better: "higher", target: 1500 },
  { name: "watch fan-out p50 (1,000 watchers, 100 events/s)", unit: "ms", better: "lower" },
  { name: "watch fan-out p99 (1,000 watchers, 100 events/s)", unit: "ms", better: "lower", target: 100 },
  { name: "watch fan-out p99 (200 watchers, 100 events in 1 s)", unit: "ms", better: "lower" },
  { name: "watch fan-out p99 (2,000 watchers, 100 events in 1 s)", unit: "ms", better: "lower" },
  { name: "LIST of all pods (big), time", unit: "ms", better: "lower", target: 2000 },
  { name: "LIST of all pods (big), server peak RSS", unit: "MiB", better: "lower" },
  // CPU seconds the server process spent per request (all its threads): unlike req/s, barely moved by
  // other processes on the machine, and fair between a single-threaded and a multi-threaded server.
  { name: "server CPU per GET (64 streams)", unit: "µs", better: "lower" },
  { name: "server CPU per CREATE (64 streams)", unit: "µs", better: "lower" },
];

let PHASE_MS = 3000;
let GENERATOR: Generator = { kind: "node", why: "not chosen yet" };
/** --fanout-only: only the fan-out rows (for profiling the watch path). */
let FANOUT_ONLY = false;

function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

async function measure(orch: OrchProcess, pid: number, big: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const c = client(orch);
  try {
    if (FANOUT_ONLY) return { ...(await fanOuts(orch, c)) };
    await ensureNamespace(c, "bench");
    await fill(c, "bench", 500, "p");
    const load = (spec: Omit<LoadSpec, "ms">) => runLoad(GENERATOR, orch, c, { ...spec, ms: PHASE_MS });
    const get = await load({ method: "GET", path: "/api/v1/namespaces/bench/pods/p-7", streams: 64, status: 200 });
    [out[METRICS[0]!.name], out[METRICS[10]!.name]] = [get.rate, get.cpuPerRequest];
    out[METRICS[1]!.name] = (await load({ method: "GET", path: "/api/v1/namespaces/bench/pods/p-7?resourceVersion=0", streams: 64, status: 200 })).rate;
    out[METRICS[2]!.name] = (await load({ method: "GET", path: "/api/v1/namespaces/bench/pods", streams: 8, status: 200 })).rate;
    await ensureNamespace(c, "creates");
    const create = await load({ method: "POST", path: "/api/v1/namespaces/creates/pods", body: generatedPod("c-"), streams: 64, status: 201 });
    [out[METRICS[3]!.name], out[METRICS[11]!.name]] = [create.rate, create.cpuPerRequest];
    Object.assign(out, await fanOuts(orch, c));

    await ensureNamespace(c, "big");
    await fill(c, "big", big, "b");
    const t = performance.now();
    const r = await c.request("GET", "/api/v1/namespaces/big/pods");
    out[METRICS[8]!.name] = performance.now() - t;
    if (r.status !== 200 || JSON.parse(r.body.toString()).items.length !== big) throw new Error("big LIST incomplete");
    out[METRICS[9]!.name] = peakRssMiB(pid);
  } finally {
    c.close();
  }
  return out;
}

async function fanOuts(orch: OrchProcess, c: Client): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const latencies = await fanOut(orch, c, 1000, 100, 3);
  out[METRICS[4]!.name] = percentile(latencies, 50);
  out[METRICS[5]!.name] = percentile(latencies, 99);
  out[METRICS[6]!.name] = percentile(await fanOut(orch, c, 200, 100, 1, "fan200"), 99);
  out[METRICS[7]!.name] = percentile(await fanOut(orch, c, 2000, 100, 1, "fan2000"), 99);
  return out;
}

const NL = 0x0a;
const QUOTE = 0x22;
const ADDED = Buffer.from('{"type":"ADDED"');
const SENT = Buffer.from('"sent":"');

/** `watchers` watches (over 4 sessions, or one per 250 watchers); `rate` events/s for `seconds`; each event carries its send time in an annotation. */
async function fanOut(orch: OrchProcess, c: Client, watchers: number, rate: number, seconds: number, ns = "fanout"): Promise<number[]> {
  await ensureNamespace(c, ns);
  // Upstream (Go's HTTP/2 server) allows 250 streams per connection: at least one session per 250 watchers, 4 at the least.
  const sessions = Array.from({ length: Math.max(4, Math.ceil(watchers / 250)) }, () => client(orch));
  const config = readFileSync(orch.kubeconfig, "utf8");
  const token = /token: (\S+)/.exec(config)![1]!;
  const latencies: number[] = [];
  const total = rate * seconds;
  let received = 0;
  let allDone: () => void = () => {};
  const done = new Promise<void>((r) => (allDone = r));
  const list = JSON.parse((await c.request("GET", `/api/v1/namespaces/${ns}/pods`)).body.toString());
  const streams = Array.from({ length: watchers }, (_, i) => {
    const s = sessions[i % sessions.length]!.session.request({
      ":path": `/api/v1/namespaces/${ns}/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}`,
      authorization: `Bearer ${token}`,
    });
    // The client must not be the bottleneck (it shares the cores with the server): bytes are scanned, not
    // decoded or parsed; the receipt time is taken once per chunk, as it arrives, before any of its work.
    let rest: Buffer | undefined;
    s.on("data", (d: Buffer) => {
      const at = performance.timeOrigin + performance.now();
      const buf = rest === undefined ? d : Buffer.concat([rest, d]);
      let from = 0;
      let nl: number;
      while ((nl = buf.indexOf(NL, from)) >= 0) {
        // Only ADDED events carry a send time (bookmarks and others are skipped unread).
        if (buf.compare(ADDED, 0, ADDED.length, from, from + ADDED.length) === 0) {
          const t = buf.indexOf(SENT, from) + SENT.length;
          latencies.push(at - Number(buf.toString("latin1", t, buf.indexOf(QUOTE, t))));
          if (++received === watchers * total) allDone();
        }
        from = nl + 1;
      }
      rest = from === buf.length ? undefined : buf.subarray(from);
    });
    return s;
  });
  await new Promise((r) => setTimeout(r, 500));
  // CPU of the load generator (this process) and of the server over the phase, per delivery: if the client's
  // share approaches the server's on two shared cores, the client is what the latencies measure.
  const clientBefore = process.cpuUsage();
  const failures: string[] = [];
  const serverBefore = cpuUs(orch.pid);
  for (let i = 0; i < total; i++) {
    const p = pod(`f-${i}`, i) as { metadata: { annotations: Record<string, string> } };
    p.metadata.annotations = { sent: String(performance.timeOrigin + performance.now()) };
    // Not waited for (the rate is the point), but counted: an event lost because its create failed is not a slow watch.
    void c.request("POST", `/api/v1/namespaces/${ns}/pods`, p).then(
      (r) => void (r.status !== 201 && failures.push(`${r.status} ${r.body.toString().slice(0, 120)}`)),
      (err: unknown) => void failures.push(String(err)),
    );
    await new Promise((r) => setTimeout(r, 1000 / rate));
  }
  await Promise.race([done, new Promise((r) => setTimeout(r, 20_000))]);
  const clientCpu = process.cpuUsage(clientBefore);
  const perDelivery = (us: number) => (us / Math.max(1, received)).toFixed(1);
  process.stderr.write(
    `fan-out (${watchers} watchers): CPU per delivery: client ${perDelivery(clientCpu.user + clientCpu.system)} µs, server ${perDelivery(cpuUs(orch.pid) - serverBefore)} µs (load ${loadavg()[0]!.toFixed(1)})\n`,
  );
  if (failures.length > 0) process.stderr.write(`fan-out (${watchers} watchers): ${failures.length} of ${total} creates failed, first: ${failures[0]}\n`);
  for (const s of streams) s.close();
  for (const s of sessions) s.close();
  // A delivery that never came counts as infinitely late: the percentiles show it instead of the run failing.
  if (received < watchers * total) process.stderr.write(`fan-out (${watchers} watchers): only ${received} of ${watchers * total} deliveries within 20 s\n`);
  for (let i = received; i < watchers * total; i++) latencies.push(Infinity);
  return latencies;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const args = parseArgs(argv);
  const bigArg = argv.find((a) => a.startsWith("--big="));
  const big = bigArg === undefined ? 50_000 : Number(bigArg.slice("--big=".length));
  const phaseArg = argv.find((a) => a.startsWith("--phase-ms="));
  FANOUT_ONLY = argv.includes("--fanout-only");
  if (phaseArg !== undefined) PHASE_MS = Number(phaseArg.slice("--phase-ms=".length));
  GENERATOR = chooseGenerator(argv);
  const upstream = upstreamBinary(argv);
  const columns = ["lmdb", "etcd", "upstream"].filter((b) => args.only.length === 0 || args.only.includes(b));
  if ("skip" in upstream && columns.includes("upstream")) {
    process.stderr.write(`bench/api: no upstream column: ${upstream.skip}\n`);
    columns.splice(columns.indexOf("upstream"), 1);
  }
  const report: Report = {
    title: `bench/api: the API server over HTTP/2, one client on the same machine (big LIST: ${big} pods; ${PHASE_MS} ms per phase)`,
    comparedWith:
      "the same server on etcd 3.4 (1 member on loopback) instead of the embedded lmdb store" +
      (columns.includes("upstream") ? ", and upstream kube-apiserver on its own etcd 3.4 (AlwaysAllow, token auth)" : "") +
      `; ${describeGenerator(GENERATOR)}`,
    runs: args.runs,
    metrics: METRICS,
    samples: {},
    ...(columns.includes("upstream") ? { ratioTo: "upstream" } : {}),
  };
  for (const column of columns) report.samples[column] = {};
  // Columns alternate within each run, so a change in the machine's load hits them alike.
  for (let run = 0; run < args.runs; run++) {
    for (const column of columns) {
      let etcd: { endpoints: string[]; stop(): Promise<void> } | undefined;
      if (column !== "lmdb") {
        const { startEtcd } = await import("../../src/storage/etcd/testing/etcd-server.js");
        etcd = await startEtcd({ extraArgs: ["--quota-backend-bytes=8589934592"] });
      }
      const server =
        column === "upstream"
          ? await startUpstream((upstream as { path: string }).path, etcd!.endpoints)
          : await startOrch("apiserver", column === "etcd" ? ["--storage-backend=etcd", `--etcd-servers=${etcd!.endpoints.join(",")}`] : []);
      try {
        for (const [k, v] of Object.entries(await measure(server, server.pid, big))) (report.samples[column]![k] ??= []).push(v);
      } finally {
        await server.stop();
        await etcd?.stop();
      }
      if (!args.json) process.stderr.write(`${column}: run ${run + 1}/${args.runs} done\n`);
    }
  }
  printReport(report, args.json);
}

await main();
