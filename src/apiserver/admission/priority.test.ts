import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";

let t: TestServer;
before(async () => {
  t = await startTestServer({ modules: builtinModules() });
});
after(() => t.close());

const PC = "/apis/scheduling.orch.io/v1/priorityclasses";
const PODS = "/api/v1/namespaces/default/pods";
const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [{ name: "c", image: "busybox" }], ...spec },
});

test("priority classes: the system classes exist; validation as upstream", async () => {
  const list = await t.request("GET", PC);
  assert.deepEqual(list.json.items.map((c: { metadata: { name: string }; value: number }) => [c.metadata.name, c.value]).sort(), [
    ["system-cluster-critical", 2000000000],
    ["system-node-critical", 2000001000],
  ]);
  const tooHigh = await t.request("POST", PC, { body: { apiVersion: "scheduling.orch.io/v1", kind: "PriorityClass", metadata: { name: "big" }, value: 1000000001 } });
  assert.equal(tooHigh.status, 422);
  assert.match(tooHigh.json.message, /maximum allowed value of a user defined priority is 1000000000/);
  const reserved = await t.request("POST", PC, { body: { apiVersion: "scheduling.orch.io/v1", kind: "PriorityClass", metadata: { name: "system-x" }, value: 1 } });
  assert.equal(reserved.status, 422);
  assert.match(reserved.json.message, /reserved for system use only/);
  const ok = await t.request("POST", PC, { body: { apiVersion: "scheduling.orch.io/v1", kind: "PriorityClass", metadata: { name: "high" }, value: 1000 } });
  assert.equal(ok.status, 201);
  assert.equal(ok.json.preemptionPolicy, "PreemptLowerPriority");
  const changed = await t.request("PUT", `${PC}/high`, { body: { ...ok.json, value: 5 } });
  assert.equal(changed.status, 422);
  assert.match(changed.json.message, /value: Forbidden: may not be changed in an update/);
});

test("pod priority admission: priorityClassName resolves to spec.priority; unknown names are refused", async () => {
  await t.request("POST", PC, { body: { apiVersion: "scheduling.orch.io/v1", kind: "PriorityClass", metadata: { name: "mid" }, value: 500, preemptionPolicy: "Never" } });
  const mid = await t.request("POST", PODS, { body: pod("mid", { priorityClassName: "mid" }) });
  assert.equal(mid.status, 201, mid.text);
  assert.equal(mid.json.spec.priority, 500);
  assert.equal(mid.json.spec.preemptionPolicy, "Never");
  const critical = await t.request("POST", PODS, { body: pod("critical", { priorityClassName: "system-node-critical" }) });
  assert.equal(critical.json.spec.priority, 2000001000);
  const plain = await t.request("POST", PODS, { body: pod("plain") });
  assert.equal(plain.json.spec.priority, 0);
  const unknown = await t.request("POST", PODS, { body: pod("unknown", { priorityClassName: "nope" }) });
  assert.equal(unknown.status, 403);
  assert.equal(unknown.json.message, 'pods "unknown" is forbidden: no PriorityClass with name nope was found');
  const forged = await t.request("POST", PODS, { body: pod("forged", { priorityClassName: "mid", priority: 7 }) });
  assert.equal(forged.status, 403);
  assert.match(forged.json.message, /the integer value of priority \(7\) must not be provided in pod spec; priority admission controller computed 500/);
});

test("pod disruption budgets: policy/v1 with status; minAvailable and maxUnavailable exclude each other", async () => {
  const PDB = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";
  const both = await t.request("POST", PDB, {
    body: { apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: { name: "b" }, spec: { minAvailable: 1, maxUnavailable: 1, selector: { matchLabels: { a: "b" } } } },
  });
  assert.equal(both.status, 422);
  assert.match(both.json.message, /minAvailable and maxUnavailable cannot be both set/);
  const pct = await t.request("POST", PDB, { body: { apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: { name: "p" }, spec: { minAvailable: "120%" } } });
  assert.equal(pct.status, 422);
  const ok = await t.request("POST", PDB, { body: { apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: { name: "ok" }, spec: { minAvailable: "50%", selector: { matchLabels: { a: "b" } } } } });
  assert.equal(ok.status, 201, ok.text);
  const st = await t.request("PUT", `${PDB}/ok/status`, { body: { ...ok.json, status: { disruptionsAllowed: 2, currentHealthy: 3, desiredHealthy: 1, expectedPods: 3 } } });
  assert.equal(st.status, 200, st.text);
  assert.equal(st.json.status.disruptionsAllowed, 2);
});
