import { test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../api/index.js";
import type { Event } from "../api/core/types.js";
import { startTestServer } from "../apiserver/testing/harness.js";
import { eventually } from "../controllers/testing.js";
import { EventRecorder, MAX_REMEMBERED, MAX_SIMILAR, remember } from "./event-recorder.js";
import { loadKubeconfig } from "./kubeconfig.js";
import { RestClient } from "./rest.js";

test("event recorder: one Event per object, reason and message; repeats bump count; a full queue drops", async () => {
  const t = await startTestServer({ modules: builtinModules() });
  const client = new RestClient(loadKubeconfig(t.server.kubeconfigPath));
  try {
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "default", uid: "u-1" } };
    const recorder = new EventRecorder({ client, component: "default-scheduler", concurrency: 1 });
    recorder.event(pod, "Warning", "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.");
    recorder.event(pod, "Warning", "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.");
    recorder.event(pod, "Normal", "Scheduled", "Successfully assigned default/p to n1");
    const events = { group: "", version: "v1", resource: "events", namespaced: true };
    const list = await eventually("events written", async () => {
      const items = (await client.list<Event>(events, { namespace: "default" })).items;
      return items.length === 2 && items.some((e) => e.count === 2) ? items : undefined;
    });
    const failed = list.find((e) => e.reason === "FailedScheduling")!;
    assert.equal(failed.type, "Warning");
    assert.equal(failed.source?.component, "default-scheduler");
    assert.deepEqual([failed.involvedObject?.kind, failed.involvedObject?.name, failed.involvedObject?.uid], ["Pod", "p", "u-1"]);
    const tiny = new EventRecorder({ client, component: "x", maxPending: 1, concurrency: 1 });
    for (let i = 0; i < 5; i++) tiny.event(pod, "Normal", "R", `m${i}`);
    assert.equal(tiny.dropped, 4);
    // perObject: a burst of 3 per object, refilled far too slowly to matter here.
    const limited = new EventRecorder({ client, component: "x", perObject: { burst: 3, everyMs: 3_600_000 } });
    const other = { ...pod, metadata: { ...pod.metadata, name: "q", uid: "u-2" } };
    for (let i = 0; i < 5; i++) limited.event(pod, "Normal", "Spam", `s${i}`);
    limited.event(other, "Normal", "Spam", "another object has its own bucket");
    assert.equal(limited.dropped, 2);
  } finally {
    client.close();
    await t.close();
  }
});

test("event recorder: similar events (one object, type and reason, many messages) become one combined event from the tenth message on", async () => {
  const t = await startTestServer({ modules: builtinModules() });
  const client = new RestClient(loadKubeconfig(t.server.kubeconfigPath));
  try {
    const rs = { apiVersion: "apps/v1", kind: "ReplicaSet", metadata: { name: "web-1", namespace: "default", uid: "rs-1" } };
    const other = { ...rs, metadata: { ...rs.metadata, name: "db-1", uid: "rs-2" } };
    const recorder = new EventRecorder({ client, component: "replicaset-controller", concurrency: 1 });
    for (let i = 0; i < 14; i++) recorder.event(rs, "Normal", "SuccessfulCreate", `Created pod: web-1-${i}`);
    recorder.event(rs, "Normal", "SuccessfulDelete", "Deleted pod: web-1-0"); // another reason: its own event
    for (let i = 0; i < 3; i++) recorder.event(other, "Normal", "SuccessfulCreate", `Created pod: db-1-${i}`);
    const events = { group: "", version: "v1", resource: "events", namespaced: true };
    const items = await eventually("events written", async () => {
      const list = (await client.list<Event>(events, { namespace: "default" })).items;
      return list.some((e) => e.message?.startsWith("(combined") && e.count === 14 - (MAX_SIMILAR - 1)) && list.length === MAX_SIMILAR + 1 + 3 ? list : undefined;
    });
    const web = items.filter((e) => e.involvedObject?.uid === "rs-1" && e.reason === "SuccessfulCreate");
    assert.equal(web.length, MAX_SIMILAR, "nine events of their own and one combined");
    const combined = web.filter((e) => e.message!.startsWith("(combined from similar events): "));
    assert.equal(combined.length, 1);
    assert.equal(combined[0]!.message, "(combined from similar events): Created pod: web-1-13", "the combined event shows the latest message");
    assert.equal(combined[0]!.count, 5, "messages 10 to 14");
    assert.deepEqual(web.filter((e) => e !== combined[0]).map((e) => e.message).sort(), Array.from({ length: 9 }, (_, i) => `Created pod: web-1-${i}`).sort());
    assert.equal(items.filter((e) => e.involvedObject?.uid === "rs-2").length, 3, "another object's events are not combined with these");
    assert.equal(items.filter((e) => e.reason === "SuccessfulDelete").length, 1);
  } finally {
    client.close();
    await t.close();
  }
});

test("remembered events and buckets: the least recently used go first past 4,096, a use moves an entry to the end", () => {
  const map = new Map<string, number>();
  for (let i = 0; i < MAX_REMEMBERED; i++) remember(map, `k${i}`, i);
  remember(map, "k0", 0); // used again: now the most recent
  remember(map, "new", -1);
  assert.equal(map.size, MAX_REMEMBERED);
  assert.ok(map.has("k0"), "the entry used again stays");
  assert.ok(!map.has("k1"), "the least recently used one is dropped");
  assert.deepEqual([...map.keys()].slice(-2), ["k0", "new"]);
});
