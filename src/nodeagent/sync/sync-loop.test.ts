import assert from "node:assert/strict";
import { test } from "node:test";
import type { Pod } from "../../api/core/types.js";
import { PodWorkers } from "../pod-workers/pod-workers.js";
import { SyncLoop } from "./sync-loop.js";

test("SyncLoop: a status-only change from the API hands the worker the newer pod without a sync; spec, label, annotation and deletion changes sync", async () => {
  const synced: Pod[] = [];
  const workers = new PodWorkers({
    sync: {
      syncPod: async (pod) => {
        synced.push(pod);
        return {};
      },
      syncTerminatingPod: async () => {},
      syncTerminatedPod: async () => {},
    },
  });
  const loop = new SyncLoop({ workers, allocatable: () => new Map([["cpu", 4], ["memory", 8 * 2 ** 30], ["pods", 110]]), mirrorAnnotation: "orch.io/config.mirror", onRejected: () => {} });
  const pod = (rv: string, extra: Partial<Pod> = {}): Pod => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "default", uid: "u-1", resourceVersion: rv, labels: { app: "web" }, ...extra.metadata },
    spec: { containers: [{ name: "c", image: "busybox" }], ...extra.spec },
    status: extra.status ?? {},
  });
  const settle = () => workers.idle("u-1");
  loop.apiPodChanged(pod("1"));
  await settle();
  assert.equal(synced.length, 1);
  loop.apiPodChanged(pod("2", { status: { phase: "Running" } }));
  await settle();
  assert.equal(synced.length, 1, "status only: no sync");
  workers.wake("u-1");
  await settle();
  assert.equal(synced.at(-1)!.metadata.resourceVersion, "2", "the next pass sees the newer object");
  const before = synced.length;
  loop.apiPodChanged(pod("3", { metadata: { name: "web", labels: { app: "web", tier: "x" } } }));
  await settle();
  loop.apiPodChanged(pod("4", { metadata: { name: "web", labels: { app: "web", tier: "x" }, annotations: { a: "b" } } }));
  await settle();
  loop.apiPodChanged(pod("5", { metadata: { name: "web", labels: { app: "web", tier: "x" }, annotations: { a: "b" } }, spec: { containers: [{ name: "c", image: "busybox:2" }] } }));
  await settle();
  assert.equal(synced.length, before + 3);
  workers.stop();
});
