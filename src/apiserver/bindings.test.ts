// The top-level `bindings` resource (POST /api/v1/namespaces/NS/bindings) on
// the real server and store: the same write, answers and errors as
// pods/NAME/binding, for the pod the Binding names; create-only, listed by
// discovery as upstream's.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../api/index.js";
import { startTestServer, type TestServer } from "./testing/harness.js";

const PODS = "/api/v1/namespaces/default/pods";
const BINDINGS = "/api/v1/namespaces/default/bindings";
const pod = (name: string) => ({ apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { containers: [{ name: "c", image: "busybox" }] } });
const binding = (name: string | undefined, node: string, namespace?: string) => ({ apiVersion: "v1", kind: "Binding", metadata: { ...(name !== undefined ? { name } : {}), ...(namespace ? { namespace } : {}) }, target: { kind: "Node", name: node } });

describe("top-level bindings", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    for (const name of ["a", "b", "c"]) assert.equal((await t.request("POST", PODS, { body: pod(name) })).status, 201);
  });
  after(() => t?.close());

  test("discovery lists bindings in core v1: namespaced, create only, kind Binding", async () => {
    const v1 = await t.request("GET", "/api/v1");
    const r = v1.json.resources.find((x: any) => x.name === "bindings");
    assert.ok(r, "bindings listed");
    assert.deepEqual([r.namespaced, r.kind, r.verbs], [true, "Binding", ["create"]]);
  });

  test("a POST binds the pod its body names: nodeName and PodScheduled set, a 201 Success Status", async () => {
    const r = await t.request("POST", BINDINGS, { body: binding("a", "node-1") });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual([r.json.kind, r.json.status], ["Status", "Success"]);
    const a = (await t.request("GET", `${PODS}/a`)).json;
    assert.equal(a.spec.nodeName, "node-1");
    assert.equal(a.status.conditions.find((c: any) => c.type === "PodScheduled")?.status, "True");
  });

  test("the errors are the binding subresource's: 409 when bound, 404 for a missing pod, 409 for a bad target", async () => {
    const cases: [string, ReturnType<typeof binding>][] = [
      ["a", binding("a", "node-2")],
      ["missing", binding("missing", "node-1")],
      ["b", { ...binding("b", ""), target: { kind: "Service", name: "x" } }],
      ["b", { ...binding("b", ""), target: { kind: "Node", name: "" } }],
    ];
    for (const [name, body] of cases) {
      const top = await t.request("POST", BINDINGS, { body });
      const sub = await t.request("POST", `${PODS}/${name}/binding`, { body });
      assert.ok(top.status >= 400, top.text);
      assert.deepEqual([top.status, top.json.reason, top.json.message, top.json.details], [sub.status, sub.json.reason, sub.json.message, sub.json.details], `${name}: ${top.text} vs ${sub.text}`);
    }
    const bound = await t.request("POST", BINDINGS, { body: binding("a", "node-2") });
    assert.equal(bound.status, 409);
    assert.equal(bound.json.message, 'Operation cannot be fulfilled on pods/binding "a": pod a is already assigned to node "node-1"');
    const missing = await t.request("POST", BINDINGS, { body: binding("missing", "node-1") });
    assert.equal(missing.status, 404);
    assert.equal(missing.json.message, 'pods "missing" not found');
    assert.equal((await t.request("GET", `${PODS}/b`)).json.spec.nodeName, undefined, "refused bindings change nothing");
  });

  test("bad requests: no name, another namespace, other methods and paths; the server stays up", async () => {
    const noName = await t.request("POST", BINDINGS, { body: binding(undefined, "node-1") });
    assert.equal(noName.status, 400, noName.text);
    assert.equal(noName.json.message, "Name parameter required.");
    const otherNs = await t.request("POST", BINDINGS, { body: binding("b", "node-1", "kube-system") });
    assert.equal(otherNs.status, 400, otherNs.text);
    assert.equal(otherNs.json.message, "the namespace of the provided object does not match the namespace sent on the request");
    const notJson = await t.request("POST", BINDINGS, { rawBody: "{not json", headers: { "content-type": "application/json" } });
    assert.equal(notJson.status, 400, notJson.text);
    assert.equal((await t.request("GET", BINDINGS)).status, 405);
    assert.equal((await t.request("DELETE", BINDINGS)).status, 405);
    assert.equal((await t.request("POST", "/api/v1/bindings", { body: binding("b", "node-1") })).status, 405);
    assert.equal((await t.request("POST", `${BINDINGS}/b`, { body: binding("b", "node-1") })).status, 404);
    assert.equal((await t.request("GET", `${PODS}/b`)).json.spec.nodeName, undefined);
    const ok = await t.request("POST", BINDINGS, { body: binding("c", "node-3", "default") });
    assert.equal(ok.status, 201, ok.text);
    assert.equal((await t.request("GET", `${PODS}/c`)).json.spec.nodeName, "node-3");
  });
});
