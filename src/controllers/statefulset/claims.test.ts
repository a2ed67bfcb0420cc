// volumeClaimTemplates and persistentVolumeClaimRetentionPolicy against a real
// API server (no garbage collector runs here: what the policy decides shows
// as the claims' owner references, which the collector then acts on; the
// deletions themselves are test/statefulset-claims.e2e.test.ts's). Gate
// StatefulSetAutoDeletePVC on (the default) and off.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { StatefulSet } from "../../api/apps/types.js";
import type { PersistentVolumeClaim } from "../../api/core/persistent-volume-types.js";
import { eventually, type TestContext } from "../testing.js";
import { type Pod } from "../workload/index.js";
import { scaleTo, useControllers } from "../workload/testing.js";
import { StatefulSetController } from "./controller.js";
import { PERSISTENT_VOLUME_CLAIMS, PODS, STATEFULSETS } from "../../api/resource-refs.js";

const set = (name: string, policy?: { whenDeleted?: string; whenScaled?: string }, replicas = 2): StatefulSet => ({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name, namespace: "default" },
  spec: {
    replicas,
    serviceName: name,
    podManagementPolicy: "Parallel",
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "db" }], volumes: [{ name: "data", emptyDir: {} }, { name: "other", emptyDir: {} }] } },
    volumeClaimTemplates: [{ metadata: { name: "data", labels: { tier: "db" } }, spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } }],
    ...(policy ? { persistentVolumeClaimRetentionPolicy: policy } : {}),
  },
});

function helpers(get: () => TestContext) {
  const claim = (name: string) => get().client.get<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS, { namespace: "default", name }).catch(() => undefined);
  const owners = async (name: string) => ((await claim(name))?.metadata.ownerReferences ?? []).map((r) => `${r.kind}/${r.name}`).sort().join(",");
  const pod = (name: string) => get().client.get<Pod>(PODS, { namespace: "default", name }).catch(() => undefined);
  return { claim, owners, pod };
}

