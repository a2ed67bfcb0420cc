// ValidatingAdmissionPolicy end to end against a real API server: policies
// and bindings created over HTTP, requests refused, warned or audited.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../../api/index.js";
import { startTestServer, type TestResponse, type TestServer } from "../../testing/harness.js";
import { createUntil as createAt, warnings } from "../webhooks/testing.js";

const GROUP = "admissionregistration.orch.io";
const VAP = `/apis/${GROUP}/v1/validatingadmissionpolicies`;
const VAPB = `/apis/${GROUP}/v1/validatingadmissionpolicybindings`;
const CM = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

let t: TestServer;
const createUntil = (ns: string, body: { metadata: { name: string } }, done: (r: TestResponse) => boolean) => createAt(t, CM(ns), body, done);
before(async () => {
  t = await startTestServer({ modules: builtinModules() });
});
after(() => t.close());

const rules = [{ operations: ["CREATE", "UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] }];

async function policy(name: string, spec: Record<string, unknown>): Promise<void> {
  const r = await t.request("POST", VAP, { body: { apiVersion: `${GROUP}/v1`, kind: "ValidatingAdmissionPolicy", metadata: { name }, spec: { matchConstraints: { resourceRules: rules }, ...spec } } });
  assert.equal(r.status, 201, r.text);
}

async function binding(name: string, spec: Record<string, unknown>): Promise<void> {
  const r = await t.request("POST", VAPB, { body: { apiVersion: `${GROUP}/v1`, kind: "ValidatingAdmissionPolicyBinding", metadata: { name }, spec } });
  assert.equal(r.status, 201, r.text);
}

async function removeAll(): Promise<void> {
  for (const base of [VAPB, VAP]) {
    for (const item of (await t.request("GET", base)).json.items) await t.request("DELETE", `${base}/${item.metadata.name}`);
  }
  for (let i = 0; i < 100 && (await t.request("GET", VAPB)).json.items.length > 0; i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 100));
}

function configMap(name: string, data: Record<string, string> = {}, labels: Record<string, string> = {}) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels }, data };
}

test("policies and bindings: defaults and validation", async () => {
  await policy("defaults", { validations: [{ expression: "true" }] });
  const got = (await t.request("GET", `${VAP}/defaults`)).json;
  assert.equal(got.spec.failurePolicy, "Fail");
  assert.equal(got.spec.matchConstraints.matchPolicy, "Equivalent");
  assert.equal(got.spec.matchConstraints.resourceRules[0].scope, "*");
  const bad = await t.request("POST", VAP, { body: { apiVersion: `${GROUP}/v1`, kind: "ValidatingAdmissionPolicy", metadata: { name: "bad" }, spec: { validations: [{ expression: "object.(" }] } } });
  assert.equal(bad.status, 422);
  assert.match(bad.json.message, /spec\.matchConstraints: Required value/);
  assert.match(bad.json.message, /spec\.validations\[0\]\.expression: Invalid value: "object\.\(": compilation failed/);
  const empty = await t.request("POST", VAP, { body: { apiVersion: `${GROUP}/v1`, kind: "ValidatingAdmissionPolicy", metadata: { name: "empty" }, spec: { matchConstraints: { resourceRules: rules } } } });
  assert.match(empty.json.message, /validations or auditAnnotations must contain at least one item/);
  const b = await t.request("POST", VAPB, { body: { apiVersion: `${GROUP}/v1`, kind: "ValidatingAdmissionPolicyBinding", metadata: { name: "b" }, spec: { policyName: "defaults", validationActions: ["Deny", "Warn", "Nope"], paramRef: { name: "x", selector: {} } } } });
  assert.equal(b.status, 422);
  assert.match(b.json.message, /spec\.validationActions\[2\]: Unsupported value: "Nope": supported values: "Audit", "Deny", "Warn"/);
  assert.match(b.json.message, /must not contain both Deny and Warn/);
  assert.match(b.json.message, /spec\.paramRef\.name: Forbidden: one of `name` or `selector` must be set/);
  assert.match(b.json.message, /spec\.paramRef\.parameterNotFoundAction: Required value/);
  const none = await t.request("POST", VAPB, { body: { apiVersion: `${GROUP}/v1`, kind: "ValidatingAdmissionPolicyBinding", metadata: { name: "none" }, spec: { policyName: "defaults" } } });
  assert.match(none.json.message, /spec\.validationActions: Required value: at least one validation action is required/);
  await removeAll();
});

