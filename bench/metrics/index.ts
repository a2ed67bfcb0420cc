// bench/metrics: what metrics cost. (1) Scraping /metrics with 10,000 series
// (6,000 counter, 3,000 gauge and 1,000 histogram series with the API
// server's label shapes) over HTTPS from a component server, per exposition
// format. (2) The request-path overhead of the API server's request metrics:
// GET/s of one object over HTTP/2 with the metrics on and off (target: under
// 5% fewer GET/s). Compared with: the same server with request metrics off;
// text format as the baseline of the scrape formats.
// Usage: node dist/bench/metrics/index.js [--json] [--runs=N]

import { connect, type ClientHttp2Session } from "node:http2";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../../src/api/index.js";
import { ensureCredentials, issueClientCert } from "../../src/component/pki.js";
import { startApiServer, type RunningApiServer } from "../../src/apiserver/server.js";
import type { Incoming, Outgoing } from "../../src/apiserver/http/respond.js";
import { ApiServerMetrics, countResponseBytes } from "../../src/apiserver/request-metrics.js";
import { parsePath } from "../../src/apiserver/routing.js";
import type { Storage } from "../../src/storage/index.js";
import { parseFeatureGates, startComponentServer } from "../../src/component/index.js";
import { MetricsRegistry } from "../../src/component/metrics/index.js";
import { httpsGet } from "../../src/component/testing/https-get.js";
import { median, parseArgs, printReport, type Metric, type Report } from "../support/report.js";

const SCRAPE: Metric[] = [
  { name: "scrape /metrics, 10,000 series, text 0.0.4", unit: "ms", better: "lower" },
  { name: "scrape /metrics, 10,000 series, OpenMetrics", unit: "ms", better: "lower" },
  { name: "scrape /metrics, 10,000 series, protobuf + native", unit: "ms", better: "lower" },
  { name: "render only (registry.expose), text", unit: "ms", better: "lower" },
];
const GETS: Metric[] = [
  { name: "GET/s, request metrics on", unit: "req/s", better: "higher" },
  { name: "GET/s, request metrics off", unit: "req/s", better: "higher" },
  { name: "request-path overhead", unit: "%", better: "lower", target: 5 },
  { name: "instrumentation CPU per request (begin + end + byte count)", unit: "µs", better: "lower" },
];
/** Time each variant is loaded per run, split into WINDOWS alternating windows. */
const PHASE_MS = 4000;
const WINDOWS = 8;
const STREAMS = 64;

function tenThousandSeries(): MetricsRegistry {
  const r = new MetricsRegistry({ nativeHistograms: true });
  const labels = ["code", "component", "dry_run", "group", "resource", "scope", "subresource", "verb", "version"];
  const c = r.counter({ name: "bench_requests_total", help: "Bench counter.", labelNames: labels });
  for (let i = 0; i < 6000; i++) {
    c.inc({ code: String(200 + (i % 5)), component: "apiserver", dry_run: "", group: `g${i % 40}.orch.io`, resource: `r${i % 150}`, scope: "namespace", subresource: "", verb: ["GET", "LIST", "POST", "PUT", "PATCH", "DELETE"][i % 6]!, version: `v${i}` }, i);
  }
  const g = r.gauge({ name: "bench_objects", help: "Bench gauge.", labelNames: ["group", "resource"] });
  for (let i = 0; i < 3000; i++) g.set({ group: `g${i % 30}.orch.io`, resource: `resource${i}` }, i);
  const h = r.histogram({ name: "bench_duration_seconds", help: "Bench histogram.", labelNames: ["verb", "resource"] });
  for (let i = 0; i < 1000; i++) for (let k = 0; k < 20; k++) h.observe({ verb: ["GET", "LIST"][i % 2]!, resource: `r${i}` }, (k + 1) * 0.013);
  return r;
}

async function scrapeBench(runs: number): Promise<Record<string, number[]>> {
  const registry = tenThousandSeries();
  // The scraper authenticates as Prometheus does with a client certificate of the cluster CA.
  const pki = mkdtempSync(join(tmpdir(), "orch-bench-pki-"));
  const credentials = await ensureCredentials(pki);
  const clientCert = await issueClientCert({ cert: credentials.caCertPem, key: readFileSync(join(pki, "ca.key"), "utf8") }, "bench-scraper");
  rmSync(pki, { recursive: true, force: true });
  const server = await startComponentServer({
    name: "orch-bench", bindAddress: "127.0.0.1", port: 0, metrics: registry, log: () => {},
    featureGates: parseFeatureGates({ NativeHistograms: "true" }), clientCa: credentials.caCertPem,
  });
  const out: Record<string, number[]> = Object.fromEntries(SCRAPE.map((m) => [m.name, []]));
  const accepts = [
    "text/plain;version=0.0.4",
    "application/openmetrics-text;version=1.0.0",
    "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited",
  ];
  try {
    for (let run = 0; run < runs; run++) {
      for (let f = 0; f < accepts.length; f++) {
        const times: number[] = [];
        for (let i = 0; i < 10; i++) {
          const t0 = performance.now();
          const res = await httpsGet(`${server.url}/metrics`, { headers: { accept: accepts[f]! }, clientCert });
          if (res.status !== 200) throw new Error(`scrape failed: ${res.status} ${res.text.slice(0, 200)}`);
          times.push(performance.now() - t0);
        }
        out[SCRAPE[f]!.name]!.push(median(times));
      }
      const times: number[] = [];
      for (let i = 0; i < 10; i++) {
        const t0 = performance.now();
        registry.expose();
        times.push(performance.now() - t0);
      }
      out[SCRAPE[3]!.name]!.push(median(times));
    }
  } finally {
    await server.close();
  }
  return out;
}

