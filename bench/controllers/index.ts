// Steady-state controller syncs with a big pod cache: the ReplicaSet controller's sync of every
// ReplicaSet whose pods are all there (no writes: CPU over the informer caches only), with pods
// spread over many namespaces. Compared with another build's dist (--baseline=DIR, e.g. main's,
// which scanned every cached pod per sync); without one, only this build is measured.

import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { ApiObject } from "../../src/machinery/index.js";
import { parseArgs, printReport, type Metric, type Report } from "../support/report.js";

type Harness = typeof import("../../src/apiserver/testing/harness.js");
type Testing = typeof import("../../src/controllers/testing.js");
type ReplicaSets = typeof import("../../src/controllers/replicaset/controller.js");
type Api = typeof import("../../src/api/index.js");

const args = parseArgs(process.argv.slice(2));
const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const PODS = Number(flag("pods") ?? 5_000);
const NAMESPACES = 50;
const SETS_PER_NAMESPACE = 5;
const baseline = flag("baseline");
// dist/bench/controllers/index.js → dist/
const ours = resolve(new URL(".", import.meta.url).pathname, "../..");

const metric: Metric = { name: `ReplicaSet sync, ${PODS.toLocaleString("en-US")} pods in ${NAMESPACES} namespaces`, unit: "µs/sync", better: "lower" };

async function measure(dist: string): Promise<number[]> {
  const load = <T>(path: string) => import(pathToFileURL(resolve(dist, path)).href) as Promise<T>;
  const { startTestServer } = await load<Harness>("src/apiserver/testing/harness.js");
  const { controllerContext, eventually } = await load<Testing>("src/controllers/testing.js");
  const { ReplicaSetController } = await load<ReplicaSets>("src/controllers/replicaset/controller.js");
  const { builtinModules } = await load<Api>("src/api/index.js");
  const t = await startTestServer({ modules: builtinModules() });
  const ctx = controllerContext(t);
  try {
    const controller = new ReplicaSetController(ctx);
    ctx.start();
    const client = ctx.client;
    const rsRef = { group: "apps", version: "v1", resource: "replicasets", namespaced: true };
    const podRef = { group: "", version: "v1", resource: "pods", namespaced: true };
    const perSet = Math.max(1, Math.floor(PODS / (NAMESPACES * SETS_PER_NAMESPACE)));
    const keys: string[] = [];
    const pods: { namespace: string; set: string; uid: string; i: number }[] = [];
    for (let n = 0; n < NAMESPACES; n++) {
      const namespace = `bench-${n}`;
      await client.create({ group: "", version: "v1", resource: "namespaces", namespaced: false }, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
      for (let s = 0; s < SETS_PER_NAMESPACE; s++) {
        const set = `rs-${s}`;
        const labels = { app: set };
        const rs = await client.create<ApiObject>(rsRef, {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          metadata: { name: set, namespace },
          spec: { replicas: perSet, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: "c", image: "busybox" }] } } },
        } as ApiObject);
        keys.push(`${namespace}/${set}`);
        for (let i = 0; i < perSet; i++) pods.push({ namespace, set, uid: rs.metadata.uid!, i });
      }
    }
    // The pods the controller would have made, made here: 32 at a time.
    for (let at = 0; at < pods.length; at += 32) {
      await Promise.all(
        pods.slice(at, at + 32).map((p) =>
          client.create(podRef, {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: `${p.set}-${p.i}`, namespace: p.namespace, labels: { app: p.set }, ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: p.set, uid: p.uid, controller: true, blockOwnerDeletion: true }] },
            spec: { containers: [{ name: "c", image: "busybox" }] },
          } as ApiObject),
        ),
      );
    }
    const podCache = ctx.informers.informerFor({ resource: podRef });
    await eventually("the pod cache filled", () => podCache.keys().length === pods.length, 60_000);
    // The first pass writes each status; the passes measured find nothing to do.
    for (const key of keys) await controller.sync(key);
    const samples: number[] = [];
    for (let run = 0; run < args.runs; run++) {
      const start = performance.now();
      let passes = 0;
      while (performance.now() - start < 500) {
        for (const key of keys) await controller.sync(key);
        passes++;
      }
      samples.push(((performance.now() - start) * 1000) / (passes * keys.length));
    }
    return samples;
  } finally {
    await ctx.stop();
    await t.close();
  }
}

const report: Report = {
  title: "controller sync with a big pod cache",
  comparedWith: baseline ? `the build in ${baseline}` : "nothing (pass --baseline=DIR, another build's dist, to compare)",
  runs: args.runs,
  metrics: [metric],
  samples: {},
};
report.samples["this build"] = { [metric.name]: await measure(ours) };
if (baseline !== undefined) report.samples["baseline"] = { [metric.name]: await measure(resolve(baseline)) };
printReport(report, args.json);
