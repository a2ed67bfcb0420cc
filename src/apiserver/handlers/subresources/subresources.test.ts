// Subresources as declarations: a toy one (testing/color-subresource.ts),
// added to the sample API's widgets' list, is routed, listed in discovery and
// OpenAPI, and refuses the verbs it does not list; connect subresources are
// reached by Upgrade only; every built-in declaration's verbs have code that
// serves them; the shared "only this part moves" rule and the verb check.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../../api/index.js";
import { namingFor } from "../../../machinery/naming.js";
import { findSubresource, type Subresource } from "../../../api/resource.js";
import { onlyMoving, status } from "../../../api/subresources/index.js";
import type { ApiObject } from "../../../machinery/index.js";
import { color } from "../../testing/color-subresource.js";
import { startTestServer, upgradeRefusal, type TestServer } from "../../testing/harness.js";
import { sampleApi, sampleApiWith } from "../../testing/sample-api.js";
import { SUBRESOURCE_HANDLERS, subresourceVerb, UPGRADE_HANDLERS } from "./index.js";

const W = "/apis/samples.orch.io/v1/namespaces/default/widgets";
/** A connect subresource with no code behind it: routing alone answers for it. */
const shell: Subresource = { name: "shell", verbs: ["create", "get"], connect: true };

const upgrade = upgradeRefusal;
const widget = (name: string, spec: Record<string, unknown>) => ({ apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name }, spec });

describe("a toy subresource: one declaration file, one line in the kind", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: [sampleApiWith({ widgetSubresources: [color(), shell] })] });
  });
  after(async () => t.close());

  test("routed: GET reads the parent, PUT moves only .spec.color", async () => {
    assert.equal((await t.request("POST", W, { body: widget("w", { color: "red", size: 2 }) })).status, 201);
    const got = await t.request("GET", `${W}/w/color`);
    assert.equal(got.status, 200, got.text);
    assert.equal(got.json.kind, "Widget");
    const put = await t.request("PUT", `${W}/w/color`, { body: widget("w", { color: "blue", size: 9 }) });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json.spec, { color: "blue", size: 2 }, "only the color moved");
    assert.equal((await t.request("GET", `${W}/w`)).json.spec.color, "blue");
  });

  test("verbs it does not list are a 405 naming it; a subresource the kind lacks is a 404", async () => {
    for (const [method, verb] of [["PATCH", "patch"], ["POST", "create"], ["DELETE", "delete"]] as const) {
      const r = await t.request(method, `${W}/w/color`, { rawBody: "{}", headers: { "content-type": "application/merge-patch+json" } });
      assert.equal(r.status, 405, `${method}: ${r.text}`);
      assert.equal(r.json.message, `${verb} is not supported on resources of kind "widgets/color.samples.orch.io"`);
    }
    const unknown = await t.request("GET", `${W}/w/shade`);
    assert.equal(unknown.status, 404);
  });

  test("a connect subresource: a plain request is a 400; an Upgrade to a subresource no connect code serves is a 400", async () => {
    const plain = await t.request("POST", `${W}/w/shell`);
    assert.deepEqual([plain.status, plain.json.message], [400, "Upgrade request required"]);
    const elsewhere = await upgrade(t, "GET", `${W}/w/color`);
    assert.equal(elsewhere.status, 400);
    assert.match(elsewhere.body, /websocket requests are served only by connect sub-resources/);
    const declaredOnly = await upgrade(t, "GET", `${W}/w/shell`);
    assert.equal(declaredOnly.status, 400, "declared, but no code serves it");
  });

  test("listed in discovery (legacy and aggregated) and in OpenAPI with its verbs", async () => {
    const list = (await t.request("GET", "/apis/samples.orch.io/v1")).json;
    const entry = list.resources.find((r: { name: string }) => r.name === "widgets/color");
    assert.deepEqual({ kind: entry.kind, verbs: entry.verbs }, { kind: "Widget", verbs: ["get", "update"] });
    const accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    const agg = (await t.request("GET", "/apis", { headers: { accept } })).json;
    const widgets = agg.items[0].versions[0].resources.find((r: { resource: string }) => r.resource === "widgets");
    assert.deepEqual(widgets.subresources.map((s: { subresource: string; verbs: string[] }) => [s.subresource, s.verbs]), [
      ["scale", ["get", "patch", "update"]],
      ["status", ["get", "patch", "update"]],
      ["color", ["get", "update"]],
      ["shell", ["create", "get"]],
    ]);
    const index = (await t.request("GET", "/openapi/v3")).json;
    const doc = (await t.request("GET", index.paths["apis/samples.orch.io/v1"].serverRelativeURL)).json;
    const path = doc.paths["/apis/samples.orch.io/v1/namespaces/{namespace}/widgets/{name}/color"];
    assert.deepEqual(Object.keys(path).filter((k) => k !== "parameters").sort(), ["get", "put"]);
  });
});

