// flowcontrol.apiserver.<suffix> on the real server: the bootstrap objects
// created at start, the Dangling condition kept by the server, defaults,
// upstream's validation messages (mandatory objects pinned) and tables.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../index.js";
import { namingFor } from "../../machinery/naming.js";
import { reconcileDangling } from "../../apiserver/flowcontrol-bootstrap.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { bootstrapObjects } from "./index.js";

let t: TestServer;
before(async () => {
  t = await startTestServer({ modules: builtinModules() });
});
after(() => t.close());

const G = "flowcontrol.apiserver.orch.io";
const FS = `/apis/${G}/v1/flowschemas`;
const PL = `/apis/${G}/v1/prioritylevelconfigurations`;
const TABLE = { accept: "application/json;as=Table;v=v1;g=meta.orch.io" };
const causes = (res: { json: { details?: { causes?: { field: string; message: string }[] } } }) => (res.json.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
const allRules = [{ subjects: [{ kind: "Group", group: { name: "system:authenticated" } }], nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }] }];

test("flowcontrol: the bootstrap objects exist, served in v1 and v1beta3, with the Dangling condition", async () => {
  const levels = await t.request("GET", PL);
  assert.equal(levels.status, 200, levels.text);
  assert.deepEqual(levels.json.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort(), ["catch-all", "exempt", "global-default", "leader-election", "node-high", "system", "workload-high", "workload-low"]);
  const schemas = await t.request("GET", `/apis/${G}/v1beta3/flowschemas`);
  assert.equal(schemas.status, 200, schemas.text);
  const names = schemas.json.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort();
  assert.deepEqual(names, ["catch-all", "exempt", "global-default", "kube-system-service-accounts", "orch-controller-manager", "orch-scheduler", "probes", "service-accounts", "system-leader-election", "system-node-high", "system-nodes", "workload-leader-election"].map((n) => n.replace("kube-system", "orch-system")).sort());
  assert.equal(schemas.json.apiVersion, `${G}/v1beta3`);
  const exempt = schemas.json.items.find((i: { metadata: { name: string } }) => i.metadata.name === "exempt");
  assert.deepEqual(exempt.status.conditions.map((c: { type: string; status: string; reason: string }) => [c.type, c.status, c.reason]), [["Dangling", "False", "Found"]]);
  assert.equal(exempt.metadata.annotations["apf.orch.io/autoupdate-spec"], "true");
  // Upstream's names on the k8s.io profile.
  const upstream = bootstrapObjects(namingFor("k8s.io")).schemas.map((s) => s.metadata.name);
  assert.ok(upstream.includes("kube-controller-manager") && upstream.includes("kube-scheduler") && upstream.includes("kube-system-service-accounts"));
});

