// Quota admission and the quota controller on a real API server: status
// filled in, creates over the limit refused with upstream's message,
// concurrent creates never exceed the limit, deletes give quota back, scopes
// and compute resources counted.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { ResourceQuota } from "../../api/core/index.js";
import { isApiError, type ApiObject } from "../../machinery/index.js";
import { eventually, type TestContext } from "../testing.js";
import { useControllers } from "../workload/testing.js";
import { ResourceQuotaController } from "./controller.js";
import { CONFIGMAPS, NAMESPACES, PODS, REPLICASETS, RESOURCEQUOTAS } from "../../api/resource-refs.js";

const pod = (name: string, namespace: string, resources?: object, extra: object = {}): ApiObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace },
  spec: { containers: [{ name: "c", image: "busybox", ...(resources ? { resources } : {}) }], ...extra },
});

describe("resource quota: admission and controller", () => {
  let ctx: TestContext;
  useControllers((c) => {
    ctx = c;
    return [new ResourceQuotaController(c, { resyncMs: 60_000 }).run()];
  });

  const quota = async (namespace: string, name: string, spec: object) => {
    await ctx.client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }).catch(() => undefined);
    await ctx.client.create(RESOURCEQUOTAS, { apiVersion: "v1", kind: "ResourceQuota", metadata: { name, namespace }, spec });
    return eventually(`${name} status`, async () => {
      const rq = await ctx.client.get<ResourceQuota>(RESOURCEQUOTAS, { namespace, name });
      return rq.status?.used !== undefined ? rq : undefined;
    });
  };
  const used = async (namespace: string, name: string) => (await ctx.client.get<ResourceQuota>(RESOURCEQUOTAS, { namespace, name })).status?.used ?? {};

  test("the controller reports hard and used; a create over quota is a 403 with upstream's message; a delete gives quota back", async () => {
    const rq = await quota("q1", "pods", { hard: { pods: "2", configmaps: "1", "count/configmaps": "5" } });
    assert.deepEqual(rq.status, { hard: { pods: "2", configmaps: "1", "count/configmaps": "5" }, used: { pods: "0", configmaps: "0", "count/configmaps": "0" } });
    await ctx.client.create(PODS, pod("a", "q1"));
    await ctx.client.create(PODS, pod("b", "q1"));
    assert.equal((await used("q1", "pods"))["pods"], "2", "admission charged the quota");
    const err = await ctx.client.create(PODS, pod("c", "q1")).then(() => undefined, (e: unknown) => e);
    assert.ok(isApiError(err, "Forbidden"), String(err));
    assert.equal((err as Error).message, 'pods "c" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2');
    await ctx.client.create(CONFIGMAPS, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "one", namespace: "q1" } });
    const cm = await ctx.client.create(CONFIGMAPS, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "two", namespace: "q1" } }).then(() => undefined, (e: unknown) => e);
    assert.equal((cm as Error).message, 'configmaps "two" is forbidden: exceeded quota: pods, requested: configmaps=1, used: configmaps=1, limited: configmaps=1');
    await ctx.client.delete(PODS, { namespace: "q1", name: "a", gracePeriodSeconds: 0 });
    await eventually("pods used back to 1", async () => (await used("q1", "pods"))["pods"] === "1");
    await ctx.client.create(PODS, pod("c", "q1"));
  });

  test("count/replicasets.apps: a kind counted only by count/ is watched once a quota counts it, so a delete gives quota back at once", async () => {
    const rq = await quota("q-rs", "rs", { hard: { "count/replicasets.apps": "5" } });
    assert.deepEqual(rq.status?.used, { "count/replicasets.apps": "0" });
    const rs = { apiVersion: "apps/v1", kind: "ReplicaSet", metadata: { name: "test-rs", namespace: "q-rs" }, spec: { replicas: 0, selector: { matchLabels: { name: "nginx" } }, template: { metadata: { labels: { name: "nginx" } }, spec: { containers: [{ name: "nginx", image: "nginx" }] } } } };
    await ctx.client.create(REPLICASETS, rs);
    await eventually("the replica set is counted", async () => (await used("q-rs", "rs"))["count/replicasets.apps"] === "1");
    await ctx.client.delete(REPLICASETS, { namespace: "q-rs", name: "test-rs" });
    // Well before the resync (a minute here): the deletion itself triggers the recount.
    await eventually("the replica set's quota is given back", async () => (await used("q-rs", "rs"))["count/replicasets.apps"] === "0", 10_000);
  });

  test("concurrent creates never take more than the limit (compare-and-swap on the quota)", async () => {
    await quota("q2", "few", { hard: { pods: "3" } });
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => ctx.client.create(PODS, pod(`p${i}`, "q2"))));
    const ok = results.filter((r) => r.status === "fulfilled").length;
    assert.equal(ok, 3);
    for (const r of results) if (r.status === "rejected") assert.match(String((r.reason as Error).message), /exceeded quota: few, requested: pods=1, used: pods=3, limited: pods=3/);
    assert.equal((await ctx.client.list(PODS, { namespace: "q2" })).items.length, 3);
    assert.equal((await used("q2", "few"))["pods"], "3");
  });

  test("compute resources and scopes: requests and limits summed; BestEffort and NotBestEffort count apart; unknown status refuses", async () => {
    await quota("q3", "compute", { hard: { "requests.cpu": "1", "limits.memory": "1Gi", "requests.memory": "1Gi" } });
    await quota("q3", "besteffort", { hard: { pods: "1" }, scopes: ["BestEffort"] });
    // A pod without requests uses none of "compute"'s resources: only the BestEffort quota counts it.
    await ctx.client.create(PODS, pod("be", "q3"));
    const second = await ctx.client.create(PODS, pod("be2", "q3")).then(() => undefined, (e: unknown) => e);
    assert.match((second as Error).message, /exceeded quota: besteffort, requested: pods=1, used: pods=1, limited: pods=1/);
    const sized = { requests: { cpu: "600m", memory: "512Mi" }, limits: { memory: "512Mi" } };
    await ctx.client.create(PODS, pod("s1", "q3", sized));
    await eventually("used", async () => {
      const u = await used("q3", "compute");
      return u["requests.cpu"] === "600m" && u["requests.memory"] === "512Mi" && u["limits.memory"] === "512Mi";
    });
    const over = await ctx.client.create(PODS, pod("s2", "q3", sized)).then(() => undefined, (e: unknown) => e);
    assert.equal((over as Error).message, 'pods "s2" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1');
    // A quota the controller has not counted yet: its status is unknown.
    await ctx.client.create(RESOURCEQUOTAS, { apiVersion: "v1", kind: "ResourceQuota", metadata: { name: "fresh", namespace: "q3" }, spec: { hard: { "count/configmaps": "9" } } });
    const unknown = await ctx.client.create(CONFIGMAPS, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "q3" } }).then(() => undefined, (e: unknown) => e);
    if (unknown !== undefined) assert.match((unknown as Error).message, /status unknown for quota: fresh, resources: count\/configmaps/);
  });
});