/** A GET load on one server: 64 streams over one HTTP/2 session, counting completions while `counting` says so. */
async function openLoad(server: RunningApiServer): Promise<{ run(ms: number): Promise<number>; close(): void }> {
  const token = server.credentials.adminToken;
  const session: ClientHttp2Session = connect(server.url, { ca: server.credentials.caCertPem });
  await new Promise<void>((resolve, reject) => {
    session.once("connect", () => resolve());
    session.once("error", reject);
  });
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const s = session.request({ ":method": "GET", ":path": "/api/v1/namespaces/default", authorization: `Bearer ${token}` });
      s.on("data", () => {});
      s.on("end", () => resolve());
      s.on("error", reject);
      s.end();
    });
  for (let i = 0; i < 500; i++) await one(); // warm up
  return {
    async run(ms) {
      let done = 0;
      const deadline = performance.now() + ms;
      const worker = async () => {
        while (performance.now() < deadline) {
          await one();
          done++;
        }
      };
      const t0 = performance.now();
      await Promise.all(Array.from({ length: STREAMS }, worker));
      return done / ((performance.now() - t0) / 1000);
    },
    close: () => session.close(),
  };
}

async function startVariant(on: boolean): Promise<{ server: RunningApiServer; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "orch-bench-metrics-"));
  const server = await startApiServer({
    dataDir, bindAddress: "127.0.0.1", securePort: 0, storage: { backend: "lmdb" }, compactionIntervalMs: 0,
    featureGates: parseFeatureGates({}), modules: builtinModules(), log: () => {}, requestMetrics: on,
  });
  return { server, dataDir };
}

/**
 * Both servers run side by side in this process and take turns: short
 * alternating windows, so a load change on this shared machine hits both
 * variants alike instead of whichever ran second.
 */
async function requestPathBench(runs: number): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = Object.fromEntries(GETS.map((m) => [m.name, []]));
  for (let run = 0; run < runs; run++) {
    const variants = { on: await startVariant(true), off: await startVariant(false) };
    const loads = { on: await openLoad(variants.on.server), off: await openLoad(variants.off.server) };
    const rates: Record<"on" | "off", number[]> = { on: [], off: [] };
    try {
      for (let w = 0; w < WINDOWS; w++) {
        for (const v of w % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const)) rates[v].push(await loads[v].run(PHASE_MS / WINDOWS));
      }
    } finally {
      for (const v of ["on", "off"] as const) {
        loads[v].close();
        await variants[v].server.close();
        rmSync(variants[v].dataDir, { recursive: true, force: true });
      }
    }
    const on = rates.on.reduce((a, b) => a + b, 0) / WINDOWS;
    const off = rates.off.reduce((a, b) => a + b, 0) / WINDOWS;
    out[GETS[0]!.name]!.push(on);
    out[GETS[1]!.name]!.push(off);
    out[GETS[2]!.name]!.push(((off - on) / off) * 100);
  }
  return out;
}

/**
 * The instrumentation alone, without the server: what begin() and end() (and
 * the response byte count) cost per request, on a steady label set. Unlike
 * GET/s it barely moves with the machine's load.
 */
function perRequestCost(runs: number): number[] {
  const out: number[] = [];
  const storage = { backend: "bench", count: async () => 0, stats: async () => ({ sizeBytes: 0, keyCount: 0, revision: 0, compactedRevision: 0 }) };
  const metrics = new ApiServerMetrics({ registry: new MetricsRegistry(), storage: storage as unknown as Storage, resources: [] });
  const url = new URL("https://x/api/v1/namespaces/default/pods/p1");
  const path = parsePath(url.pathname);
  const req = { method: "GET", headers: {} } as unknown as Incoming;
  for (let run = 0; run < runs; run++) {
    const n = 200_000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const res = { statusCode: 200, write: (_c: unknown) => true, end: (_c: unknown) => undefined };
      const record = metrics.begin(req, path, url.searchParams);
      const bytes = countResponseBytes(res as unknown as Outgoing);
      (res as { end(c: unknown): unknown }).end("x".repeat(8));
      metrics.end(record, res as unknown as Outgoing, bytes());
    }
    out.push(((performance.now() - t0) * 1000) / n);
  }
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const scrape = await scrapeBench(args.runs);
  const gets = await requestPathBench(args.runs);
  gets[GETS[3]!.name] = perRequestCost(args.runs);
  const report: Report = {
    title: "bench/metrics: scrape cost and request-path overhead",
    comparedWith: "text 0.0.4 scrape (formats); the API server with request metrics off (GET/s)",
    runs: args.runs,
    metrics: [...SCRAPE, ...GETS],
    samples: { value: { ...scrape, ...gets } },
  };
  printReport(report, args.json);
}

await main();
