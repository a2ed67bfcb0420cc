// The disruption controller and pods/eviction on a real API server: budget
// status from ready pods and controllers' scale, 429 with the budget's cause
// while no disruption is allowed, a disruption spent per eviction, pods not
// running evicted regardless, malformed evictions refused.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { PodDisruptionBudget } from "../../api/policy/index.js";
import type { ApiObject } from "../../machinery/index.js";
import { isApiError } from "../../machinery/index.js";
import { eventually, type TestContext } from "../testing.js";
import { markPodReady, useControllers } from "../workload/testing.js";
import { DisruptionController } from "./controller.js";
import { PODDISRUPTIONBUDGETS, PODS, REPLICASETS } from "../../api/resource-refs.js";
import type { Pod } from "../workload/index.js";

const pod = (name: string, labels: Record<string, string>, owner?: ApiObject): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name,
    namespace: "default",
    labels,
    ...(owner ? { ownerReferences: [{ apiVersion: "apps/v1", kind: owner.kind!, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true }] } : {}),
  },
  spec: { containers: [{ name: "c", image: "x" }] },
});

describe("disruption controller and pods/eviction", () => {
  let ctx: TestContext;
  useControllers((c) => {
    ctx = c;
    return [new DisruptionController(c).run()];
  });
  const budget = (name: string) => ctx.client.get<PodDisruptionBudget>(PODDISRUPTIONBUDGETS, { namespace: "default", name });
  const evict = (name: string, body: object = { apiVersion: "policy/v1", kind: "Eviction", metadata: { name, namespace: "default" } }) =>
    ctx.client.create(PODS, body as ApiObject, { namespace: "default", name, subresource: "eviction" } as never).then(() => undefined, (e: unknown) => e);

  test("minAvailable as a number: refused with 429 and the budget's cause while at the minimum; a disruption spent per eviction", async () => {
    for (const n of ["db-0", "db-1"]) await markPodReady(ctx.client, await ctx.client.create(PODS, pod(n, { app: "db" })));
    await ctx.client.create(PODDISRUPTIONBUDGETS, { apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: { name: "db", namespace: "default" }, spec: { minAvailable: 2, selector: { matchLabels: { app: "db" } } } } as ApiObject);
    const st = await eventually("status", async () => {
      const s = (await budget("db")).status;
      return s?.expectedPods === 2 && s.currentHealthy === 2 ? s : undefined;
    });
    assert.equal(st.desiredHealthy, 2);
    assert.equal(st.disruptionsAllowed, 0);
    assert.equal(st.observedGeneration, 1);
    assert.deepEqual(st.conditions?.map((c) => [c.type, c.status, c.reason]), [["DisruptionAllowed", "False", "InsufficientPods"]]);

    const refused = await evict("db-0");
    assert.ok(isApiError(refused, "TooManyRequests"), String(refused));
    assert.equal(refused.status.code, 429);
    assert.equal(refused.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.deepEqual(refused.status.details?.causes, [{ reason: "DisruptionBudget", message: "The disruption budget db needs 2 healthy pods and has 2 currently" }]);

    const pdb = await budget("db");
    await ctx.client.update(PODDISRUPTIONBUDGETS, { ...pdb, spec: { ...pdb.spec, minAvailable: 1 } });
    await eventually("one disruption allowed", async () => (await budget("db")).status?.disruptionsAllowed === 1 && (await budget("db")).status?.observedGeneration === 2);
    assert.equal(await evict("db-0"), undefined);
    const gone = await ctx.client.get(PODS, { namespace: "default", name: "db-0" }).then(() => false, (e: unknown) => isApiError(e, "NotFound"));
    assert.ok(gone, "the evicted pod is deleted");
    // The disruption is spent at once, before the controller sees the pod go.
    const second = await evict("db-1");
    assert.ok(isApiError(second, "TooManyRequests"), String(second));
    await eventually("recounted", async () => {
      const s = (await budget("db")).status;
      return s?.currentHealthy === 1 && s.expectedPods === 1 && s.disruptionsAllowed === 0 && s.disruptedPods === undefined;
    });
  });

  test("maxUnavailable counts the controller's scale; pending pods and pods without a budget are evicted at once", async () => {
    const rs = await ctx.client.create(REPLICASETS, {
      apiVersion: "apps/v1", kind: "ReplicaSet", metadata: { name: "web", namespace: "default" },
      spec: { replicas: 3, selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "x" }] } } },
    } as ApiObject);
    for (const n of ["web-a", "web-b"]) await markPodReady(ctx.client, await ctx.client.create(PODS, pod(n, { app: "web" }, rs)));
    await ctx.client.create(PODS, pod("web-pending", { app: "web" }, rs));
    await ctx.client.create(PODDISRUPTIONBUDGETS, { apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: { name: "web", namespace: "default" }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: "web" } } } } as ApiObject);
    const st = await eventually("status", async () => {
      const s = (await budget("web")).status;
      return s?.expectedPods === 3 ? s : undefined;
    });
    assert.deepEqual([st.desiredHealthy, st.currentHealthy, st.disruptionsAllowed], [2, 2, 0]);
    assert.ok(isApiError(await evict("web-a"), "TooManyRequests"));
    assert.equal(await evict("web-pending"), undefined, "a pending pod needs no budget");
    await ctx.client.create(PODS, pod("loner", { app: "none" }));
    assert.equal(await evict("loner"), undefined);
  });

  test("malformed evictions: name mismatch, wrong kind, unknown pod", async () => {
    await ctx.client.create(PODS, pod("x", { app: "x" }));
    const mismatch = await ctx.client.request({
      method: "POST",
      path: "/api/v1/namespaces/default/pods/x/eviction",
      body: JSON.stringify({ apiVersion: "policy/v1", kind: "Eviction", metadata: { name: "y" } }),
      headers: { "content-type": "application/json", accept: "application/json" },
    });
    assert.equal(mismatch.status, 400);
    assert.equal(JSON.parse(mismatch.body.toString()).message, "name in URL does not match name in Eviction object");
    const kind = await evict("x", { apiVersion: "policy/v1", kind: "Pod", metadata: { name: "x" } });
    assert.ok(isApiError(kind, "BadRequest"), String(kind));
    const missing = await evict("nope");
    assert.ok(isApiError(missing, "NotFound"), String(missing));
    const beta = await evict("x", { apiVersion: "policy/v1beta1", kind: "Eviction", metadata: { name: "x" } });
    assert.equal(beta, undefined, "v1beta1 Evictions are accepted");
  });
});
