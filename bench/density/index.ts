// bench/density: how many pods one control plane schedules and runs, as
// upstream's density test (test/e2e/scalability/density.go, and its SLOs:
// mutating and GET calls p99 ≤ 1 s, LIST p99 ≤ 5 s) and kwok's figures
// measure it: N simulated nodes (`orch simulate-nodes`, a child process),
// then M pods in Deployments of 500; from the first Deployment created to all
// M pods Ready. Per control plane: pods scheduled+running per second, CPU
// seconds (over the run) and peak RSS of the API server, controller manager
// and scheduler (and etcd, and the simulator), the lease write rate, and the
// p50/p99 of the API server's own request latency histogram per verb class,
// and the p99 of its SLI histogram (what the SLOs are measured on).
// Columns: orch on lmdb, orch on a 3-member etcd (loopback, /usr/bin/etcd),
// `orch server` on lmdb (what users run: API server, controllers and
// scheduler in one process; its CPU and RSS rows are the whole process, in
// the API server and control-plane rows), `orch server` on a 3-member etcd
// (one machine's share of an HA control plane, docs/ha.md), and upstream's v1.23 kube-apiserver + kube-controller-manager +
// kube-scheduler on a 3-member etcd (from /work/upstream/bin or
// $UPSTREAM_BIN; skipped with the reason when absent). Upstream's clients run
// with --kube-api-qps=1000 --kube-api-burst=1000 (their defaults, 20 and 50
// QPS, would cap pod creation and binding; orch's clients have no such
// limit). Targets (issue 20): orch ≥ upstream on pods/s, ≤ 0.5× its memory.
// Anchors: kwok reports ~1,000 nodes and 10,000s of pods on one machine with
// a 4-core kind cluster in ~1-2 minutes (20-100 pods/s bound by the
// scheduler's default 50 QPS); upstream's density SLO is pod startup p99 ≤ 5 s
// at 30 pods per node.
// Usage: node dist/bench/density/index.js [--json] [--quick] [--nodes=N] [--pods=M] [--runs=N]
//   [--only=orch-lmdb,orch-etcd,orch-server,orch-server-etcd,upstream] [--timeout=SECONDS] [--timeline[=SECONDS]]
// --timeline prints, per column, the pipeline's stages per interval (default
// 5 s): pods created, bound, reported Running, and Ready in the Deployments'
// status, each as a rate and a running total (bench/density/timeline.ts).
// Environment: ORCH_NODE_ARGS (node flags for orch's processes), ORCH_SERVER_ARGS
// (more `orch server` flags), BENCH_LOG_DIR (keep the processes' logs there).

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadavg } from "node:os";
import { RestClient, loadKubeconfig } from "../../src/client/index.js";
import { DEPLOYMENTS, NAMESPACES, NODES } from "../../src/api/resource-refs.js";
import { benchLogFile, startOrch, type OrchProcess } from "../../test/support/orch-process.js";
import { startEtcdCluster, etcdSkipReason, type EtcdCluster } from "../../src/storage/etcd/testing/etcd-server.js";
import { startUpstream } from "../support/upstream-apiserver.js";
import { parseArgs, printReport, type Metric, type Report } from "../support/report.js";
import { latencyQuantiles, parseMetrics, sumCounter, type Samples } from "./metrics-text.js";
import { Timeline, watchPods } from "./timeline.js";

const BIN = fileURLToPath(new URL("../../../bin/orch.js", import.meta.url));
const UPSTREAM_BIN = process.env["UPSTREAM_BIN"] ?? "/work/upstream/bin";
const PODS_PER_DEPLOYMENT = 500;