test("Deny: upstream's denial text; the reason picks the code; variables and messageExpression", async () => {
  await policy("max-keys", {
    variables: [{ name: "keys", expression: "size(object.data)" }],
    validations: [
      { expression: "variables.keys <= 2", messageExpression: "'too many keys: ' + string(variables.keys)", reason: "Forbidden" },
      { expression: "!object.metadata.name.startsWith('x')" },
    ],
  });
  await binding("max-keys-binding", { policyName: "max-keys", validationActions: ["Deny"] });
  const r = await createUntil("default", configMap("many", { a: "1", b: "2", c: "3" }), (x) => x.status === 403);
  assert.equal(r.status, 403);
  assert.equal(r.json.message, "ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: too many keys: 3");
  const x = await t.request("POST", CM("default"), { body: configMap("xname", { a: "1" }) });
  assert.equal(x.status, 422);
  assert.equal(x.json.message, "ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: failed expression: !object.metadata.name.startsWith('x')");
  assert.equal((await t.request("POST", CM("default"), { body: configMap("few", { a: "1" }) })).status, 201);
  await removeAll();
});

test("Warn and Audit: the request passes with a Warning header", async () => {
  await policy("no-empty", { validations: [{ expression: "has(object.data) && size(object.data) > 0", message: "data must not be empty" }] });
  await binding("no-empty-binding", { policyName: "no-empty", validationActions: ["Warn", "Audit"] });
  const r = await createUntil("default", configMap("empty"), (x) => warnings(x).length > 0);
  assert.equal(r.status, 201);
  assert.deepEqual(warnings(r), ["Validation failed for ValidatingAdmissionPolicy 'no-empty' with binding 'no-empty-binding': data must not be empty"]);
  await removeAll();
});

test("params: a ConfigMap by name; parameterNotFoundAction Deny and Allow; binding matchResources", async () => {
  assert.equal((await t.request("POST", CM("default"), { body: configMap("limits", { forbidden: "evil" }) })).status, 201);
  await policy("forbidden-name", { paramKind: { apiVersion: "v1", kind: "ConfigMap" }, validations: [{ expression: "object.metadata.name != params.data.forbidden", message: "name is forbidden" }] });
  await binding("forbidden-name-binding", { policyName: "forbidden-name", validationActions: ["Deny"], paramRef: { name: "limits", parameterNotFoundAction: "Deny" }, matchResources: { objectSelector: { matchLabels: { checked: "yes" } } } });
  const r = await createUntil("default", configMap("evil", {}, { checked: "yes" }), (x) => x.status === 422);
  assert.equal(r.json.message, "ValidatingAdmissionPolicy 'forbidden-name' with binding 'forbidden-name-binding' denied request: name is forbidden");
  // Not selected by the binding's matchResources: allowed.
  assert.equal((await t.request("POST", CM("default"), { body: configMap("evil") })).status, 201);
  // Another namespace has no "limits" ConfigMap: Deny refuses.
  assert.equal((await t.request("POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "noparams" } } })).status, 201);
  const missing = await t.request("POST", CM("noparams"), { body: configMap("ok", {}, { checked: "yes" }) });
  assert.equal(missing.status, 422);
  assert.equal(missing.json.message, "ValidatingAdmissionPolicy 'forbidden-name' with binding 'forbidden-name-binding' denied request: no params found for policy binding with `Deny` parameterNotFoundAction");
  await removeAll();
  await policy("forbidden-name", { paramKind: { apiVersion: "v1", kind: "ConfigMap" }, validations: [{ expression: "object.metadata.name != params.data.forbidden" }] });
  await binding("allow-binding", { policyName: "forbidden-name", validationActions: ["Deny"], paramRef: { name: "limits", parameterNotFoundAction: "Allow" } });
  const denied = await createUntil("default", configMap("evil", {}, {}), (x) => x.status === 422);
  assert.equal(denied.status, 422);
  assert.equal((await t.request("POST", CM("noparams"), { body: configMap("evil") })).status, 201);
  await removeAll();
});

test("failurePolicy: an expression error denies under Fail and is skipped under Ignore", async () => {
  await policy("broken", { validations: [{ expression: "object.nosuchfield == 'x'" }] });
  await binding("broken-binding", { policyName: "broken", validationActions: ["Deny"] });
  const r = await createUntil("default", configMap("b1"), (x) => x.status === 422);
  assert.match(r.json.message, /^ValidatingAdmissionPolicy 'broken' with binding 'broken-binding' denied request: expression 'object\.nosuchfield == 'x'' resulted in error: /);
  const upd = await t.request("GET", `${VAP}/broken`);
  upd.json.spec.failurePolicy = "Ignore";
  assert.equal((await t.request("PUT", `${VAP}/broken`, { body: upd.json })).status, 200);
  const ok = await createUntil("default", configMap("b2"), (x) => x.status === 201);
  assert.equal(ok.status, 201);
  await removeAll();
});
