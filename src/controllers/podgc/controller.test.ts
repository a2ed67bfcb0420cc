// The pod garbage collector against a real API server, one pass at a time:
// terminated pods beyond the threshold, pods on nodes that no longer exist,
// terminating pods never scheduled. The test plays the node agent (phases).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import type { Pod } from "../../api/core/types.js";
import { MetricsRegistry } from "../../component/metrics/index.js";
import { controllerContext, metricValue, eventually, exists as existsOn, type TestContext } from "../testing.js";
import { PODS } from "../../api/resource-refs.js";
import { PodGcController } from "./controller.js";

describe("pod garbage collector", () => {
  let t: TestServer;
  let ctx: TestContext;
  let gc: PodGcController;
  const metrics = new MetricsRegistry();
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    ctx = controllerContext(t, { metrics, config: { terminatedPodGcThreshold: 2, podGcPeriodMs: 3_600_000 } });
    gc = new PodGcController(ctx, { quarantineMs: 0 });
    ctx.informers.informerFor({ resource: PODS });
    ctx.start();
  });
  after(async () => {
    await ctx.stop();
    await t.close();
  });

  const pod = (name: string, extra: { nodeName?: string; finalizers?: string[]; labels?: Record<string, string> } = {}) =>
    ctx.client.create<Pod>(PODS, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: "default", labels: { test: "podgc", ...extra.labels }, ...(extra.finalizers ? { finalizers: extra.finalizers } : {}) },
      spec: { ...(extra.nodeName ? { nodeName: extra.nodeName } : {}), containers: [{ name: "c", image: "busybox" }] },
    });
  const exists = (name: string) => existsOn(ctx.client, PODS, name, "default");
  const synced = (check: (pods: Pod[]) => boolean) =>
    eventually("the pod cache to catch up", () => check(ctx.informers.informerFor<Pod>({ resource: PODS }).list()));

  test("terminated pods beyond --terminated-pod-gc-threshold are deleted, running ones never", async () => {
    for (const name of ["done-1", "done-2", "done-3", "done-4"]) {
      const p = await pod(name, { labels: { kind: "done" } });
      await ctx.client.update(PODS, { ...p, status: { ...p.status, phase: name === "done-4" ? "Failed" : "Succeeded" } }, { subresource: "status" });
    }
    await pod("busy");
    await synced((pods) => pods.filter((p) => p.status?.phase === "Succeeded" || p.status?.phase === "Failed").length === 4);
    await gc.collect();
    const left = (await ctx.client.list<Pod>(PODS, { namespace: "default", labelSelector: { kind: "done" } })).items;
    assert.equal(left.length, 2);
    assert.equal(await exists("busy"), true);
    assert.equal(metricValue(metrics, "pod_gc_collector_force_delete_pods_total", { namespace: "default", reason: "terminated" }), 2);
  });

  test("pods bound to a node that does not exist are marked Failed and deleted", async () => {
    await pod("orphan", { nodeName: "ghost", finalizers: ["example.com/hold"] });
    await synced((pods) => pods.some((p) => p.metadata.name === "orphan"));
    await gc.collect();
    const p = await ctx.client.get<Pod>(PODS, { namespace: "default", name: "orphan" });
    assert.ok(p.metadata.deletionTimestamp, "deleted (held here by a test finalizer to look at it)");
    assert.equal(p.status?.phase, "Failed");
    assert.equal(p.status?.conditions?.find((c) => c.type === "DisruptionTarget")?.reason, "DeletionByPodGC");
    assert.equal(metricValue(metrics, "pod_gc_collector_force_delete_pods_total", { namespace: "default", reason: "orphaned" }), 1);
    await ctx.client.patch(PODS, { namespace: "default", name: "orphan", patch: { metadata: { finalizers: null } } });
  });

  test("a terminating pod that was never scheduled is force-deleted", async () => {
    await pod("limbo", { finalizers: ["example.com/hold"] });
    await ctx.client.delete(PODS, { namespace: "default", name: "limbo" });
    await synced((pods) => pods.some((p) => p.metadata.name === "limbo" && !!p.metadata.deletionTimestamp));
    await gc.collect();
    assert.equal(metricValue(metrics, "pod_gc_collector_force_delete_pods_total", { namespace: "default", reason: "unscheduled" }), 1);
    await ctx.client.patch(PODS, { namespace: "default", name: "limbo", patch: { metadata: { finalizers: null } } });
    await eventually("limbo gone", async () => !(await exists("limbo")));
  });
});
