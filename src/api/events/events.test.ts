// events.<suffix>/v1 Event on the real server: one stored object seen through
// core v1 and events/v1 (get, list, watch, field selectors), writes through
// either view seen through the other, deletecollection, upstream's strict
// validation of creates and updates, and protobuf for the new kind.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { coreToEventsV1, eventsV1ToCore } from "./events.js";

let t: TestServer;
before(async () => {
  t = await startTestServer({ modules: builtinModules() });
});
after(() => t.close());

const V1 = "/apis/events.orch.io/v1/namespaces/default/events";
const CORE = "/api/v1/namespaces/default/events";
const causes = (res: { json: { details?: { causes?: { field: string; message: string }[] } } }) => (res.json.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
const newEvent = (name: string, extra: object = {}) => ({
  apiVersion: "events.orch.io/v1",
  kind: "Event",
  metadata: { name, labels: { "testevent-set": "true" } },
  regarding: { namespace: "default", kind: "Pod", name: "p" },
  eventTime: "2017-09-19T13:49:16.000000Z",
  note: `This is ${name}`,
  action: "Do",
  reason: "Test",
  type: "Normal",
  reportingController: "test-controller",
  reportingInstance: "test-node",
  ...extra,
});

test("conversion: every mapped field round-trips", () => {
  const core = {
    apiVersion: "v1", kind: "Event", metadata: { name: "e", namespace: "ns" },
    involvedObject: { kind: "Pod", name: "p" }, related: { kind: "Node", name: "n" }, message: "m", reason: "R", type: "Warning",
    source: { component: "c", host: "h" }, firstTimestamp: "2020-01-01T00:00:00Z", lastTimestamp: "2020-01-02T00:00:00Z", count: 3,
    eventTime: "2020-01-01T00:00:00.000000Z", series: { count: 4, lastObservedTime: "2020-01-03T00:00:00.000000Z" },
    action: "A", reportingComponent: "rc", reportingInstance: "ri",
  };
  const v1 = coreToEventsV1(core, "events.k8s.io");
  assert.deepEqual(v1, {
    apiVersion: "events.k8s.io/v1", kind: "Event", metadata: { name: "e", namespace: "ns" },
    regarding: { kind: "Pod", name: "p" }, related: { kind: "Node", name: "n" }, note: "m", reason: "R", type: "Warning",
    deprecatedSource: { component: "c", host: "h" }, deprecatedFirstTimestamp: "2020-01-01T00:00:00Z", deprecatedLastTimestamp: "2020-01-02T00:00:00Z", deprecatedCount: 3,
    eventTime: "2020-01-01T00:00:00.000000Z", series: { count: 4, lastObservedTime: "2020-01-03T00:00:00.000000Z" },
    action: "A", reportingController: "rc", reportingInstance: "ri",
  });
  assert.deepEqual(eventsV1ToCore(v1), core);
});

test("one object, two views: create, get, list, field selectors, patch, update, watch, delete", async () => {
  const w = await t.watch(`${CORE}?watch=1&resourceVersion=0`);
  const created = await t.request("POST", V1, { body: newEvent("one") });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json.apiVersion, "events.orch.io/v1");
  assert.equal(created.json.note, "This is one");

  const core = await t.request("GET", `${CORE}/one`);
  assert.equal(core.status, 200, core.text);
  assert.equal(core.json.apiVersion, "v1");
  assert.equal(core.json.message, "This is one");
  assert.equal(core.json.reportingComponent, "test-controller");
  assert.deepEqual(core.json.involvedObject, { namespace: "default", kind: "Pod", name: "p" });
  assert.equal(core.json.note, undefined);
  assert.equal(core.json.metadata.uid, created.json.metadata.uid);
  assert.equal(core.json.metadata.resourceVersion, created.json.metadata.resourceVersion);
  const [added] = await w.next(1);
  assert.equal(added.type, "ADDED");
  assert.equal(added.object.message, "This is one");
  w.close();

  // Field selectors in each view's own names.
  const bySource = await t.request("GET", `${CORE}?fieldSelector=source%3Dtest-controller`);
  assert.deepEqual(bySource.json.items.map((e: { metadata: { name: string } }) => e.metadata.name), ["one"]);
  const byController = await t.request("GET", `${V1}?fieldSelector=reportingController%3Dtest-controller`);
  assert.equal(byController.status, 200, byController.text);
  assert.equal(byController.json.kind, "EventList");
  assert.equal(byController.json.apiVersion, "events.orch.io/v1");
  assert.deepEqual(byController.json.items.map((e: { note: string }) => e.note), ["This is one"]);
  const byRegarding = await t.request("GET", `${V1}?fieldSelector=regarding.name%3Dother`);
  assert.deepEqual(byRegarding.json.items, []);
  assert.equal((await t.request("GET", `${V1}?fieldSelector=regarding.name%3Dp,regarding.kind%3DPod`)).json.items.length, 1);
  assert.equal((await t.request("GET", `${CORE}?fieldSelector=involvedObject.name%3Dp,involvedObject.namespace%3Ddefault`)).json.items.length, 1);
  assert.equal((await t.request("GET", `${CORE}?fieldSelector=involvedObject.kind%3DNode`)).json.items.length, 0);

  // Watch through events/v1 sees a patch made there, converted.
  const wv1 = await t.watch(`${V1}?watch=1&resourceVersion=${created.json.metadata.resourceVersion}`);
  const patched = await t.request("PATCH", `${V1}/one`, { body: { note: "patched" }, headers: { "content-type": "application/strategic-merge-patch+json" } });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.json.note, "patched");
  // Upstream tracks no generation on events: none on create, none after a change.
  assert.equal(created.json.metadata.generation, undefined);
  assert.equal(patched.json.metadata.generation, undefined);
  const [modified] = await wv1.next(1);
  assert.equal(modified.type, "MODIFIED");
  assert.equal(modified.object.apiVersion, "events.orch.io/v1");
  assert.equal(modified.object.note, "patched");
  assert.equal(modified.object.message, undefined);
  wv1.close();
  assert.equal((await t.request("GET", `${CORE}/one`)).json.message, "patched");

  // An update through events/v1 (series), then one through core, seen through events/v1.
  const series = { count: 100, lastObservedTime: "2017-09-19T13:49:16.000000Z" };
  const updated = await t.request("PUT", `${V1}/one`, { body: { ...patched.json, series } });
  assert.equal(updated.status, 200, updated.text);
  assert.deepEqual((await t.request("GET", `${CORE}/one`)).json.series, series);
  const coreNow = (await t.request("GET", `${CORE}/one`)).json;
  const coreUpdated = await t.request("PUT", `${CORE}/one`, { body: { ...coreNow, message: "from core" } });
  assert.equal(coreUpdated.status, 200, coreUpdated.text);
  const seen = (await t.request("GET", `${V1}/one`)).json;
  assert.equal(seen.note, "from core");
  assert.deepEqual(seen.series, series);

  // Delete through core: gone in both.
  assert.equal((await t.request("DELETE", `${CORE}/one`)).status, 200);
  assert.equal((await t.request("GET", `${V1}/one`)).status, 404);
});

