// bench/api/crd: custom resources against a built-in kind of similar size.
// One real `orch apiserver` (lmdb, upstream's names) per run; a custom kind
// whose schema has 200 typed fields (strings with patterns and lengths,
// bounded integers, enums, booleans: validated, pruned and defaulted on every
// write) next to ConfigMaps carrying the same 200 values as data (about the
// same bytes). CREATE, GET of one object and LIST of 500, 64 HTTP/2 streams
// (LIST: 8), as bench/api. Also the establish latency: POST of a new CRD
// until the first object of its kind is created. Target: the custom kind
// at ≥ 0.8× the built-in kind's rate.
// Usage: node dist/bench/api/crd.js [--json] [--runs=N]

import { startOrch } from "../../test/support/orch-process.js";
import { benchClient, closedLoop as loop, ensureNamespace, type BenchClient } from "../support/http2-client.js";
import { parseArgs, printReport, type Metric, type Report } from "../support/report.js";

const PHASE_MS = 3000;
const FIELDS = 200;
const GROUP = "bench.example.com";

const METRICS: Metric[] = [
  { name: "CREATE/s (64 streams)", unit: "req/s", better: "higher" },
  { name: "GET/s (one object, 64 streams)", unit: "req/s", better: "higher" },
  { name: "LIST of 500/s (8 streams)", unit: "req/s", better: "higher" },
  { name: "CRD establish latency (create CRD → first object created)", unit: "ms", better: "lower" },
];
const RATIO = "custom ÷ built-in";
const TARGETS = { [RATIO]: 0.8 };
for (const m of METRICS.slice(0, 3)) m.targets = TARGETS;

/** Field i of the schema: a mix of the checks real CRDs carry. */
function fieldSchema(i: number): Record<string, unknown> {
  switch (i % 4) {
    case 0:
      return { type: "string", maxLength: 64, pattern: "^[a-z0-9-]+$", description: `Field ${i}.` };
    case 1:
      return { type: "integer", minimum: 0, maximum: 1_000_000, description: `Field ${i}.` };
    case 2:
      return { type: "string", enum: ["Always", "IfNotPresent", "Never"], default: "IfNotPresent", description: `Field ${i}.` };
    default:
      return { type: "boolean", description: `Field ${i}.` };
  }
}

function fieldValue(i: number, n: number): unknown {
  switch (i % 4) {
    case 0:
      return `value-${i}-${n}-abcdefghij`;
    case 1:
      return i * 1000 + n;
    case 2:
      return "Always";
    default:
      return i % 8 === 3;
  }
}

function crd(plural: string, kind: string): unknown {
  const properties = Object.fromEntries(Array.from({ length: FIELDS }, (_, i) => [`field${i}`, fieldSchema(i)]));
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: { plural, singular: kind.toLowerCase(), kind },
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties } } } } }],
    },
  };
}

function custom(kind: string, name: string, n: number): unknown {
  return { apiVersion: `${GROUP}/v1`, kind, metadata: { name, labels: { app: "bench" } }, spec: Object.fromEntries(Array.from({ length: FIELDS }, (_, i) => [`field${i}`, fieldValue(i, n)])) };
}

function configMap(name: string, n: number): unknown {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels: { app: "bench" } }, data: Object.fromEntries(Array.from({ length: FIELDS }, (_, i) => [`field${i}`, String(fieldValue(i, n))])) };
}

async function ok(c: BenchClient, method: string, path: string, body: unknown, want = 201): Promise<void> {
  const r = await c.request(method, path, body);
  if (r.status !== want) throw new Error(`${method} ${path}: ${r.status} ${r.body.toString().slice(0, 300)}`);
}

/** Create, get and list rates of one kind under `base` (a collection path). */
async function rates(c: BenchClient, base: string, make: (name: string, n: number) => unknown): Promise<number[]> {
  let next = 0;
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < 500) {
      const i = next++;
      await ok(c, "POST", base, make(`l-${i}`, i));
    }
  }));
  const create = await loop(64, PHASE_MS, async (i) => ok(c, "POST", base, make(`c-${i}`, i)));
  // Back to 500 objects for the list (the creates added more).
  await ok(c, "DELETE", `${base}?labelSelector=app%3Dbench&fieldSelector=metadata.name%21%3Dl-7`, undefined, 200).catch(() => undefined);
  const get = await loop(64, PHASE_MS, async () => {
    const r = await c.request("GET", `${base}/l-7`);
    if (r.status !== 200) throw new Error(`GET ${r.status}`);
  });
  next = 0;
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < 499) {
      const i = next++;
      await ok(c, "POST", base, make(`m-${i}`, i));
    }
  }));
  const list = await loop(8, PHASE_MS, async () => {
    const r = await c.request("GET", base);
    if (r.status !== 200) throw new Error(`LIST ${r.status}`);
  });
  return [create, get, list];
}

/** POST of a CRD until its first object is created (retrying creates every 5 ms). */
async function establish(c: BenchClient, run: number): Promise<number> {
  const plural = `things${run}`;
  const kind = `Thing${run}`;
  const t = performance.now();
  await ok(c, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd(plural, kind));
  for (;;) {
    const r = await c.request("POST", `/apis/${GROUP}/v1/namespaces/bench/${plural}`, custom(kind, "first", 0));
    if (r.status === 201) return performance.now() - t;
    if (performance.now() - t > 10_000) throw new Error(`never established: ${r.status} ${r.body.toString().slice(0, 200)}`);
    await new Promise((res) => setTimeout(res, 5));
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const report: Report = {
    title: `bench/api/crd: a custom kind with a ${FIELDS}-field schema against ConfigMaps with the same ${FIELDS} values, over HTTP/2 (lmdb)`,
    comparedWith: `the built-in kind on the same server; the ratio column's target is ≥ ${TARGETS[RATIO]}`,
    runs: args.runs,
    metrics: METRICS,
    samples: {},
  };
  const builtIn: Record<string, number[]> = {};
  const customs: Record<string, number[]> = {};
  const ratio: Record<string, number[]> = {};
  for (let run = 0; run < args.runs; run++) {
    const orch = await startOrch("apiserver", ["--api-group-suffix=k8s.io"]);
    const c = benchClient(orch);
    try {
      await ensureNamespace(c, "bench");
      const latency = await establish(c, run);
      (customs[METRICS[3]!.name] ??= []).push(latency);
      await ok(c, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd("widgets", "Widget"));
      for (let i = 0; (await c.request("GET", `/apis/${GROUP}/v1/namespaces/bench/widgets`)).status !== 200; i++) {
        if (i > 500) throw new Error("widgets never served");
        await new Promise((r) => setTimeout(r, 10));
      }
      const b = await rates(c, "/api/v1/namespaces/bench/configmaps", configMap);
      const w = await rates(c, `/apis/${GROUP}/v1/namespaces/bench/widgets`, (name, n) => custom("Widget", name, n));
      METRICS.slice(0, 3).forEach((m, i) => {
        (builtIn[m.name] ??= []).push(b[i]!);
        (customs[m.name] ??= []).push(w[i]!);
        (ratio[m.name] ??= []).push(w[i]! / b[i]!);
      });
    } finally {
      c.close();
      await orch.stop();
    }
    if (!args.json) process.stderr.write(`run ${run + 1}/${args.runs} done\n`);
  }
  report.samples = { "ConfigMap (built-in)": builtIn, [`custom kind (${FIELDS} fields)`]: customs, [RATIO]: ratio };
  printReport(report, args.json);
}

await main();
