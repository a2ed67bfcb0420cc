// Informer indexes against the scans they replace: the controllers used to find a namespace's,
// a node's or a controller's pods with `informer.list().filter(...)` (copy every cached pod, test
// each); now they ask an index. Also the price: applying one watch event with the indexes kept.

import { Indexer, NAMESPACE_INDEX } from "../../src/client/indexer.js";
import { keyOf } from "../../src/client/informer.js";
import type { Pod } from "../../src/api/core/types.js";
import { CONTROLLER_UID_INDEX, POD_NODE_NAME_INDEX, controllerUidIndex, podNodeNameIndex } from "../../src/controllers/indexes.js";
import { controllerOf } from "../../src/controllers/resources.js";
import { parseArgs, printReport, type Metric, type Report } from "../support/report.js";

const args = parseArgs(process.argv.slice(2));
const countArg = process.argv.find((a) => a.startsWith("--pods="));
const PODS = countArg === undefined ? 10_000 : Number(countArg.slice("--pods=".length));
const NAMESPACES = 100, NODES = 100, OWNERS = 1_000;

function pod(i: number): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      namespace: `ns-${i % NAMESPACES}`,
      name: `pod-${i}`,
      uid: `uid-${i}`,
      resourceVersion: String(i + 1),
      labels: { app: `app-${i % OWNERS}` },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: `rs-${i % OWNERS}`, uid: `rs-uid-${i % OWNERS}`, controller: true }],
    },
    spec: { nodeName: `node-${i % NODES}`, containers: [{ name: "c", image: "busybox" }] },
  } as Pod;
}

/** Microseconds per call of fn, over enough calls to take about 200 ms. */
function usPerCall(fn: (i: number) => void): number {
  let calls = 1;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < calls; i++) fn(i);
    const ms = performance.now() - start;
    if (ms > 200) return (ms * 1000) / calls;
    calls *= 2;
  }
}

const metrics: Metric[] = [
  { name: `pods of one namespace (${PODS.toLocaleString("en-US")} pods, ${NAMESPACES} namespaces)`, unit: "µs/lookup", better: "lower" },
  { name: `pods on one node (${NODES} nodes)`, unit: "µs/lookup", better: "lower" },
  { name: `pods of one controller (${OWNERS} owners)`, unit: "µs/lookup", better: "lower" },
  { name: "one watch event applied (update)", unit: "µs/event", better: "lower" },
];

const report: Report = {
  title: "informer cache lookups: index against list().filter()",
  comparedWith: "the scan the controllers did before (copy the cache, filter every pod), and a plain Map for the event cost",
  runs: args.runs,
  metrics,
  samples: { scan: {}, index: {} },
};
const push = (column: "scan" | "index", metric: Metric, value: number) => ((report.samples[column]![metric.name] ??= []).push(value));

const pods = Array.from({ length: PODS }, (_, i) => pod(i));
for (let run = 0; run < args.runs; run++) {
  const plain = new Map<string, Pod>();
  const indexed = new Indexer<Pod>();
  indexed.addIndexers({ [POD_NODE_NAME_INDEX]: podNodeNameIndex, [CONTROLLER_UID_INDEX]: controllerUidIndex });
  for (const p of pods) {
    plain.set(keyOf(p), p);
    indexed.set(keyOf(p), p);
  }
  const list = () => [...plain.values()];
  let sink = 0;
  const [byNs, byNode, byOwner, event] = metrics as [Metric, Metric, Metric, Metric];
  push("scan", byNs, usPerCall((i) => (sink += list().filter((p) => p.metadata.namespace === `ns-${i % NAMESPACES}`).length)));
  push("index", byNs, usPerCall((i) => (sink += indexed.byIndex(NAMESPACE_INDEX, `ns-${i % NAMESPACES}`).length)));
  push("scan", byNode, usPerCall((i) => (sink += list().filter((p) => p.spec?.nodeName === `node-${i % NODES}`).length)));
  push("index", byNode, usPerCall((i) => (sink += indexed.byIndex(POD_NODE_NAME_INDEX, `node-${i % NODES}`).length)));
  push("scan", byOwner, usPerCall((i) => (sink += list().filter((p) => controllerOf(p)?.uid === `rs-uid-${i % OWNERS}`).length)));
  push("index", byOwner, usPerCall((i) => (sink += indexed.byIndex(CONTROLLER_UID_INDEX, `rs-uid-${i % OWNERS}`).length)));
  // An update that leaves the indexed values alone (the usual status write), with the cost of a fresh object.
  const updated = (i: number) => ({ ...pods[i % PODS]!, metadata: { ...pods[i % PODS]!.metadata, resourceVersion: String(PODS + i) } }) as Pod;
  push("scan", event, usPerCall((i) => plain.set(keyOf(pods[i % PODS]!), updated(i))));
  push("index", event, usPerCall((i) => indexed.set(keyOf(pods[i % PODS]!), updated(i))));
  if (sink < 0) console.log(sink);
}
printReport(report, args.json);