const M = (name: string, unit: string, better: "higher" | "lower", target?: number): Metric => ({ name, unit, better, ...(target === undefined ? {} : { target }) });
const METRICS: Metric[] = [
  M("pods scheduled+running/s", "pods/s", "higher"),
  M("time to all pods Ready", "s", "lower"),
  M("nodes registered/s (simulator)", "nodes/s", "higher"),
  M("API server CPU", "s", "lower"),
  M("controller manager CPU", "s", "lower"),
  M("scheduler CPU", "s", "lower"),
  M("etcd CPU (3 members)", "s", "lower"),
  M("simulator CPU", "s", "lower"),
  M("API server peak RSS", "MiB", "lower"),
  M("controller manager peak RSS", "MiB", "lower"),
  M("scheduler peak RSS", "MiB", "lower"),
  M("control plane peak RSS (API server + controllers + scheduler)", "MiB", "lower"),
  M("etcd peak RSS (3 members)", "MiB", "lower"),
  // orch on lmdb carries its store in the API server's process; upstream's is etcd: the row that compares like with like.
  M("control plane + store peak RSS", "MiB", "lower"),
  M("simulator peak RSS", "MiB", "lower"),
  M("lease writes/s", "writes/s", "higher"),
  // The SLOs are measured on the SLI (apiserver_request_sli_duration_seconds: without the time waiting in
  // the server's queues and calling webhooks; upstream v1.23's apiserver_request_slo_duration_seconds
  // leaves out webhooks only); the whole duration's quantiles beside them.
  M("mutating SLI p99", "ms", "lower", 1000),
  M("GET SLI p99", "ms", "lower", 1000),
  M("LIST SLI p99", "ms", "lower", 5000),
  M("mutating p50", "ms", "lower"),
  M("mutating p99", "ms", "lower"),
  M("GET p50", "ms", "lower"),
  M("GET p99", "ms", "lower"),
  M("LIST p50", "ms", "lower"),
  M("LIST p99", "ms", "lower"),
  M("load average (1 min) at start", "", "lower"),
];

type Column = "orch-lmdb" | "orch-etcd" | "orch-server" | "orch-server-etcd" | "upstream";

// ---- processes ----

interface Proc {
  readonly pid: number;
  output(): string;
  stop(): Promise<void>;
}