describe("statefulset claims (StatefulSetAutoDeletePVC on)", () => {
  let ctx: TestContext;
  useControllers((c) => {
    ctx = c;
    return [new StatefulSetController(c).run()];
  });
  const { claim, owners, pod } = helpers(() => ctx);

  test("each pod gets <template>-<set>-<ordinal>, made before it, labelled with the selector, mounted as the template's volume", async () => {
    await ctx.client.create(STATEFULSETS, set("db"));
    const p0 = await eventually("db-0", () => pod("db-0"));
    const c0 = await claim("data-db-0");
    assert.ok(c0, "the claim exists once the pod does");
    assert.ok(Date.parse(c0.metadata.creationTimestamp!) <= Date.parse(p0.metadata.creationTimestamp!));
    assert.deepEqual(c0.metadata.labels, { tier: "db", app: "db" });
    assert.deepEqual(c0.spec?.resources?.requests, { storage: "1Gi" });
    const volumes = (p0.spec as { volumes: { name: string; persistentVolumeClaim?: { claimName: string }; emptyDir?: unknown }[] }).volumes;
    assert.deepEqual(volumes.map((v) => [v.name, v.persistentVolumeClaim?.claimName ?? "emptyDir"]), [["data", "data-db-0"], ["other", "emptyDir"]]);
    await eventually("db-1 and its claim", async () => (await pod("db-1")) !== undefined && (await claim("data-db-1")) !== undefined);
    assert.equal(await owners("data-db-0"), "", "Retain/Retain (the default): no owner");
  });

  test("a pod whose claim was deleted gets a new one before it is made again", async () => {
    await ctx.client.delete(PERSISTENT_VOLUME_CLAIMS, { namespace: "default", name: "data-db-1" });
    // No protection controller runs here: take its finalizer off as it would once no pod uses the claim.
    await ctx.client.patch(PERSISTENT_VOLUME_CLAIMS, { namespace: "default", name: "data-db-1", patch: { metadata: { finalizers: null } } });
    await ctx.client.delete(PODS, { namespace: "default", name: "db-1" });
    await eventually("db-1 back with a claim", async () => (await pod("db-1")) !== undefined && (await claim("data-db-1")) !== undefined);
  });

  test("whenDeleted=Delete: the claims are owned by the set", async () => {
    await ctx.client.create(STATEFULSETS, set("wd", { whenDeleted: "Delete", whenScaled: "Retain" }));
    await eventually("both claims owned by the set", async () => (await owners("data-wd-0")) === "StatefulSet/wd" && (await owners("data-wd-1")) === "StatefulSet/wd");
  });

  test("whenScaled=Delete: a scaled-away pod's claim is owned by that pod; the kept ones by the set (whenDeleted=Delete) or none (Retain)", async () => {
    await ctx.client.create(STATEFULSETS, set("ws", { whenDeleted: "Retain", whenScaled: "Delete" }));
    await ctx.client.create(STATEFULSETS, set("both", { whenDeleted: "Delete", whenScaled: "Delete" }));
    await eventually("pods of both sets", async () => (await pod("ws-1")) !== undefined && (await pod("both-1")) !== undefined);
    await eventually("claims of 'both' owned by the set", async () => (await owners("data-both-1")) === "StatefulSet/both");
    assert.equal(await owners("data-ws-1"), "");
    const ws1 = (await pod("ws-1"))!;
    const both1 = (await pod("both-1"))!;
    await scaleTo(ctx.client, STATEFULSETS, "ws", 1);
    await scaleTo(ctx.client, STATEFULSETS, "both", 1);
    await eventually("the scaled-away claims owned by their pods", async () => (await owners("data-ws-1")) === "Pod/ws-1" && (await owners("data-both-1")) === "Pod/both-1");
    assert.equal((await claim("data-ws-1"))!.metadata.ownerReferences![0]!.uid, ws1.metadata.uid);
    assert.equal((await claim("data-both-1"))!.metadata.ownerReferences![0]!.uid, both1.metadata.uid);
    assert.equal(await owners("data-ws-0"), "");
    assert.equal(await owners("data-both-0"), "StatefulSet/both");
    await eventually("the pods scaled away are gone", async () => (await pod("ws-1")) === undefined && (await pod("both-1")) === undefined);
  });

  test("a claim still being deleted holds its pod back until it is gone", async () => {
    const pending = { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "data-hold-0", namespace: "default", finalizers: ["example.com/hold"] }, spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } };
    await ctx.client.create(PERSISTENT_VOLUME_CLAIMS, pending as PersistentVolumeClaim);
    await ctx.client.delete(PERSISTENT_VOLUME_CLAIMS, { namespace: "default", name: "data-hold-0" });
    await ctx.client.create(STATEFULSETS, set("hold", undefined, 1));
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await pod("hold-0"), undefined, "no pod while its claim is terminating");
    await ctx.client.patch(PERSISTENT_VOLUME_CLAIMS, { namespace: "default", name: "data-hold-0", patch: { metadata: { finalizers: null } } });
    const p = await eventually("hold-0 once the old claim is gone", () => pod("hold-0"), 10_000);
    const fresh = await claim("data-hold-0");
    assert.ok(fresh && !fresh.metadata.deletionTimestamp, "a new claim");
    assert.ok(p);
  });
});

describe("statefulset claims (StatefulSetAutoDeletePVC off)", () => {
  let ctx: TestContext;
  useControllers((c) => {
    ctx = c;
    return [new StatefulSetController(c, { autoDeletePVC: false }).run()];
  });
  const { claim, owners, pod } = helpers(() => ctx);

  test("claims are still made and mounted, but the retention policy sets no owner: they are retained", async () => {
    await ctx.client.create(STATEFULSETS, set("off", { whenDeleted: "Delete", whenScaled: "Delete" }));
    await eventually("off-1 and its claim", async () => (await pod("off-1")) !== undefined && (await claim("data-off-1")) !== undefined);
    await scaleTo(ctx.client, STATEFULSETS, "off", 1);
    await eventually("off-1 gone", async () => (await pod("off-1")) === undefined);
    assert.equal(await owners("data-off-0"), "");
    assert.equal(await owners("data-off-1"), "");
  });
});
