// bench/api: the API server end to end, lmdb and etcd side by side. The
// server runs as a real `orch apiserver` child process; the client is on the
// same machine over HTTP/2 (one TLS session, many streams), as kubectl and
// our controllers talk to it. Compares the two storage backends; targets are
// the (≥ 3,000 GET/s, ≥ 1,500 CREATE/s on lmdb, fan-out p99 < 100 ms,
// 50k-pod LIST < 2 s).
// Usage: node dist/bench/api/index.js [--json] [--runs=N] [--only=lmdb,etcd] [--big=50000]

import { readFileSync } from "node:fs";
import { startOrch, type OrchProcess } from "../../test/support/orch-process.js";
import { benchClient as client, benchPod as pod, closedLoop as loop, ensureNamespace, fillPods as fill, type BenchClient as Client } from "../support/http2-client.js";
import { parseArgs, percentile, printReport, type Metric, type Report } from "../support/report.js";

const METRICS: Metric[] = [
  { name: "GET/s (one pod, 64 streams)", unit: "req/s", better: "higher", target: 3000 },
  { name: "LIST of 500 pods/s", unit: "req/s", better: "higher" },
  { name: "CREATE/s (64 streams)", unit: "req/s", better: "higher", target: 1500 },
  { name: "watch fan-out p50 (1,000 watchers, 100 events/s)", unit: "ms", better: "lower" },
  { name: "watch fan-out p99 (1,000 watchers, 100 events/s)", unit: "ms", better: "lower", target: 100 },
  { name: "LIST of all pods (big), time", unit: "ms", better: "lower", target: 2000 },
  { name: "LIST of all pods (big), server peak RSS", unit: "MiB", better: "lower" },
];

const PHASE_MS = 3000;

function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

async function measure(orch: OrchProcess, pid: number, big: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const c = client(orch);
  try {
    await ensureNamespace(c, "bench");
    await fill(c, "bench", 500, "p");
    out[METRICS[0]!.name] = await loop(64, PHASE_MS, async () => {
      const r = await c.request("GET", "/api/v1/namespaces/bench/pods/p-7");
      if (r.status !== 200) throw new Error(`GET ${r.status}`);
    });
    out[METRICS[1]!.name] = await loop(8, PHASE_MS, async () => {
      const r = await c.request("GET", "/api/v1/namespaces/bench/pods");
      if (r.status !== 200) throw new Error(`LIST ${r.status}`);
    });
    await ensureNamespace(c, "creates");
    out[METRICS[2]!.name] = await loop(64, PHASE_MS, async (i) => {
      const r = await c.request("POST", "/api/v1/namespaces/creates/pods", pod(`c-${i}`, i));
      if (r.status !== 201) throw new Error(`CREATE ${r.status}: ${r.body.toString().slice(0, 200)}`);
    });
    const latencies = await fanOut(orch, c, 1000, 100, 3);
    out[METRICS[3]!.name] = percentile(latencies, 50);
    out[METRICS[4]!.name] = percentile(latencies, 99);

    await ensureNamespace(c, "big");
    await fill(c, "big", big, "b");
    const t = performance.now();
    const r = await c.request("GET", "/api/v1/namespaces/big/pods");
    out[METRICS[5]!.name] = performance.now() - t;
    if (r.status !== 200 || JSON.parse(r.body.toString()).items.length !== big) throw new Error("big LIST incomplete");
    out[METRICS[6]!.name] = peakRssMiB(pid);
  } finally {
    c.close();
  }
  return out;
}

/** `watchers` watches (over 4 sessions); `rate` events/s for `seconds`; each event carries its send time in an annotation. */
async function fanOut(orch: OrchProcess, c: Client, watchers: number, rate: number, seconds: number): Promise<number[]> {
  await ensureNamespace(c, "fanout");
  const sessions = Array.from({ length: 4 }, () => client(orch));
  const config = readFileSync(orch.kubeconfig, "utf8");
  const token = /token: (\S+)/.exec(config)![1]!;
  const latencies: number[] = [];
  const total = rate * seconds;
  let received = 0;
  let allDone: () => void = () => {};
  const done = new Promise<void>((r) => (allDone = r));
  const list = JSON.parse((await c.request("GET", "/api/v1/namespaces/fanout/pods")).body.toString());
  const streams = Array.from({ length: watchers }, (_, i) => {
    const s = sessions[i % sessions.length]!.session.request({
      ":path": `/api/v1/namespaces/fanout/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}`,
      authorization: `Bearer ${token}`,
    });
    let buf = "";
    s.setEncoding("utf8");
    s.on("data", (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        // The client must not be the bottleneck: find the send time without parsing the whole event.
        if (!line.startsWith('{"type":"ADDED"')) continue;
        const at = line.indexOf('"sent":"') + 8;
        latencies.push(performance.timeOrigin + performance.now() - Number(line.slice(at, line.indexOf('"', at))));
        if (++received === watchers * total) allDone();
      }
    });
    return s;
  });
  await new Promise((r) => setTimeout(r, 500));
  for (let i = 0; i < total; i++) {
    const p = pod(`f-${i}`, i) as { metadata: { annotations: Record<string, string> } };
    p.metadata.annotations = { sent: String(performance.timeOrigin + performance.now()) };
    void c.request("POST", "/api/v1/namespaces/fanout/pods", p);
    await new Promise((r) => setTimeout(r, 1000 / rate));
  }
  await Promise.race([done, new Promise((r) => setTimeout(r, 20_000))]);
  for (const s of streams) s.close();
  for (const s of sessions) s.close();
  if (received < watchers * total) throw new Error(`fan-out: only ${received} of ${watchers * total} deliveries`);
  return latencies;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const bigArg = process.argv.find((a) => a.startsWith("--big="));
  const big = bigArg === undefined ? 50_000 : Number(bigArg.slice("--big=".length));
  const report: Report = {
    title: `bench/api: the API server over HTTP/2, one client on the same machine (big LIST: ${big} pods)`,
    comparedWith: "the same server on etcd 3.4 (Debian etcd-server, 1 member on loopback) instead of the embedded lmdb store",
    runs: args.runs,
    metrics: METRICS,
    samples: {},
  };
  for (const backend of ["lmdb", "etcd"].filter((b) => args.only.length === 0 || args.only.includes(b))) {
    const samples: Record<string, number[]> = {};
    for (let run = 0; run < args.runs; run++) {
      let etcd: { endpoints: string[]; stop(): Promise<void> } | undefined;
      if (backend === "etcd") {
        const { startEtcd } = await import("../../src/storage/etcd/testing/etcd-server.js");
        etcd = await startEtcd({ extraArgs: ["--quota-backend-bytes=8589934592"] });
      }
      const orch = await startOrch("apiserver", backend === "etcd" ? ["--storage-backend=etcd", `--etcd-servers=${etcd!.endpoints.join(",")}`] : []);
      try {
        for (const [k, v] of Object.entries(await measure(orch, orch.pid, big))) (samples[k] ??= []).push(v);
      } finally {
        await orch.stop();
        await etcd?.stop();
      }
      if (!args.json) process.stderr.write(`${backend}: run ${run + 1}/${args.runs} done\n`);
    }
    report.samples[backend] = samples;
  }
  printReport(report, args.json);
}

await main();
