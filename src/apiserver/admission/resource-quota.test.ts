// Quota admission without the quota controller: the charge as the plugin
// computes it from status as written here, and its refusals.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";

let t: TestServer;
before(async () => {
  t = await startTestServer({ modules: builtinModules() });
});
after(() => t.close());

const Q = "/api/v1/namespaces/default/resourcequotas";
const CM = "/api/v1/namespaces/default/configmaps";
const cm = (name: string) => ({ body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name } } });

test("quota admission: status unknown until counted; dry runs check but do not charge; the charge lands in status.used", async () => {
  const q = await t.request("POST", Q, { body: { apiVersion: "v1", kind: "ResourceQuota", metadata: { name: "cms" }, spec: { hard: { "count/configmaps": "2", configmaps: "5" } } } });
  assert.equal(q.status, 201, q.text);
  const unknown = await t.request("POST", CM, cm("a"));
  assert.equal(unknown.status, 403);
  assert.equal(unknown.json.message, 'configmaps "a" is forbidden: status unknown for quota: cms, resources: configmaps,count/configmaps');
  // Play the controller: counted, one used.
  const st = await t.request("PUT", `${Q}/cms/status`, { body: { ...q.json, status: { hard: q.json.spec.hard, used: { "count/configmaps": "1", configmaps: "1" } } } });
  assert.equal(st.status, 200, st.text);
  const dry = await t.request("POST", `${CM}?dryRun=All`, cm("a"));
  assert.equal(dry.status, 201, dry.text);
  assert.deepEqual((await t.request("GET", `${Q}/cms`)).json.status.used, { "count/configmaps": "1", configmaps: "1" });
  assert.equal((await t.request("POST", CM, cm("a"))).status, 201);
  assert.deepEqual((await t.request("GET", `${Q}/cms`)).json.status.used, { "count/configmaps": "2", configmaps: "2" });
  const over = await t.request("POST", CM, cm("b"));
  assert.equal(over.status, 403);
  assert.equal(over.json.reason, "Forbidden");
  assert.equal(over.json.message, 'configmaps "b" is forbidden: exceeded quota: cms, requested: count/configmaps=1, used: count/configmaps=2, limited: count/configmaps=2');
  // Other kinds are not held by this quota.
  const secret = await t.request("POST", "/api/v1/namespaces/default/secrets", { body: { apiVersion: "v1", kind: "Secret", metadata: { name: "s" } } });
  assert.equal(secret.status, 201, secret.text);
});
