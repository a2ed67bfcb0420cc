// bench/scheduler: scheduling throughput as upstream's scheduler_perf
// "SchedulingBasic" measures it — N simulated nodes (Node objects that only
// report a Ready status, as kwok's), 10,000 pending pods (100m cpu, 500 Mi
// each), then the scheduler started: pods/s bound and the p99 of one attempt
// (algorithm + binding), read from the scheduler's own histograms as
// scheduler_perf reads them. The API server is a real `orch apiserver` child
// process (lmdb); the scheduler runs here. Compares against upstream's CI
// floor for this case: 270 pods/s.
// End to end: with 100 simulated nodes whose pods turn Running at once (as
// kwok's stages), pods/s from creation to Running.
// Usage: node dist/bench/scheduler/index.js [--json] [--runs=N] [--only=1000,5000,e2e] [--pods=10000] [--e2e-pods=2000]

import { startOrch } from "../../test/support/orch-process.js";
import { Informer, RestClient, loadKubeconfig, type ResourceRef } from "../../src/client/index.js";
import type { Pod } from "../../src/api/core/types.js";
import { namingFor } from "../../src/machinery/naming.js";
import { Scheduler } from "../../src/scheduler/index.js";
import { MetricsRegistry, type Histogram } from "../../src/component/metrics/index.js";
import { makeNode, makePod } from "../../src/scheduler/testing/objects.js";
import { parseArgs, printReport, type Metric, type Report } from "../support/report.js";

const PODS: ResourceRef = { group: "", version: "v1", resource: "pods", namespaced: true };
const NODES: ResourceRef = { group: "", version: "v1", resource: "nodes", namespaced: false };
const FLOOR = 270;

const METRICS: Metric[] = [
  { name: "pods bound/s", unit: "pods/s", better: "higher", target: FLOOR },
  { name: "attempt p50 (algorithm + binding)", unit: "ms", better: "lower" },
  { name: "attempt p99 (algorithm + binding)", unit: "ms", better: "lower" },
  { name: "Filter p99", unit: "ms", better: "lower" },
  { name: "Score p99", unit: "ms", better: "lower" },
  { name: "pods created→Running/s (end to end)", unit: "pods/s", better: "higher" },
];

/**
 * A percentile from a histogram's buckets, linearly interpolated inside the
 * bucket (as upstream's scheduler_perf reads its latency percentiles).
 */
function histogramPercentile(registry: MetricsRegistry, name: string, match: (labels: Record<string, string>) => boolean, p: number): { value: number; count: number } {
  // Only this family: a full scrape would also walk every pod for the resource collectors.
  const family = (registry.get(name) as Histogram | undefined)?.collect();
  const bounds = family?.buckets ?? [];
  const counts = new Array<number>(bounds.length + 1).fill(0);
  let total = 0;
  for (const series of family?.series ?? []) {
    const labels = Object.fromEntries(family!.labelNames.map((n, i) => [n, series.labelValues[i]!]));
    if (!match(labels)) continue;
    series.bucketCounts?.forEach((c, i) => (counts[i]! += c));
    total += series.count ?? 0;
  }
  const rank = (p / 100) * total;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i]! >= rank) {
      const lo = i === 0 ? 0 : bounds[i - 1]!;
      const below = i === 0 ? 0 : counts[i - 1]!;
      const inBucket = counts[i]! - below;
      return { value: lo + (bounds[i]! - lo) * (inBucket === 0 ? 0 : (rank - below) / inBucket), count: total };
    }
  }
  return { value: bounds[bounds.length - 1] ?? NaN, count: total };
}

async function inBatches<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** A real `orch apiserver` with `nodes` simulated Node objects (Ready, never heartbeating). */
async function withCluster<T>(nodes: number, fn: (client: RestClient) => Promise<T>): Promise<T> {
  const orch = await startOrch("apiserver", [], { readyTimeoutMs: 30_000 });
  const client = new RestClient(loadKubeconfig(orch.kubeconfig));
  try {
    await inBatches(
      Array.from({ length: nodes }, (_, i) => i),
      64,
      (i) => client.create(NODES, makeNode(`node-${i}`, { cpu: "4", memory: "32Gi", pods: "110", labels: { [`topology.${namingFor().keyDomain}/zone`]: `zone-${i % 3}` } })),
    );
    return await fn(client);
  } finally {
    client.close();
    await orch.stop();
  }
}

/**
 * What kwok's pod stages do for a node nobody runs: a bound pod is reported
 * Running and Ready at once. Resolves when `pods` pods have been.
 */
function simulatePodStages(client: RestClient, pods: number, signal: AbortSignal): Promise<void> {
  const informer = new Informer<Pod>({ client, resource: PODS });
  const started = new Set<string>();
  let running = 0;
  return new Promise((resolve) => {
    const onPod = (pod: Pod) => {
      if (!pod.spec?.nodeName || started.has(pod.metadata.name!)) return;
      started.add(pod.metadata.name!);
      const now = new Date().toISOString().slice(0, 19) + "Z";
      void client
        .patch(PODS, {
          namespace: pod.metadata.namespace!,
          name: pod.metadata.name!,
          subresource: "status",
          patch: { status: { phase: "Running", startTime: now, conditions: [{ type: "Ready", status: "True", lastTransitionTime: now }] } },
        })
        .then(() => {
          if (++running === pods) resolve();
        });
    };
    informer.addEventHandler({ onAdd: onPod, onUpdate: (_o, p) => onPod(p) });
    void informer.run(signal);
  });
}

