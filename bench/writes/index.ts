// bench/writes: the cost of each way to change an object, side by side, on a
// ~3 KB pod through a real `orch apiserver` over HTTP/2: update (PUT of the
// whole object), merge patch, strategic merge patch and server-side apply
// (the whole configuration, as kubectl sends it). Every operation changes one
// annotation, so none is a no-op. Also: the bytes managedFields add to a pod
// written by apply and by update. Compared with each other; update is the baseline.
// Usage: node dist/bench/writes/index.js [--json] [--runs=N] [--only=lmdb,etcd]

import type { Backend } from "../../test/support/orch-backend.js";
import { sampleOnBackends } from "../support/backend-runs.js";
import type { OrchProcess } from "../../test/support/orch-process.js";
import { benchClient, benchPod, closedLoop, ensureNamespace, expectStatus, type BenchClient } from "../support/http2-client.js";
import { parseArgs, printReport, type Metric, type Report } from "../support/report.js";

const WORKERS = 16;
const PHASE_MS = 3000;
/** Each phase first runs this long unmeasured (JIT, first writes of each pod). */
const WARMUP_MS = 750;
const NS = "/api/v1/namespaces/writes/pods";

const METRICS: Metric[] = [
  { name: "update (PUT)/s", unit: "req/s", better: "higher" },
  { name: "merge patch/s", unit: "req/s", better: "higher" },
  { name: "strategic merge patch/s", unit: "req/s", better: "higher" },
  { name: "server-side apply/s", unit: "req/s", better: "higher" },
  { name: "server-side apply, fieldValidation=Strict/s", unit: "req/s", better: "higher" },
  { name: "pod without managedFields", unit: "bytes", better: "lower" },
  { name: "managedFields after one update", unit: "bytes", better: "lower" },
  { name: "managedFields after one apply", unit: "bytes", better: "lower" },
];

type Pod = ReturnType<typeof benchPod>;

/** One pod per worker (so PUTs do not conflict), created with `prefix`; returns them as stored. */
async function seed(c: BenchClient, prefix: string): Promise<Pod[]> {
  const pods: Pod[] = [];
  for (let w = 0; w < WORKERS; w++) {
    const body = expectStatus(await c.request("POST", `${NS}?fieldManager=seed`, benchPod(`${prefix}-${w}`, w)), 201, "seed");
    pods.push(JSON.parse(body.toString()) as Pod);
  }
  return pods;
}

const annotate = (i: number) => ({ metadata: { annotations: { counter: String(i) } } });

/** A warmed-up closed loop: ops/s over PHASE_MS after WARMUP_MS unmeasured. */
async function phase(op: (i: number, worker: number) => Promise<void>): Promise<number> {
  let n = 0;
  await closedLoop(WORKERS, WARMUP_MS, (_, w) => op(n++, w));
  return closedLoop(WORKERS, PHASE_MS, (_, w) => op(n++, w));
}

async function measure(orch: OrchProcess): Promise<Record<string, number>> {
  const c = benchClient(orch);
  const out: Record<string, number> = {};
  try {
    await ensureNamespace(c, "writes");

    // Read-modify-write, as controllers update: the last answer, one annotation changed, PUT back.
    const pods = await seed(c, "u");
    out[METRICS[0]!.name] = await phase(async (i, w) => {
      const pod = pods[w]!;
      pod.metadata.annotations["counter"] = String(i);
      const body = expectStatus(await c.request("PUT", `${NS}/u-${w}?fieldManager=bench`, pod), 200, "PUT");
      pods[w] = JSON.parse(body.toString()) as Pod;
    });

    await seed(c, "m");
    out[METRICS[1]!.name] = await phase(async (i, w) => {
      expectStatus(await c.request("PATCH", `${NS}/m-${w}?fieldManager=bench`, annotate(i), "application/merge-patch+json"), 200, "merge patch");
    });

    await seed(c, "s");
    out[METRICS[2]!.name] = await phase(async (i, w) => {
      expectStatus(await c.request("PATCH", `${NS}/s-${w}?fieldManager=bench`, annotate(i), "application/strategic-merge-patch+json"), 200, "strategic patch");
    });

    for (const [metric, query] of [
      [METRICS[3]!.name, "fieldManager=bench&force=false"],
      [METRICS[4]!.name, "fieldManager=bench&force=false&fieldValidation=Strict"],
    ] as const) {
      const prefix = query.includes("Strict") ? "as" : "a";
      out[metric] = await phase(async (i, w) => {
        const pod = benchPod(`${prefix}-${w}`, w);
        pod.metadata.annotations["counter"] = String(i);
        const r = await c.request("PATCH", `${NS}/${prefix}-${w}?${query}`, JSON.stringify(pod), "application/apply-patch+yaml");
        if (r.status !== 200 && r.status !== 201) expectStatus(r, 200, "apply");
      });
    }

    // managedFields' share of a stored pod.
    const updated = JSON.parse(expectStatus(await c.request("GET", `${NS}/m-0`), 200, "GET").toString());
    const applied = JSON.parse(expectStatus(await c.request("GET", `${NS}/a-0`), 200, "GET").toString());
    const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
    const { managedFields: updateFields, ...bare } = updated.metadata;
    out[METRICS[5]!.name] = size({ ...updated, metadata: bare });
    // m-0 has two Update managers (seed, bench); count one entry's worth like for apply.
    out[METRICS[6]!.name] = size(updateFields.filter((e: { manager: string }) => e.manager === "seed"));
    out[METRICS[7]!.name] = size(applied.metadata.managedFields);
  } finally {
    c.close();
  }
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const report: Report = {
    title: `bench/writes: ways to change a ~3 KB pod through orch apiserver over HTTP/2 (${WORKERS} streams, one pod each, ${PHASE_MS / 1000} s per phase)`,
    comparedWith: "each other (update, a whole-object PUT, is the baseline); etcd column: the same server on etcd 3.4 instead of lmdb",
    runs: args.runs,
    metrics: METRICS,
    samples: {},
  };
  const backends = (["lmdb", "etcd"] as const).filter((b: Backend) => (args.only.length === 0 ? b === "lmdb" : args.only.includes(b)));
  report.samples = await sampleOnBackends(backends, args, measure);
  printReport(report, args.json);
}

await main();
