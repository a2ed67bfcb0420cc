// bench/storage: the storage backends side by side on one workload.
// Compares the embedded lmdb backend with etcd 3.4 (Debian etcd-server, one
// member on loopback, started here) through the same Storage interface.
// Usage: node dist/bench/storage/index.js [--json] [--runs=N] [--only=lmdb,etcd]

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LmdbStorage } from "../../src/storage/lmdb/index.js";
import type { Storage } from "../../src/storage/storage.js";
import { parseArgs, percentile, printReport, type Metric, type Report } from "../support/report.js";

const VALUE = new Uint8Array(3 * 1024).fill(120);
const PHASE_MS = 2000;

const METRICS: Metric[] = [
  { name: "durable writes/s, 1 writer", unit: "ops/s", better: "higher" },
  { name: "durable writes/s, 32 writers", unit: "ops/s", better: "higher", target: 5000 },
  { name: "point reads/s", unit: "ops/s", better: "higher", target: 50000 },
  { name: "list of 10,000 keys", unit: "ms", better: "lower" },
  { name: "watch delivery p50, 100 watchers", unit: "ms", better: "lower" },
  { name: "watch delivery p99, 100 watchers", unit: "ms", better: "lower", target: 10 },
];

interface Backend {
  name: string;
  open(run: number): Promise<Storage>;
  teardown(): Promise<void>;
}

async function lmdbBackend(): Promise<Backend> {
  const root = mkdtempSync(join(tmpdir(), "orch-bench-lmdb-"));
  return {
    name: "lmdb",
    open: (run) => LmdbStorage.open({ dataDir: join(root, String(run)) }),
    teardown: async () => rmSync(root, { recursive: true, force: true }),
  };
}

async function etcdBackend(): Promise<Backend> {
  const { startEtcd } = await import("../../src/storage/etcd/testing/etcd-server.js");
  const { openEtcdStorage } = await import("../../src/storage/etcd/index.js");
  const etcd = await startEtcd();
  return {
    name: "etcd",
    open: (run) => openEtcdStorage({ endpoints: etcd.endpoints, prefix: `/bench-${run}` }),
    teardown: () => etcd.stop(),
  };
}

/** Run `worker` on `concurrency` loops for `ms`; returns completed operations per second. */
async function throughput(concurrency: number, ms: number, worker: (i: number) => Promise<void>): Promise<number> {
  let ops = 0;
  const deadline = performance.now() + ms;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        await worker(ops);
        ops++;
      }
    }),
  );
  return ops / ((performance.now() - start) / 1000);
}

async function measure(store: Storage): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  let n = 0;
  out[METRICS[0]!.name] = await throughput(1, PHASE_MS, async () => {
    await store.create(`/w1/${n++}`, VALUE);
  });
  out[METRICS[1]!.name] = await throughput(32, PHASE_MS, async () => {
    await store.create(`/w32/${n++}`, VALUE);
  });

  // 10,000 keys for reads and the list.
  let filled = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (filled < 10_000) await store.create(`/list/${String(filled++).padStart(6, "0")}`, VALUE);
    }),
  );
  out[METRICS[2]!.name] = await throughput(32, PHASE_MS, async (i) => {
    const got = await store.get(`/list/${String((i * 7919) % 10_000).padStart(6, "0")}`);
    if (got.kv === undefined) throw new Error("missing key during the read phase");
  });
  const listTimes: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    const listed = await store.list("/list/");
    listTimes.push(performance.now() - t);
    if (listed.items.length !== 10_000) throw new Error(`listed ${listed.items.length} keys, expected 10,000`);
  }
  out[METRICS[3]!.name] = percentile(listTimes, 50);

  const latencies = await watchLatencies(store, 100, 300);
  out[METRICS[4]!.name] = percentile(latencies, 50);
  out[METRICS[5]!.name] = percentile(latencies, 99);
  return out;
}

/** `watchers` watches on one prefix; `events` writes at about 200/s carrying their send time. */
async function watchLatencies(store: Storage, watchers: number, events: number): Promise<number[]> {
  const latencies: number[] = [];
  const from = await store.currentRevision();
  const watches = Array.from({ length: watchers }, () => store.watch("/watch/", { fromRevision: from }));
  const readers = watches.map(async (w) => {
    let seen = 0;
    for await (const e of w) {
      if (e.type !== "put") continue;
      const sent = new DataView(e.kv.value.buffer, e.kv.value.byteOffset).getFloat64(0);
      latencies.push(performance.timeOrigin + performance.now() - sent);
      if (++seen === events) break;
    }
  });
  for (let i = 0; i < events; i++) {
    const value = new Uint8Array(VALUE.length);
    new DataView(value.buffer).setFloat64(0, performance.timeOrigin + performance.now());
    await store.create(`/watch/${i}`, value);
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.race([Promise.all(readers), new Promise((r) => setTimeout(r, 10_000))]);
  for (const w of watches) w.close();
  if (latencies.length < watchers * events) throw new Error(`only ${latencies.length} of ${watchers * events} events arrived`);
  return latencies;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const wanted = (name: string) => args.only.length === 0 || args.only.includes(name);
  const report: Report = {
    title: "bench/storage: durable writes, reads, lists and watch delivery (3 KB values)",
    comparedWith: "etcd 3.4 (Debian etcd-server, 1 member on loopback) through the same Storage interface",
    runs: args.runs,
    metrics: METRICS,
    samples: {},
  };
  const factories = [
    { name: "lmdb", make: lmdbBackend },
    { name: "etcd", make: etcdBackend },
  ].filter((f) => wanted(f.name));
  for (const factory of factories) {
    const backend = await factory.make();
    try {
      const samples: Record<string, number[]> = {};
      for (let run = 0; run < args.runs; run++) {
        const store = await backend.open(run);
        try {
          for (const [k, v] of Object.entries(await measure(store))) (samples[k] ??= []).push(v);
        } finally {
          await store.close();
        }
        if (!args.json) process.stderr.write(`${backend.name}: run ${run + 1}/${args.runs} done\n`);
      }
      report.samples[backend.name] = samples;
    } finally {
      await backend.teardown();
    }
  }
  printReport(report, args.json);
}

await main();
