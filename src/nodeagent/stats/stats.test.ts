// The agent's statistics endpoints against a standalone agent on the embedded
// runtime (real cgroups, real /proc): a static pod whose container burns a
// little CPU and has an exec readiness probe and an emptyDir volume; then
// /stats/summary, /metrics/resource, the container metrics and
// /metrics/probes as the agent serves them. Plus the pure parts: PSI files
// and the exposition of a failed reading.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultConfig } from "../config/index.js";
import { startNodeAgent, type NodeAgent } from "../agent.js";
import { eventually } from "../testing/eventually.js";
import { parsePsi } from "./psi.js";
import { resourceMetrics } from "./exposition.js";
import { unifiedRoot } from "./host-stats.js";

const rootSkip = process.getuid?.() !== 0 ? "needs root (the embedded runtime's namespaces and cgroups)" : undefined;
const hostPsi = (() => {
  try {
    return parsePsi(readFileSync("/proc/pressure/cpu", "utf8")) !== undefined;
  } catch {
    return false;
  }
});

let agent: NodeAgent;
let root: string;
let http: Server;
let base: string;

before(async () => {
  if (rootSkip) return;
  root = mkdtempSync(join(tmpdir(), "nodeagent-stats-"));
  mkdirSync(join(root, "manifests"));
  writeFileSync(join(root, "manifests", "burn.yaml"), [
    "apiVersion: v1", "kind: Pod", "metadata:", "  name: burn", "  namespace: default", "spec:", "  terminationGracePeriodSeconds: 1",
    "  volumes:", "  - name: scratch", "    emptyDir: {}",
    "  containers:", "  - name: main", "    image: busybox",
    "    command: [sh, -c, 'head -c 65536 /dev/zero > /scratch/blob; while true; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.2; done']",
    "    volumeMounts:", "    - name: scratch", "      mountPath: /scratch",
    "    readinessProbe:", "      exec:", "        command: [\"true\"]", "      periodSeconds: 1", "",
  ].join("\n"));
  agent = await startNodeAgent({
    stopContainersOnExit: true,
    nodeName: "node-stats",
    config: { ...defaultConfig(), staticPodPath: join(root, "manifests") },
    rootDir: join(root, "agent"),
    podLogsDir: join(root, "logs"),
    tuning: { plegPeriodMs: 200, housekeepingMs: 300 },
  });
  http = createServer((req, res) => void agent.serveStats(req, res, new URL(req.url ?? "/", "http://x")).catch((err: Error) => res.writeHead(500).end(err.message)));
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const addr = http.address() as { port: number };
  base = `http://127.0.0.1:${addr.port}`;
});

after(async () => {
  if (rootSkip) return;
  http?.close();
  await agent?.stop();
  rmSync(root, { recursive: true, force: true, maxRetries: 10 });
});

