// Quota admission without the quota controller: the charge as the plugin
// computes it from status as written here, and its refusals.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";
import { formatQuantity, quantity } from "../../api/core/quantity-math.js";
import { growth } from "./resource-quota.js";

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

/** Creates quota `name` with `hard` and plays the controller: status.used as given. */
async function quota(name: string, hard: Record<string, string>, used: Record<string, string>) {
  const q = await t.request("POST", Q, { body: { apiVersion: "v1", kind: "ResourceQuota", metadata: { name }, spec: { hard } } });
  assert.equal(q.status, 201, q.text);
  const st = await t.request("PUT", `${Q}/${name}/status`, { body: { ...q.json, status: { hard, used } } });
  assert.equal(st.status, 200, st.text);
}
const usedOf = async (name: string) => (await t.request("GET", `${Q}/${name}`)).json.status.used;

test("quota on update: a service turned NodePort is charged its node ports; an update that grows nothing is not checked", async () => {
  await quota("ports", { "services.nodeports": "2" }, { "services.nodeports": "0" });
  const S = "/api/v1/namespaces/default/services";
  const svc = (name: string, ports: number) => ({ apiVersion: "v1", kind: "Service", metadata: { name }, spec: { ports: Array.from({ length: ports }, (_, i) => ({ name: `p${i}`, port: 80 + i })) } });
  assert.equal((await t.request("POST", S, { body: svc("three", 3) })).status, 201);
  assert.equal((await t.request("POST", S, { body: svc("two", 2) })).status, 201);
  const patch = (name: string, body: unknown) => t.request("PATCH", `${S}/${name}`, { rawBody: JSON.stringify(body), headers: { "content-type": "application/merge-patch+json" } });
  const over = await patch("three", { spec: { type: "NodePort" } });
  assert.equal(over.status, 403, over.text);
  assert.equal(over.json.message, 'services "three" is forbidden: exceeded quota: ports, requested: services.nodeports=3, used: services.nodeports=0, limited: services.nodeports=2');
  const ok = await patch("two", { spec: { type: "NodePort" } });
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(await usedOf("ports"), { "services.nodeports": "2" });
  // The quota is now full: a label on the NodePort service grows nothing and passes.
  assert.equal((await patch("two", { metadata: { labels: { a: "b" } } })).status, 200);
  assert.deepEqual(await usedOf("ports"), { "services.nodeports": "2" });
});

test("quota on update: a claim's larger storage request is charged the increase", async () => {
  const sc = await t.request("POST", "/apis/storage.orch.io/v1/storageclasses", { body: { apiVersion: "storage.orch.io/v1", kind: "StorageClass", metadata: { name: "grow" }, provisioner: "example.com/x", allowVolumeExpansion: true } });
  assert.equal(sc.status, 201, sc.text);
  await quota("disk", { "requests.storage": "5Gi" }, { "requests.storage": "0" });
  const C = "/api/v1/namespaces/default/persistentvolumeclaims";
  const claim = await t.request("POST", C, { body: { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "data" }, spec: { storageClassName: "grow", accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } } });
  assert.equal(claim.status, 201, claim.text);
  assert.deepEqual(await usedOf("disk"), { "requests.storage": "1Gi" });
  const bound = await t.request("PATCH", `${C}/data/status`, { rawBody: JSON.stringify({ status: { phase: "Bound" } }), headers: { "content-type": "application/merge-patch+json" } });
  assert.equal(bound.status, 200, bound.text);
  const size = (s: string) => t.request("PATCH", `${C}/data`, { rawBody: JSON.stringify({ spec: { resources: { requests: { storage: s } } } }), headers: { "content-type": "application/merge-patch+json" } });
  const grown = await size("3Gi");
  assert.equal(grown.status, 200, grown.text);
  assert.deepEqual(await usedOf("disk"), { "requests.storage": "3Gi" });
  const over = await size("10Gi");
  assert.equal(over.status, 403, over.text);
  assert.equal(over.json.message, 'persistentvolumeclaims "data" is forbidden: exceeded quota: disk, requested: requests.storage=7Gi, used: requests.storage=3Gi, limited: requests.storage=5Gi');
  assert.deepEqual(await usedOf("disk"), { "requests.storage": "3Gi" }, "a refused update charges nothing");
});

test("quota on update: other kinds (a config map's update) are charged on create only, as upstream", async () => {
  await quota("maps", { configmaps: "1" }, { configmaps: "1" });
  const put = await t.request("PATCH", `${CM}/a`, { rawBody: JSON.stringify({ data: { k: "v" } }), headers: { "content-type": "application/merge-patch+json" } });
  assert.equal(put.status, 200, put.text);
});

test("growth: new less old per resource, never below zero", () => {
  const q = (v: string) => quantity(v)!;
  const out = growth(new Map([["a", q("3")], ["b", q("1")], ["c", q("2Gi")]]), new Map([["a", q("1")], ["b", q("4")]]));
  assert.deepEqual([...out].map(([k, v]) => [k, formatQuantity(v)]), [["a", "2"], ["b", "0"], ["c", "2Gi"]]);
});
