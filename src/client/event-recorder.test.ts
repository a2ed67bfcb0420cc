import { test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../api/index.js";
import type { Event } from "../api/core/types.js";
import { startTestServer } from "../apiserver/testing/harness.js";
import { eventually } from "../controllers/testing.js";
import { EventRecorder } from "./event-recorder.js";
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