test("flowschemas: defaults, validation, the Dangling condition follows the level, table", async () => {
  const created = await t.request("POST", FS, { body: { apiVersion: `${G}/v1`, kind: "FlowSchema", metadata: { name: "mine" }, spec: { priorityLevelConfiguration: { name: "mine-level" }, rules: allRules } } });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json.spec.matchingPrecedence, 1000);
  assert.deepEqual(created.json.status, {});
  // The server's reconcile (also run here at once rather than waiting for its timer).
  await reconcileDangling(t.server.stores, namingFor());
  let got = await t.request("GET", `${FS}/mine`);
  assert.deepEqual(got.json.status.conditions.map((c: { status: string; reason: string; message: string }) => [c.status, c.reason, c.message]), [
    ["True", "NotFound", 'This FlowSchema references the PriorityLevelConfiguration object named "mine-level" but there is no such object'],
  ]);
  const table = await t.request("GET", `${FS}/mine`, { headers: TABLE });
  assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ["Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age", "MissingPL"]);
  assert.deepEqual([...table.json.rows[0].cells.slice(0, 4), table.json.rows[0].cells[5]], ["mine", "mine-level", 1000, "*", "True"]);

  const level = await t.request("POST", PL, { body: { apiVersion: `${G}/v1`, kind: "PriorityLevelConfiguration", metadata: { name: "mine-level" }, spec: { type: "Limited", limited: { limitResponse: { type: "Queue", queuing: {} } } } } });
  assert.equal(level.status, 201, level.text);
  assert.deepEqual(level.json.spec.limited, { nominalConcurrencyShares: 30, lendablePercent: 0, limitResponse: { type: "Queue", queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } } });
  await reconcileDangling(t.server.stores, namingFor());
  got = await t.request("GET", `${FS}/mine`);
  assert.equal(got.json.status.conditions[0].status, "False");

  const bad = await t.request("POST", FS, {
    body: { apiVersion: `${G}/v1`, kind: "FlowSchema", metadata: { name: "bad" }, spec: { priorityLevelConfiguration: { name: "" }, matchingPrecedence: 1, distinguisherMethod: { type: "ByColor" }, rules: [{ subjects: [{ kind: "Robot" }], resourceRules: [{ verbs: ["get", "*"], apiGroups: [], resources: ["pods"] }] }] } },
  });
  assert.equal(bad.status, 422);
  assert.deepEqual(causes(bad), [
    "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
    'spec.distinguisherMethod.type: Unsupported value: "ByColor": supported values: "ByNamespace", "ByUser"',
    "spec.priorityLevelConfiguration.name: Required value: must reference a priority level",
    'spec.rules[0].subjects[0].kind: Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"',
    'spec.rules[0].resourceRules[0].verbs: Invalid value: ["get","*"]: if \'*\' is present, must not specify other verbs',
    "spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group",
    "spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace",
  ]);
  const pinned = await t.request("GET", `${FS}/exempt`);
  const changed = await t.request("PUT", `${FS}/exempt`, { body: { ...pinned.json, spec: { ...pinned.json.spec, matchingPrecedence: 2 } } });
  assert.equal(changed.status, 422);
  assert.match(changed.json.message, /spec: Invalid value: .*spec of 'exempt' must equal the fixed value/);
});

test("prioritylevelconfigurations: validation and table", async () => {
  const pl = (name: string, spec: object) => ({ apiVersion: `${G}/v1`, kind: "PriorityLevelConfiguration", metadata: { name }, spec });
  const bad = await t.request("POST", PL, { body: pl("bad", { type: "Exempt", limited: { limitResponse: { type: "Queue", queuing: { queues: 600, handSize: 700, queueLengthLimit: 0 } } } }) });
  assert.equal(bad.status, 422);
  assert.deepEqual(causes(bad), ["spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'", "spec.limited: Forbidden: must be nil if the type is not Limited"]);
  const queues = await t.request("POST", PL, { body: pl("q", { type: "Limited", limited: { lendablePercent: 101, limitResponse: { type: "Queue", queuing: { queues: 600, handSize: 700, queueLengthLimit: -1 } } } }) });
  assert.deepEqual(causes(queues), [
    "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
    "spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -1: must be positive",
    "spec.limited.limitResponse.queuing.queues: Invalid value: 600: must not be greater than 512",
    "spec.limited.limitResponse.queuing.handSize: Invalid value: 700: should not be greater than queues (600)",
  ]);
  const entropy = await t.request("POST", PL, { body: pl("e", { type: "Limited", limited: { limitResponse: { type: "Queue", queuing: { queues: 512, handSize: 7, queueLengthLimit: 5 } } } }) });
  assert.deepEqual(causes(entropy), ["spec.limited.limitResponse.queuing.handSize: Invalid value: 7: required entropy bits of deckSize 512 and handSize 7 should not be greater than 60"]);
  const reject = await t.request("POST", PL, { body: pl("r", { type: "Limited", limited: { limitResponse: { type: "Reject", queuing: { queues: 1 } } } }) });
  assert.deepEqual(causes(reject), ["spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited"]);
  const table = await t.request("GET", PL, { headers: TABLE });
  assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ["Name", "Type", "NominalConcurrencyShares", "Queues", "HandSize", "QueueLengthLimit", "Age"]);
  const rows = Object.fromEntries(table.json.rows.map((r: { cells: unknown[] }) => [r.cells[0], r.cells.slice(1, 6)]));
  assert.deepEqual(rows["exempt"], ["Exempt", "<none>", "<none>", "<none>", "<none>"]);
  assert.deepEqual(rows["catch-all"], ["Limited", 5, "<none>", "<none>", "<none>"]);
  assert.deepEqual(rows["workload-low"], ["Limited", 100, 128, 6, 50]);
});
