// The garbage collector against a real API server (sample API, widgets
// owning widgets and namespaces owning widgets): background, orphan and
// foreground deletion, dangling owners, and a live owner that keeps its
// dependents.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { sampleApi } from "../../apiserver/testing/sample-api.js";
import { isApiError, type ApiObject, type OwnerReference } from "../../machinery/index.js";
import type { ResourceRef } from "../../client/index.js";
import { controllerOnTestServer, eventually } from "../testing.js";
import { GarbageCollector } from "./controller.js";
import { NAMESPACES } from "../../api/resource-refs.js";

const WIDGETS: ResourceRef = { group: "samples.orch.io", version: "v1", resource: "widgets", namespaced: true };

function ownedBy(owner: ApiObject, extra: Partial<OwnerReference> = {}): OwnerReference {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name!, uid: owner.metadata.uid!, ...extra };
}

describe("garbage collector", () => {
  let gc: GarbageCollector;
  const fixture = controllerOnTestServer((ctx) => (gc = new GarbageCollector(ctx, { rediscoverEveryMs: 60_000 })), {
    modules: [sampleApi],
    ready: (ctx) => eventually("the monitors to sync", () => ctx.informers.waitForSync().then((ok) => ok && gc.graph.size > 0)),
  });

  const create = (name: string, options: { owners?: OwnerReference[]; finalizers?: string[] } = {}) =>
    fixture.ctx.client.create(WIDGETS, {
      apiVersion: "samples.orch.io/v1",
      kind: "Widget",
      metadata: { name, namespace: "default", ...(options.owners ? { ownerReferences: options.owners } : {}), ...(options.finalizers ? { finalizers: options.finalizers } : {}) },
      spec: { color: "red" },
    });
  const get = async (name: string): Promise<ApiObject | undefined> => {
    try {
      return await fixture.ctx.client.get(WIDGETS, { namespace: "default", name });
    } catch (err) {
      if (isApiError(err, "NotFound")) return undefined;
      throw err;
    }
  };
  const gone = (name: string) => eventually(`${name} to be deleted`, async () => (await get(name)) === undefined);

  test("background: deleting the owner deletes its dependents, and theirs", async () => {
    const owner = await create("bg-owner");
    const child = await create("bg-child", { owners: [ownedBy(owner)] });
    await create("bg-grandchild", { owners: [ownedBy(child)] });
    await fixture.ctx.client.delete(WIDGETS, { namespace: "default", name: "bg-owner" });
    await gone("bg-child");
    await gone("bg-grandchild");
  });

  test("a dependent with a live owner stays; a dependent whose owner never existed goes", async () => {
    const owner = await create("live-owner");
    await create("kept", { owners: [ownedBy(owner)] });
    await create("dangling", { owners: [{ apiVersion: "samples.orch.io/v1", kind: "Widget", name: "nobody", uid: "00000000-0000-0000-0000-000000000001" }] });
    await gone("dangling");
    assert.ok(await get("kept"));
    // Two owners, one gone: the dependent stays and lets go of the gone one.
    const other = await create("second-owner");
    await create("two-owners", { owners: [ownedBy(owner), ownedBy(other)] });
    await fixture.ctx.client.delete(WIDGETS, { namespace: "default", name: "second-owner" });
    await eventually("the reference to the deleted owner to go", async () => (await get("two-owners"))?.metadata.ownerReferences?.length === 1);
    assert.equal((await get("two-owners"))?.metadata.ownerReferences?.[0]?.name, "live-owner");
  });

  test("orphan: the dependents stay, without the reference; then the owner goes", async () => {
    const owner = await create("orphan-owner");
    await create("orphan-child", { owners: [ownedBy(owner, { controller: true, blockOwnerDeletion: true })] });
    const other = await create("orphan-other-owner");
    await create("orphan-two", { owners: [ownedBy(owner), ownedBy(other)] });
    const marked = await fixture.ctx.client.delete(WIDGETS, { namespace: "default", name: "orphan-owner", propagationPolicy: "Orphan" });
    assert.deepEqual((marked as ApiObject).metadata.finalizers, ["orphan"]);
    await gone("orphan-owner");
    const child = await get("orphan-child");
    assert.ok(child, "the dependent lives on");
    assert.equal(child.metadata.ownerReferences, undefined);
    assert.deepEqual((await get("orphan-two"))?.metadata.ownerReferences?.map((r) => r.name), ["orphan-other-owner"]);
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(await get("orphan-child"), "and is not collected later");
  });

  test("foreground: blocking dependents are deleted first, the owner waits for them", async () => {
    const owner = await create("fg-owner");
    // The dependent holds its own finalizer, so the test can see the owner wait.
    await create("fg-child", { owners: [ownedBy(owner, { blockOwnerDeletion: true })], finalizers: ["example.com/hold"] });
    await create("fg-free", { owners: [ownedBy(owner)] });
    await fixture.ctx.client.delete(WIDGETS, { namespace: "default", name: "fg-owner", propagationPolicy: "Foreground" });
    await eventually("the dependent to be deleted", async () => !!(await get("fg-child"))?.metadata.deletionTimestamp);
    await gone("fg-free");
    const waiting = await get("fg-owner");
    assert.ok(waiting, "the owner waits for its blocking dependent");
    assert.deepEqual(waiting.metadata.finalizers, ["foregroundDeletion"]);
    await new Promise((r) => setTimeout(r, 150));
    assert.ok(await get("fg-owner"), "still waiting");
    await fixture.ctx.client.patch(WIDGETS, { namespace: "default", name: "fg-child", patch: { metadata: { finalizers: null } } });
    await gone("fg-child");
    await gone("fg-owner");
  });

  test("a cluster-scoped owner (a namespace) of namespaced dependents", async () => {
    const ns = await fixture.ctx.client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "owner-ns" } });
    await create("owned-by-ns", { owners: [ownedBy(ns)] });
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(await get("owned-by-ns"));
    await fixture.ctx.client.delete(NAMESPACES, { name: "owner-ns" });
    await gone("owned-by-ns");
  });
});