/** Pods created while the scheduler and the simulated nodes run: creation to Running, per second. */
async function endToEnd(nodes: number, pods: number): Promise<Record<string, number>> {
  return withCluster(nodes, async (client) => {
    const abort = new AbortController();
    const scheduler = new Scheduler({ client, naming: namingFor() });
    const run = scheduler.run(abort.signal);
    const allRunning = simulatePodStages(client, pods, abort.signal);
    const started = performance.now();
    await inBatches(
      Array.from({ length: pods }, (_, i) => i),
      64,
      (i) => client.create(PODS, makePod(`e2e-${i}`, { cpu: "100m", memory: "500Mi" })),
    );
    await allRunning;
    const seconds = (performance.now() - started) / 1000;
    abort.abort();
    await run;
    return { "pods created→Running/s (end to end)": pods / seconds };
  });
}

async function runOnce(nodes: number, pods: number): Promise<Record<string, number>> {
  return withCluster(nodes, async (client) => {
    await inBatches(
      Array.from({ length: pods }, (_, i) => i),
      64,
      (i) => client.create(PODS, makePod(`pod-${i}`, { cpu: "100m", memory: "500Mi" })),
    );
    const registry = new MetricsRegistry();
    const scheduler = new Scheduler({ client, naming: namingFor(), metrics: registry });
    const ATTEMPTS = "scheduler_scheduling_attempt_duration_seconds";
    const scheduled = (l: Record<string, string>) => l["result"] === "scheduled";
    const abort = new AbortController();
    const started = performance.now();
    const run = scheduler.run(abort.signal);
    while (histogramPercentile(registry, ATTEMPTS, scheduled, 50).count < pods) await new Promise((r) => setTimeout(r, 20));
    const seconds = (performance.now() - started) / 1000;
    abort.abort();
    await run;
    const unbound = (await client.listAll(PODS, { namespace: "default", fieldSelector: "spec.nodeName=" })).items.length;
    if (unbound > 0) throw new Error(`${unbound} pods left unbound`);
    const point = (name: string) => (l: Record<string, string>) => l["extension_point"] === name;
    return {
      "pods bound/s": pods / seconds,
      "attempt p50 (algorithm + binding)": histogramPercentile(registry, ATTEMPTS, scheduled, 50).value * 1000,
      "attempt p99 (algorithm + binding)": histogramPercentile(registry, ATTEMPTS, scheduled, 99).value * 1000,
      "Filter p99": histogramPercentile(registry, "scheduler_framework_extension_point_duration_seconds", point("Filter"), 99).value * 1000,
      "Score p99": histogramPercentile(registry, "scheduler_framework_extension_point_duration_seconds", point("Score"), 99).value * 1000,
    };
  });
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const podsArg = process.argv.find((a) => a.startsWith("--pods="));
  const pods = podsArg ? Number(podsArg.slice("--pods=".length)) : 10_000;
  const only = args.only.length > 0 ? args.only : ["1000", "5000", "e2e"];
  const sizes = only.filter((o) => o !== "e2e").map(Number);
  const e2ePodsArg = process.argv.find((a) => a.startsWith("--e2e-pods="));
  const e2ePods = e2ePodsArg ? Number(e2ePodsArg.slice("--e2e-pods=".length)) : 2000;
  const report: Report = {
    title: `scheduler: ${pods.toLocaleString("en-US")} pods onto simulated nodes`,
    comparedWith: `upstream scheduler_perf SchedulingBasic CI floor (${FLOOR} pods/s)`,
    runs: args.runs,
    metrics: METRICS,
    samples: {},
  };
  for (const n of sizes) {
    const column = `${n.toLocaleString("en-US")} nodes`;
    const samples: Record<string, number[]> = {};
    for (let r = 0; r < args.runs; r++) {
      const result = await runOnce(n, pods);
      for (const [k, v] of Object.entries(result)) (samples[k] ??= []).push(v);
      if (!args.json) process.stderr.write(`${column}, run ${r + 1}: ${Math.round(result["pods bound/s"]!)} pods/s\n`);
    }
    report.samples[column] = samples;
  }
  if (only.includes("e2e")) {
    const column = `100 nodes, ${e2ePods.toLocaleString("en-US")} pods created`;
    const samples: Record<string, number[]> = {};
    for (let r = 0; r < args.runs; r++) {
      const result = await endToEnd(100, e2ePods);
      for (const [k, v] of Object.entries(result)) (samples[k] ??= []).push(v);
      if (!args.json) process.stderr.write(`${column}, run ${r + 1}: ${Math.round(result["pods created→Running/s (end to end)"]!)} pods/s\n`);
    }
    report.samples[column] = samples;
  }
  printReport(report, args.json);
}

await main();
