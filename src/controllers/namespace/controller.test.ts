// The namespace controller against a real API server (sample API): deleting a
// namespace deletes what is in it, waits for content held by finalizers,
// reports why it waits, and only then lets the namespace go.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { sampleApi } from "../../apiserver/testing/sample-api.js";
import { isApiError, type ApiObject } from "../../machinery/index.js";
import type { ResourceRef } from "../../client/index.js";
import { controllerOnTestServer, eventually, exists as existsOn, type TestContext } from "../testing.js";
import { NamespaceController } from "./controller.js";
import { NAMESPACES } from "../../api/resource-refs.js";

const WIDGETS: ResourceRef = { group: "samples.orch.io", version: "v1", resource: "widgets", namespaced: true };

interface Namespace extends ApiObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: string; conditions?: { type: string; status: string; reason: string; message: string }[] };
}

const widget = (namespace: string, name: string, finalizers?: string[]): ApiObject => ({
  apiVersion: "samples.orch.io/v1",
  kind: "Widget",
  metadata: { name, namespace, ...(finalizers ? { finalizers } : {}) },
  spec: { color: "red" },
});

const exists = (ctx: TestContext, ref: ResourceRef, name: string, namespace?: string) => existsOn(ctx.client, ref, name, namespace);

describe("namespace controller", () => {
  const fixture = controllerOnTestServer((ctx) => new NamespaceController(ctx), { modules: [sampleApi] });

  test("deleting a namespace deletes its widgets, waits for finalizers, then the namespace goes", async () => {
    const { client } = fixture.ctx;
    await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "doomed" }, spec: { finalizers: ["kubernetes"] } });
    for (const name of ["a", "b"]) await client.create(WIDGETS, widget("doomed", name));
    await client.create(WIDGETS, widget("doomed", "held", ["example.com/hold"]));
    await client.create(WIDGETS, widget("default", "bystander"));

    const marked = (await client.delete(NAMESPACES, { name: "doomed" })) as Namespace;
    assert.ok(marked.metadata.deletionTimestamp, "held by spec.finalizers");

    await eventually("the widgets without finalizers to go", async () => !(await exists(fixture.ctx, WIDGETS, "a", "doomed")) && !(await exists(fixture.ctx, WIDGETS, "b", "doomed")));
    // One delete-collection marks them in key order; "held" may be marked just after "a" and "b" go.
    await eventually("the held widget to be terminating", async () => !!(await client.get(WIDGETS, { namespace: "doomed", name: "held" })).metadata.deletionTimestamp);
    const waiting = await eventually("the namespace to say what it waits for", async () => {
      const ns = await client.get<Namespace>(NAMESPACES, { name: "doomed" });
      const c = ns.status?.conditions?.find((x) => x.type === "NamespaceFinalizersRemaining");
      return c?.status === "True" ? ns : undefined;
    });
    assert.equal(waiting.status?.phase, "Terminating");
    const conditions = Object.fromEntries((waiting.status?.conditions ?? []).map((c) => [c.type, c]));
    assert.equal(conditions["NamespaceContentRemaining"]?.message, "Some resources are remaining: widgets.samples.orch.io has 1 resource instances");
    assert.equal(conditions["NamespaceFinalizersRemaining"]?.message, "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances");
    assert.deepEqual(waiting.spec?.finalizers, ["kubernetes"], "the namespace keeps its finalizer while content remains");

    const refused = await client.create(WIDGETS, widget("doomed", "late")).catch((err: unknown) => err);
    assert.ok(isApiError(refused, "Forbidden"), "no new content in a terminating namespace");

    await client.patch(WIDGETS, { namespace: "doomed", name: "held", patch: { metadata: { finalizers: null } } });
    await eventually("the namespace to go", async () => !(await exists(fixture.ctx, NAMESPACES, "doomed")));
    assert.equal(await exists(fixture.ctx, WIDGETS, "bystander", "default"), true, "other namespaces are untouched");
  });

  test("a namespace held by someone else's finalizer is emptied but left to that finalizer", async () => {
    const { client } = fixture.ctx;
    await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "shared", finalizers: ["example.com/other"] }, spec: { finalizers: ["kubernetes"] } });
    await client.create(WIDGETS, widget("shared", "w"));
    await client.delete(NAMESPACES, { name: "shared" });
    await eventually("our finalizer to be removed", async () => {
      const ns = await client.get<Namespace>(NAMESPACES, { name: "shared" });
      return (ns.spec?.finalizers ?? []).length === 0;
    });
    assert.equal(await exists(fixture.ctx, WIDGETS, "w", "shared"), false);
    const ns = await client.get<Namespace>(NAMESPACES, { name: "shared" });
    assert.deepEqual(ns.metadata.finalizers, ["example.com/other"], "not ours to remove");
    await client.patch(NAMESPACES, { name: "shared", patch: { metadata: { finalizers: null } } });
    await eventually("the namespace to go", async () => !(await exists(fixture.ctx, NAMESPACES, "shared")));
  });

  test("a namespace that is not being deleted is left alone", async () => {
    const { client } = fixture.ctx;
    await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "alive" }, spec: { finalizers: ["kubernetes"] } });
    await client.create(WIDGETS, widget("alive", "stays"));
    const controller = new NamespaceController(fixture.ctx);
    assert.equal(await controller.sync("alive"), undefined);
    assert.equal(await exists(fixture.ctx, WIDGETS, "stays", "alive"), true);
    assert.equal(await controller.sync("no-such-namespace"), undefined);
  });
});
