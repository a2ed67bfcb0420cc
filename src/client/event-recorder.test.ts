import { test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../api/index.js";
import type { Event } from "../api/core/types.js";
import { startTestServer } from "../apiserver/testing/harness.js";
import { eventually } from "../controllers/testing.js";
import { EventRecorder, MAX_REMEMBERED, remember } from "./event-recorder.js";
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