test("the sample API without the toy has no color subresource", () => {
  const widgets = sampleApi.resources({} as never).find((d) => d.resource === "widgets")!;
  assert.equal(findSubresource(widgets, "color"), undefined);
  assert.ok(findSubresource(widgets, "status"));
});

test("onlyMoving: a copy of the current object with one path from the input, removed when the input has none", () => {
  const current = { apiVersion: "v1", kind: "X", metadata: { name: "a" }, spec: { finalizers: ["k"], other: 1 }, status: { phase: "A" } } as ApiObject;
  const input = { metadata: { name: "b" }, spec: { finalizers: ["x", "y"], other: 2 }, status: { phase: "B" } } as unknown as ApiObject;
  assert.deepEqual(onlyMoving(current, input, ["spec", "finalizers"]), { ...current, spec: { finalizers: ["x", "y"], other: 1 } });
  assert.deepEqual(onlyMoving(current, { metadata: {} } as ApiObject, ["status"]), { apiVersion: "v1", kind: "X", metadata: { name: "a" }, spec: current["spec"] });
  assert.deepEqual(current["spec"], { finalizers: ["k"], other: 1 }, "the current object is not changed");
});

test("status: writes there move .status, labels and annotations (not the spec); main-resource writes keep the stored .status", () => {
  const decl = status();
  const current = { apiVersion: "v1", kind: "X", metadata: { name: "a", labels: { l: "1" } }, spec: { n: 1 }, status: { phase: "A" } } as ApiObject;
  const input = { ...current, metadata: { name: "a", annotations: { patchedstatus: "true" }, finalizers: ["x/y"] }, spec: { n: 2 }, status: { phase: "B" } } as ApiObject;
  const through = decl.prepareUpdate!(input, current);
  assert.deepEqual([through["spec"], through["status"]], [{ n: 1 }, { phase: "B" }]);
  assert.deepEqual(through.metadata, { name: "a", annotations: { patchedstatus: "true" } }, "labels and annotations as sent, nothing else");
  const kept = status({ metadata: [] }).prepareUpdate!(input, current);
  assert.deepEqual(kept.metadata, current.metadata, "a kind that resets metadata for status");
  const main = { ...current, spec: { n: 2 }, status: { phase: "B" } } as ApiObject;
  decl.prepareMainUpdate!(main, current);
  assert.deepEqual([main["spec"], main["status"]], [{ n: 2 }, { phase: "A" }]);
});

test("subresourceVerb: methods map to the declaration's verbs; others are a 405 naming resource/subresource", () => {
  const def = sampleApi.resources({} as never).find((d) => d.resource === "widgets")!;
  const decl = findSubresource(def, "status")!;
  assert.deepEqual(["GET", "PUT", "PATCH"].map((m) => subresourceVerb(def, decl, m)), ["get", "update", "patch"]);
  for (const m of ["POST", "DELETE", "OPTIONS"]) {
    assert.throws(() => subresourceVerb(def, decl, m), (err: { code?: number }) => err.code === 405);
  }
});

test("every verb of every built-in subresource is served: by its code, or as a get/update/patch of the parent", () => {
  const unserved: string[] = [];
  for (const def of builtinModules().flatMap((m) => m.resources(namingFor()))) {
    for (const sub of def.subresources ?? []) {
      for (const verb of sub.verbs) {
        const generic = (verb === "get" || verb === "update" || verb === "patch") && sub.responseKind === undefined;
        const served = sub.proxy === true || (sub.connect ? UPGRADE_HANDLERS[sub.name] !== undefined : SUBRESOURCE_HANDLERS[sub.name]?.[verb] !== undefined || generic);
        if (!served) unserved.push(`${def.resource}/${sub.name} ${verb}`);
      }
    }
  }
  assert.deepEqual(unserved, []);
});