function spawnProc(command: string, args: string[], ready?: RegExp, timeoutMs = 120_000): Promise<Proc> {
  const child: ChildProcess = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const logFile = child.pid === undefined ? undefined : benchLogFile(`${basename(command)}-${args.find((a) => !a.startsWith("-") && a !== BIN) ?? "proc"}-${child.pid}.log`);
  const keep = (c: Buffer) => {
    logFile?.write(c);
    output = (output + c.toString()).slice(-20_000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const proc: Proc = {
    pid: child.pid!,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
  if (ready === undefined) return Promise.resolve(proc);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} ${args[1] ?? ""} not ready in ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const check = () => {
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve(proc);
      }
    };
    child.stdout!.on("data", check);
    child.stderr!.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} ${args[1] ?? ""} exited with ${code}:\n${output}`));
    });
  });
}

/** ORCH_NODE_ARGS passes node flags to orch's children (e.g. --cpu-prof when profiling), as test/support/orch-process.ts does. */
const NODE_ARGS = (process.env["ORCH_NODE_ARGS"] ?? "").split(" ").filter((a) => a !== "");
/** ORCH_SERVER_ARGS adds flags to the orch-server columns' `orch server` (e.g. --control-loops-thread=false to compare). */
const SERVER_ARGS = (process.env["ORCH_SERVER_ARGS"] ?? "").split(" ").filter((a) => a !== "");

const orchComponent = (name: string, kubeconfig: string) =>
  spawnProc(process.execPath, [...NODE_ARGS, BIN, name, `--kubeconfig=${kubeconfig}`, "--secure-port=0", "--leader-elect=false"], /: serving \/healthz.* on https:\/\/\S+/);

function upstreamComponent(name: string, kubeconfig: string): Promise<Proc> {
  const auth = [`--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`];
  return spawnProc(join(UPSTREAM_BIN, name), [...auth, "--secure-port=0", "--leader-elect=false", "--kube-api-qps=1000", "--kube-api-burst=1000", "--v=0"]);
}

/** CPU seconds (user + system) of a process so far. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

function peakRssMiB(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
  } catch {
    return NaN;
  }
}

/** The pids of the etcd members serving from these data folders. */
function etcdPids(cluster: EtcdCluster): number[] {
  const dirs = cluster.members.map((m) => m.dataDir);
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmd.includes("etcd") && dirs.some((d) => cmd.includes(d))) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

// ---- one control plane ----

interface ControlPlane {
  kubeconfig: string;
  apiserver: number;
  /** Undefined where they run inside the API server's process (`orch server`). */
  controllers: number | undefined;
  scheduler: number | undefined;
  etcd: number[];
  stop(): Promise<void>;
}

async function startControlPlane(column: Column): Promise<ControlPlane> {
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  try {
    let etcd: EtcdCluster | undefined;
    if (column !== "orch-lmdb" && column !== "orch-server") {
      etcd = await startEtcdCluster(3);
      stops.push(() => etcd!.stop());
    }
    const onEtcd = etcd ? ["--storage-backend=etcd", `--etcd-servers=${etcd.endpoints.join(",")}`] : [];
    if (column === "orch-server" || column === "orch-server-etcd") {
      // No node agent (the simulator's nodes run the pods) and no service proxy: the control plane alone.
      const server = await startOrch("server", ["--disable-agent", "--disable-proxy", ...onEtcd, ...SERVER_ARGS], { readyTimeoutMs: 120_000 });
      stops.push(() => server.stop());
      return { kubeconfig: server.kubeconfig, apiserver: server.pid, controllers: undefined, scheduler: undefined, etcd: etcd ? etcdPids(etcd) : [], stop: stopAll };
    }
    let api: OrchProcess;
    if (column === "upstream") api = await startUpstream(join(UPSTREAM_BIN, "kube-apiserver"), etcd!.endpoints);
    else api = await startOrch("apiserver", onEtcd, { readyTimeoutMs: 120_000 });
    stops.push(() => api.stop());
    const start = column === "upstream" ? upstreamComponent : orchComponent;
    const controllers = await start(column === "upstream" ? "kube-controller-manager" : "controller-manager", api.kubeconfig);
    stops.push(() => controllers.stop());
    const scheduler = await start(column === "upstream" ? "kube-scheduler" : "scheduler", api.kubeconfig);
    stops.push(() => scheduler.stop());
    return { kubeconfig: api.kubeconfig, apiserver: api.pid, controllers: controllers.pid, scheduler: scheduler.pid, etcd: etcd ? etcdPids(etcd) : [], stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

async function until(what: string, timeoutMs: number, probe: () => Promise<boolean>, everyMs = 1000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function scrape(client: RestClient): Promise<Samples> {
  const res = await client.request({ method: "GET", path: "/metrics", headers: { accept: "text/plain" } });
  return parseMetrics(res.body.toString("utf8"));
}

function deployment(name: string, replicas: number) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "density" },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "pause", image: "registry.k8s.io/pause:3.9", resources: { requests: { cpu: "10m", memory: "10Mi" } } }] },
      },
    },
  };
}

/** Lease creations and renewals between two scrapes (the simulator's first heartbeat creates, later ones update). */
function leaseWrites(after: Samples, before: Samples): number {
  let n = 0;
  for (const verb of ["POST", "PUT"]) n += sumCounter(after, "apiserver_request_total", { verb, resource: "leases" }) - sumCounter(before, "apiserver_request_total", { verb, resource: "leases" });
  return n;
}

async function runOnce(column: Column, nodes: number, pods: number, timeoutMs: number, log: (line: string) => void, timelineMs = 0): Promise<Record<string, number>> {
  const load = loadavg()[0]!;
  const cp = await startControlPlane(column);
  let sim: Proc | undefined;
  const client = new RestClient(loadKubeconfig(cp.kubeconfig));
  try {
    const simStart = Date.now();
    sim = await spawnProc(process.execPath, [BIN, "simulate-nodes", `--count=${nodes}`, `--kubeconfig=${cp.kubeconfig}`, "--concurrency=64", "--node-concurrency=128"], /ready: \d+ nodes simulated/, timeoutMs);
    const registerSeconds = (Date.now() - simStart) / 1000;
    await until(`${nodes} nodes listed`, 60_000, async () => (await client.list(NODES)).items.length >= nodes);
    // The controllers work (the default namespace's service account exists) before the clock starts.
    await until("the controller manager to act", 60_000, async () => {
      await client.get({ group: "", version: "v1", resource: "serviceaccounts", namespaced: true }, { namespace: "default", name: "default" });
      return true;
    });
    await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "density" } });
    await until("the density namespace's service account", 60_000, async () => {
      await client.get({ group: "", version: "v1", resource: "serviceaccounts", namespaced: true }, { namespace: "density", name: "default" });
      return true;
    });
    log(`${column}: ${nodes} nodes registered in ${registerSeconds.toFixed(1)} s; creating ${pods} pods`);
    const procs = { api: cp.apiserver, cm: cp.controllers, sched: cp.scheduler, sim: sim.pid };
    const cpu0 = Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, pid === undefined ? NaN : cpuSeconds(pid)]));
    const etcdCpu0 = cp.etcd.reduce((s, pid) => s + cpuSeconds(pid), 0);
    const before = await scrape(client);
    const started = performance.now();
    const timeline = timelineMs > 0 ? new Timeline(started) : undefined;
    const stopWatch = timeline ? await watchPods(client, "density", timeline) : undefined;
    for (let i = 0, left = pods; left > 0; i++, left -= PODS_PER_DEPLOYMENT) {
      await client.create(DEPLOYMENTS, deployment(`d${i}`, Math.min(PODS_PER_DEPLOYMENT, left)));
    }
    let lastReport = 0;
    await until(`${pods} pods Ready`, timeoutMs, async () => {
      const list = await client.list<{ status?: { readyReplicas?: number } } & { apiVersion: string; kind: string; metadata: object }>(DEPLOYMENTS, { namespace: "density" });
      const ready = list.items.reduce((s, d) => s + (d.status?.readyReplicas ?? 0), 0);
      timeline?.observeReady(ready, performance.now());
      if (Date.now() - lastReport > 15_000) {
        lastReport = Date.now();
        log(`${column}: ${ready}/${pods} pods Ready after ${((performance.now() - started) / 1000).toFixed(0)} s`);
      }
      return ready >= pods;
    });
    const seconds = (performance.now() - started) / 1000;
    if (timeline) {
      stopWatch?.();
      log(`${column}: pipeline timeline (pods per second per stage, total in parentheses):\n${timeline.format(timelineMs, seconds * 1000)}`);
    }
    const after = await scrape(client);
    const cpu = (k: keyof typeof procs) => (procs[k] === undefined ? NaN : cpuSeconds(procs[k]!) - cpu0[k]!);
    const rss = (pid: number | undefined) => (pid === undefined ? NaN : peakRssMiB(pid));
    const out: Record<string, number> = {
      "pods scheduled+running/s": pods / seconds,
      "time to all pods Ready": seconds,
      "nodes registered/s (simulator)": nodes / registerSeconds,
      "API server CPU": cpu("api"),
      "controller manager CPU": cpu("cm"),
      "scheduler CPU": cpu("sched"),
      "simulator CPU": cpu("sim"),
      "API server peak RSS": peakRssMiB(cp.apiserver),
      "controller manager peak RSS": rss(cp.controllers),
      "scheduler peak RSS": rss(cp.scheduler),
      "simulator peak RSS": peakRssMiB(sim.pid),
      "lease writes/s": leaseWrites(after, before) / seconds,
      "load average (1 min) at start": load,
    };
    out["control plane peak RSS (API server + controllers + scheduler)"] = [cp.apiserver, cp.controllers, cp.scheduler].reduce((sum: number, pid) => sum + (pid === undefined ? 0 : peakRssMiB(pid)), 0);
    if (cp.etcd.length > 0) {
      out["etcd CPU (3 members)"] = cp.etcd.reduce((s, pid) => s + cpuSeconds(pid), 0) - etcdCpu0;
      out["etcd peak RSS (3 members)"] = cp.etcd.reduce((s, pid) => s + peakRssMiB(pid), 0);
    }
    out["control plane + store peak RSS"] = out["control plane peak RSS (API server + controllers + scheduler)"]! + (out["etcd peak RSS (3 members)"] ?? 0);
    for (const [cls, verbs] of [["mutating", ["POST", "PUT", "PATCH", "DELETE"]], ["GET", ["GET"]], ["LIST", ["LIST"]]] as const) {
      const q = latencyQuantiles(before, after, "apiserver_request_duration_seconds", [...verbs], [50, 99]);
      out[`${cls} p50`] = q[0]! * 1000;
      out[`${cls} p99`] = q[1]! * 1000;
      const sli = column === "upstream" ? "apiserver_request_slo_duration_seconds" : "apiserver_request_sli_duration_seconds";
      out[`${cls} SLI p99`] = latencyQuantiles(before, after, sli, [...verbs], [99])[0]! * 1000;
    }
    log(`${column}: ${pods} pods Ready in ${seconds.toFixed(1)} s (${(pods / seconds).toFixed(1)} pods/s)`);
    return out;
  } finally {
    client.close();
    await sim?.stop();
    await cp.stop();
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const { json, runs, only } = parseArgs(argv);
  const quick = argv.includes("--quick");
  const num = (name: string, dflt: number) => {
    const a = argv.find((x) => x.startsWith(`--${name}=`));
    return a === undefined ? dflt : Number(a.slice(name.length + 3));
  };
  const nodes = num("nodes", quick ? 100 : 1000);
  const pods = num("pods", quick ? 3000 : 30_000);
  const timeoutMs = num("timeout", 1800) * 1000;
  const tl = argv.find((a) => a === "--timeline" || a.startsWith("--timeline="));
  const timelineMs = tl === undefined ? 0 : tl === "--timeline" ? 5000 : Number(tl.slice("--timeline=".length)) * 1000;
  if (tl !== undefined && !(timelineMs > 0)) throw new Error(`--timeline: want a positive number of seconds, got ${JSON.stringify(tl)}`);
  const runsHere = argv.some((a) => a.startsWith("--runs=")) ? runs : 1;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const columns: Column[] = [];
  const skips: string[] = [];
  const want = (c: Column) => only.length === 0 || only.includes(c);
  if (want("orch-lmdb")) columns.push("orch-lmdb");
  if (want("orch-server")) columns.push("orch-server");
  const etcdSkip = etcdSkipReason();
  for (const c of ["orch-etcd", "orch-server-etcd", "upstream"] as const) {
    if (!want(c)) continue;
    if (etcdSkip !== undefined) skips.push(`${c}: ${etcdSkip}`);
    else if (c === "upstream" && !["kube-apiserver", "kube-controller-manager", "kube-scheduler"].every((b) => existsSync(join(UPSTREAM_BIN, b)))) {
      skips.push(`upstream: kube-apiserver, kube-controller-manager and kube-scheduler not all in ${UPSTREAM_BIN} (set UPSTREAM_BIN; build with ../shared/tools/upstream/build.sh)`);
    } else columns.push(c);
  }
  for (const s of skips) log(`skipped ${s}`);
  const samples: Record<string, Record<string, number[]>> = {};
  for (let run = 0; run < runsHere; run++) {
    for (const column of columns) {
      try {
        const out = await runOnce(column, nodes, pods, timeoutMs, log, timelineMs);
        for (const [k, v] of Object.entries(out)) if (!Number.isNaN(v)) ((samples[column] ??= {})[k] ??= []).push(v);
      } catch (err) {
        log(`${column}: run ${run + 1} failed: ${(err as Error).message.split("\n").slice(0, 3).join(" | ")}`);
      }
    }
  }
  const report: Report = {
    title: `bench/density: ${nodes.toLocaleString("en-US")} simulated nodes, ${pods.toLocaleString("en-US")} pods in Deployments of ${PODS_PER_DEPLOYMENT}`,
    comparedWith: `upstream v1.23 (kube-apiserver + kube-controller-manager + kube-scheduler, 3-member etcd) under the same simulated load; upstream's SLOs (mutating and GET p99 ≤ 1 s, LIST p99 ≤ 5 s); targets: orch ≥ upstream on pods/s, ≤ 0.5× its memory${skips.length ? `; skipped: ${skips.join("; ")}` : ""}`,
    runs: runsHere,
    metrics: METRICS,
    samples,
    ...(samples["upstream"] ? { ratioTo: "upstream" } : {}),
  };
  printReport(report, json);
}

await main();