test("deletecollection through events/v1 removes the core events too", async () => {
  for (const name of ["a", "b", "c"]) assert.equal((await t.request("POST", V1, { body: newEvent(name) })).status, 201);
  assert.equal((await t.request("GET", `${CORE}?labelSelector=testevent-set%3Dtrue`)).json.items.length, 3);
  const del = await t.request("DELETE", `${V1}?labelSelector=testevent-set%3Dtrue`);
  assert.equal(del.status, 200, del.text);
  assert.equal((await t.request("GET", `${CORE}?labelSelector=testevent-set%3Dtrue`)).json.items.length, 0);
  assert.equal((await t.request("GET", `${V1}?labelSelector=testevent-set%3Dtrue`)).json.items.length, 0);
});

test("validation: upstream's strict rules for events/v1 creates and updates", async () => {
  const bad = await t.request("POST", V1, {
    body: newEvent("bad", { eventTime: undefined, action: "", reason: "", type: "Odd", note: "x".repeat(1025), deprecatedCount: 2, deprecatedSource: { component: "k" }, series: { count: 1 } }),
  });
  assert.equal(bad.status, 422, bad.text);
  const got = causes(bad);
  for (const want of [
    "eventTime: Required value",
    "series.count: Invalid value: \"\": should be at least 2",
    "series.lastObservedTime: Required value",
    "type: Invalid value: \"\": has invalid value: Odd",
    "count: Invalid value: \"\": needs to be unset",
    "source: Invalid value: \"\": needs to be unset",
  ]) assert.ok(got.includes(want), `${want} not in ${JSON.stringify(got)}`);

  const noController = await t.request("POST", V1, { body: newEvent("nc", { reportingController: "", action: "" }) });
  assert.equal(noController.status, 422);
  assert.ok(causes(noController).includes("reportingComponent: Required value"), JSON.stringify(causes(noController)));
  assert.ok(causes(noController).includes("action: Required value"));

  // Old-style core events stay valid through core but are refused through events/v1.
  const legacy = { apiVersion: "v1", kind: "Event", metadata: { name: "legacy" }, involvedObject: { namespace: "default" }, reason: "R", message: "m", count: 1, firstTimestamp: "2020-01-01T00:00:00Z" };
  assert.equal((await t.request("POST", CORE, { body: legacy })).status, 201);
  const legacyV1 = (await t.request("GET", `${V1}/legacy`)).json;
  assert.equal(legacyV1.deprecatedCount, 1);

  const ok = await t.request("POST", V1, { body: newEvent("imm") });
  assert.equal(ok.status, 201, ok.text);
  const changed = await t.request("PUT", `${V1}/imm`, { body: { ...ok.json, reason: "Other", series: { count: 1, lastObservedTime: "2017-09-19T13:49:16.000000Z" } } });
  assert.equal(changed.status, 422);
  assert.deepEqual(causes(changed).sort(), ['reason: Invalid value: "Other": field is immutable', 'series.count: Invalid value: "": should be at least 2'].sort());
});

test("discovery, table and protobuf of events/v1", async () => {
  const disc = await t.request("GET", "/apis/events.orch.io/v1");
  assert.equal(disc.status, 200, disc.text);
  assert.deepEqual(disc.json.resources.map((r: { name: string; kind: string }) => `${r.name}/${r.kind}`), ["events/Event"]);
  assert.equal((await t.request("POST", V1, { body: newEvent("tbl") })).status, 201);
  const table = await t.request("GET", `${V1}/tbl`, { headers: { accept: "application/json;as=Table;v=v1;g=meta.orch.io" } });
  assert.equal(table.status, 200, table.text);
  assert.deepEqual(table.json.rows[0].cells.slice(1, 4), ["Normal", "Test", "pod/p"]);
  const pb = await t.request("GET", `${V1}/tbl`, { headers: { accept: "application/vnd.orch.protobuf" } });
  assert.equal(pb.status, 200, pb.text);
  assert.match(pb.headers["content-type"] as string, /protobuf/);
  assert.ok(pb.body.includes(Buffer.from("test-controller")));
});