async function get(path: string, method = "GET"): Promise<{ status: number; type: string; body: string }> {
  const res = await fetch(base + path, { method });
  return { status: res.status, type: res.headers.get("content-type") ?? "", body: await res.text() };
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

test("/stats/summary: node, pod, container and volume readings; psi where the host has pressure files", { skip: rootSkip }, async () => {
  const s = await eventually(async () => {
    const r = await get("/stats/summary");
    const doc = JSON.parse(r.body) as Json;
    const pod = (doc["pods"] as Json[]).find((p) => p["podRef"]?.name === "burn-node-stats");
    // The container writes the blob after it starts: wait for it as for the second CPU sample.
    const blob = (pod?.volume as Json[] | undefined)?.find((v) => v["name"] === "scratch")?.["usedBytes"] >= 65536;
    return pod?.containers?.[0]?.cpu?.usageNanoCores > 0 && blob ? { doc, pod, type: r.type } : undefined;
  }, 30_000, "the pod's second CPU sample and its emptyDir's blob");
  assert.equal(s.type, "application/json");
  const node = s.doc["node"] as Json;
  assert.equal(node["nodeName"], "node-stats");
  assert.ok(node["cpu"].usageCoreNanoSeconds > 0 && node["memory"].workingSetBytes > 0 && node["memory"].availableBytes > 0);
  assert.ok(node["fs"].capacityBytes > 0 && node["fs"].usedBytes > 0 && node["fs"].inodes > 0);
  assert.ok(node["rlimit"].maxpid > 0 && node["rlimit"].curproc > 0);
  if (hostPsi()) {
    for (const r of ["cpu", "memory"]) assert.deepEqual(Object.keys(node[r].psi).sort(), ["full", "some"], `node ${r} psi`);
    assert.deepEqual(Object.keys(node["io"].psi.some).sort(), ["avg10", "avg300", "avg60", "total"]);
  }
  const pod = s.pod as Json;
  assert.equal(pod.podRef.namespace, "default");
  assert.match(pod.podRef.uid, /^[0-9a-f-]+$/);
  const c = pod.containers[0] as Json;
  assert.equal(c["name"], "main");
  assert.ok(c["cpu"].usageCoreNanoSeconds > 0 && c["memory"].workingSetBytes > 0);
  assert.match(c["startTime"], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(pod.cpu.usageCoreNanoSeconds, c["cpu"].usageCoreNanoSeconds, "a one-container pod's CPU is its container's");
  const scratch = (pod.volume as Json[]).find((v) => v["name"] === "scratch");
  assert.ok(scratch !== undefined && scratch["usedBytes"] >= 65536, `the emptyDir holds the blob: ${JSON.stringify(pod.volume)}`);
  assert.ok(pod["ephemeral-storage"].usedBytes >= 65536);
  if (hostPsi() && unifiedRoot() !== undefined) {
    assert.deepEqual(Object.keys(c["cpu"].psi ?? {}).sort(), ["full", "some"], "the container's own pressure (its cgroup v2 group)");
    assert.ok(c["io"]?.psi?.some !== undefined);
    assert.ok(pod.cpu.psi?.some !== undefined, "the pod's group's pressure");
  }
});

test("/metrics/resource: exactly the seed's stable families and labels, stamped", { skip: rootSkip }, async () => {
  const r = await eventually(async () => {
    const x = await get("/metrics/resource");
    return /container_cpu_usage_seconds_total\{container="main"/.test(x.body) ? x : undefined;
  }, 30_000, "the container's series");
  assert.equal(r.status, 200);
  assert.match(r.type, /^text\/plain; version=0\.0\.4/);
  const families = [...r.body.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
  assert.deepEqual(families, [
    "container_cpu_usage_seconds_total counter",
    "container_memory_working_set_bytes gauge",
    "container_start_time_seconds gauge",
    "node_cpu_usage_seconds_total counter",
    "node_memory_working_set_bytes gauge",
    "pod_cpu_usage_seconds_total counter",
    "pod_memory_working_set_bytes gauge",
    "resource_scrape_error gauge",
  ]);
  assert.match(r.body, /^# HELP node_cpu_usage_seconds_total \[STABLE\] Cumulative cpu time consumed by the node in core-seconds$/m);
  assert.match(r.body, /^container_memory_working_set_bytes\{container="main",namespace="default",pod="burn-node-stats"\} \d+ \d{13}$/m);
  assert.match(r.body, /^pod_cpu_usage_seconds_total\{namespace="default",pod="burn-node-stats"\} [\d.e+-]+ \d{13}$/m);
  assert.match(r.body, /^node_memory_working_set_bytes \d+ \d{13}$/m);
  assert.match(r.body, /^resource_scrape_error 0 \d{13}$/m);
  assert.equal((await get("/metrics/resource", "HEAD")).body, "");
  assert.equal((await get("/metrics/resource", "POST")).status, 405);
});

test("container metrics (/metrics/cadvisor, /metrics/statscollector): usage and the pressure counters", { skip: rootSkip }, async () => {
  for (const path of ["/metrics/cadvisor", "/metrics/statscollector"]) {
    const r = await get(path);
    assert.equal(r.status, 200);
    assert.match(r.body, /^container_cpu_usage_seconds_total\{container="main",id="[0-9a-f]+",image="busybox",name="[0-9a-f]+",namespace="default",pod="burn-node-stats"\} /m);
    assert.match(r.body, /^machine_cpu_cores \d+ /m);
    for (const res of ["cpu", "memory", "io"]) for (const kind of ["waiting", "stalled"]) assert.match(r.body, new RegExp(`^# TYPE container_pressure_${res}_${kind}_seconds_total counter$`, "m"));
    if (hostPsi()) assert.match(r.body, /^container_pressure_cpu_waiting_seconds_total\{container="",id="\/",/m, "the node's (root) pressure");
    if (hostPsi() && unifiedRoot() !== undefined) assert.match(r.body, /^container_pressure_cpu_waiting_seconds_total\{container="main",/m, "the container's pressure");
  }
});

test("/metrics/probes: prober_probe_total and prober_probe_duration_seconds with upstream's labels", { skip: rootSkip }, async () => {
  const r = await eventually(async () => {
    const x = await get("/metrics/probes");
    return /prober_probe_total\{[^}]*result="successful"[^}]*\} [2-9]/.test(x.body) ? x : undefined;
  }, 30_000, "two successful readiness probes");
  assert.match(r.body, /^prober_probe_total\{probe_type="Readiness",result="successful",container="main",pod="burn-node-stats",namespace="default",pod_uid="[0-9a-f-]+"\} \d+$/m);
  assert.match(r.body, /^prober_probe_duration_seconds_bucket\{probe_type="Readiness",container="main",pod="burn-node-stats",namespace="default",le="\+Inf"\} \d+$/m);
  assert.match(r.body, /^# TYPE prober_probe_total counter$/m);
});

test("psi: both lines parsed; a cpu file without a full line reads full as zeros; no some line is no data", () => {
  assert.deepEqual(parsePsi("some avg10=1.50 avg60=0.25 avg300=0.00 total=1234\nfull avg10=0.00 avg60=0.00 avg300=0.10 total=99\n"), {
    some: { avg10: 1.5, avg60: 0.25, avg300: 0, total: 1234 },
    full: { avg10: 0, avg60: 0, avg300: 0.1, total: 99 },
  });
  assert.deepEqual(parsePsi("some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n")?.full, { avg10: 0, avg60: 0, avg300: 0, total: 0 });
  assert.equal(parsePsi(""), undefined);
});

test("/metrics/resource of a failed reading: resource_scrape_error 1 and no samples", () => {
  const text = resourceMetrics(undefined);
  assert.match(text, /^resource_scrape_error 1$/m);
  assert.equal(text.split("\n").filter((l) => l !== "" && !l.startsWith("#")).length, 1);
});
