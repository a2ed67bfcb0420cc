// A real Prometheus (Debian's 2.42, --enable-feature=native-histograms)
// scrapes a real `orch apiserver` with NativeHistograms on, over TLS with the
// cluster CA and the admin token, every 200 ms; a query then shows the
// request-duration histogram stored as a native histogram (and, as 2.42 does
// by default with native data, no classic _bucket series).

import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { commandSkipReason } from "../src/component/metrics/testing.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

interface QueryResult {
  metric: Record<string, string>;
  value?: [number, string];
  histogram?: [number, { count: string; sum: string; buckets?: unknown[] }];
}

async function query(base: string, q: string): Promise<QueryResult[]> {
  const res = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(q)}`);
  const body = (await res.json()) as { status: string; data?: { result: QueryResult[] }; error?: string };
  assert.equal(body.status, "success", body.error);
  return body.data!.result;
}

const skip = commandSkipReason("prometheus", "prometheus");
let api: OrchProcess;
let prometheus: ChildProcess | undefined;
let dir: string;
let base: string;
let log = "";

before(async () => {
  if (skip !== undefined) return;
  api = await startOrch("apiserver", ["--feature-gates=NativeHistograms=true"]);
  dir = mkdtempSync(join(tmpdir(), "orch-prometheus-"));
  const target = new URL(api.url).host;
  writeFileSync(join(dir, "prometheus.yml"), [
    "global:",
    "  scrape_interval: 200ms",
    "  scrape_timeout: 200ms",
    "scrape_configs:",
    "  - job_name: orch-apiserver",
    "    scheme: https",
    "    tls_config:",
    `      ca_file: ${join(api.dataDir, "ca.crt")}`,
    "    authorization:",
    `      credentials_file: ${join(api.dataDir, "admin.token")}`,
    "    static_configs:",
    `      - targets: ["${target}"]`,
    "",
  ].join("\n"));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  prometheus = spawn("prometheus", [
    `--config.file=${join(dir, "prometheus.yml")}`,
    `--storage.tsdb.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--enable-feature=native-histograms",
  ], { stdio: ["ignore", "pipe", "pipe"] });
  prometheus.stderr!.on("data", (d: Buffer) => (log += d.toString()));
});

after(async () => {
  if (prometheus !== undefined && prometheus.exitCode === null) {
    const exited = new Promise<void>((r) => prometheus!.once("exit", () => r()));
    prometheus.kill("SIGTERM");
    await exited;
  }
  await api?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
});

test("Prometheus 2.42 scrapes orch over TLS and ingests native histograms", { skip }, async () => {
  const deadline = Date.now() + 30_000;
  let native: QueryResult | undefined;
  let up: QueryResult[] = [];
  while (Date.now() < deadline) {
    try {
      up = await query(base, 'up{job="orch-apiserver"}');
      native = (await query(base, 'apiserver_request_duration_seconds{subresource="/metrics"}')).find((r) => Number(r.histogram?.[1].count ?? 0) >= 1);
      if (native !== undefined) break;
    } catch {
      // Prometheus still starting.
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.ok(native !== undefined, `no native histogram sample after 30 s; up=${JSON.stringify(up)}\n${log}`);
  assert.equal(up[0]?.value?.[1], "1", "the scrape over TLS with the token succeeds");
  assert.ok(Array.isArray(native.histogram![1].buckets) && native.histogram![1].buckets.length > 0, JSON.stringify(native));
  assert.equal(native.metric["verb"], "GET");
  // Native data ingested: 2.42 then keeps no classic buckets for that histogram.
  assert.deepEqual(await query(base, 'apiserver_request_duration_seconds_bucket{subresource="/metrics"}'), []);
});
