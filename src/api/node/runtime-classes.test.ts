// node.<suffix>/v1 RuntimeClass on the real server, and the RuntimeClass
// admission step: overhead and scheduling copied into pods, unknown classes
// and mismatched overheads refused with upstream's messages.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";

let t: TestServer;
before(async () => {
  t = await startTestServer({ modules: builtinModules() });
});
after(() => t.close());

const RC = "/apis/node.orch.io/v1/runtimeclasses";
const PODS = "/api/v1/namespaces/default/pods";
const rc = (name: string, extra: object = {}) => ({ apiVersion: "node.orch.io/v1", kind: "RuntimeClass", metadata: { name }, handler: "runc", ...extra });
const pod = (name: string, spec: object = {}) => ({ apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { containers: [{ name: "c", image: "busybox" }], ...spec } });
const causes = (res: { json: { details?: { causes?: { field: string; message: string }[] } } }) => (res.json.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);

test("runtimeclasses: validation, immutable handler, table", async () => {
  const bad = await t.request("POST", RC, {
    body: rc("bad", { handler: "Run_C", overhead: { podFixed: { cpu: "-1" } }, scheduling: { nodeSelector: { "bad key!": "x" }, tolerations: [{ key: "a", operator: "Exists" }, { key: "a", operator: "Exists" }] } }),
  });
  assert.equal(bad.status, 422, bad.text);
  const got = causes(bad);
  assert.match(got[0]!, /^handler: Invalid value: "Run_C": a lowercase RFC 1123 label must consist of/);
  assert.equal(got[1], 'overhead.podFixed[cpu]: Invalid value: "-1": must be greater than or equal to 0');
  assert.match(got[2]!, /^scheduling\.nodeSelector: Invalid value: "bad key!": name part must consist of/);
  assert.equal(got.at(-1), 'scheduling.tolerations[1]: Duplicate value: {"key":"a","operator":"Exists"}');

  const ok = await t.request("POST", RC, { body: rc("gvisor", { handler: "runsc" }) });
  assert.equal(ok.status, 201, ok.text);
  const changed = await t.request("PUT", `${RC}/gvisor`, { body: { ...ok.json, handler: "kata" } });
  assert.equal(changed.status, 422);
  assert.equal(changed.json.details.causes[0].message, 'Invalid value: "kata": field is immutable');
  const table = await t.request("GET", RC, { headers: { accept: "application/json;as=Table;v=v1;g=meta.orch.io" } });
  assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ["Name", "Handler", "Age"]);
  assert.deepEqual(table.json.rows[0].cells.slice(0, 2), ["gvisor", "runsc"]);
});

test("RuntimeClass admission: overhead and scheduling from the class; unknown class and overhead mismatches refused", async () => {
  const created = await t.request("POST", RC, {
    body: rc("kata", { overhead: { podFixed: { cpu: "250m", memory: "120Mi" } }, scheduling: { nodeSelector: { sandbox: "kata" }, tolerations: [{ key: "sandbox", operator: "Equal", value: "kata", effect: "NoSchedule" }] } }),
  });
  assert.equal(created.status, 201, created.text);

  const p = await t.request("POST", PODS, { body: pod("sandboxed", { runtimeClassName: "kata", nodeSelector: { zone: "a" } }) });
  assert.equal(p.status, 201, p.text);
  assert.deepEqual(p.json.spec.overhead, { cpu: "250m", memory: "120Mi" });
  assert.deepEqual(p.json.spec.nodeSelector, { zone: "a", sandbox: "kata" });
  assert.ok(p.json.spec.tolerations.some((tol: { key?: string; value?: string }) => tol.key === "sandbox" && tol.value === "kata"));

  const same = await t.request("POST", PODS, { body: pod("same", { runtimeClassName: "kata", overhead: { cpu: "0.25", memory: "120Mi" } }) });
  assert.equal(same.status, 201, same.text);

  const unknown = await t.request("POST", PODS, { body: pod("unknown", { runtimeClassName: "nope" }) });
  assert.equal(unknown.status, 403);
  assert.equal(unknown.json.message, 'pods "unknown" is forbidden: pod rejected: RuntimeClass "nope" not found');

  const conflict = await t.request("POST", PODS, { body: pod("conflict", { runtimeClassName: "kata", nodeSelector: { sandbox: "gvisor" } }) });
  assert.equal(conflict.status, 403);
  assert.equal(conflict.json.message, 'pods "conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = kata; pod.spec.nodeSelector[sandbox] = gvisor');

  const mismatch = await t.request("POST", PODS, { body: pod("mismatch", { runtimeClassName: "kata", overhead: { cpu: "1" } }) });
  assert.equal(mismatch.status, 403);
  assert.equal(mismatch.json.message, `pods "mismatch" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`);

  const noClass = await t.request("POST", PODS, { body: pod("no-class", { overhead: { cpu: "1" } }) });
  assert.equal(noClass.status, 403);
  assert.equal(noClass.json.message, 'pods "no-class" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');

  const plain = await t.request("POST", PODS, { body: pod("plain") });
  assert.equal(plain.status, 201, plain.text);
  assert.equal(plain.json.spec.overhead, undefined);
});

test("RuntimeClass admission: tolerations merged as upstream's MergeTolerations (covered ones left out)", async () => {
  const { mergeTolerations } = await import("../../apiserver/admission/runtime-class.js");
  const pod = [{ key: "gpu", operator: "Exists" }, { key: "zone", operator: "Equal", value: "a", effect: "NoSchedule" }];
  const cls = [
    { key: "gpu", operator: "Equal", value: "nvidia", effect: "NoSchedule" }, // covered by gpu Exists
    { key: "zone", operator: "Equal", value: "a", effect: "NoSchedule" }, // identical
    { key: "sandbox", operator: "Exists", effect: "NoExecute", tolerationSeconds: 60 },
    { key: "sandbox", operator: "Exists", effect: "NoExecute", tolerationSeconds: 30 }, // covered by the 60 s one
  ];
  assert.deepEqual(mergeTolerations(pod, cls), [pod[0], pod[1], cls[2]]);
  // A later, wider toleration replaces an earlier, narrower one.
  assert.deepEqual(mergeTolerations([{ key: "k", operator: "Equal", value: "v" }], [{ operator: "Exists" }]), [{ operator: "Exists" }]);
});
