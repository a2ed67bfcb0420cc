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

test("SyncLoop: an update that comes back after a deleted pod's worker finished starts no second worker", async () => {
  const terminations: string[] = [];
  const removed: string[] = [];
  const workers = new PodWorkers({
    sync: {
      syncPod: async () => ({}),
      syncTerminatingPod: async (pod) => void terminations.push(pod.metadata.resourceVersion!),
      syncTerminatedPod: async () => {},
      onRemoved: (pod) => void removed.push(pod.metadata.resourceVersion!),
    },
  });
  const loop = new SyncLoop({ workers, allocatable: () => new Map([["cpu", 4], ["memory", 8 * 2 ** 30], ["pods", 110]]), mirrorAnnotation: "orch.io/config.mirror", onRejected: () => {} });
  const pod = (rv: string, deleting: boolean, phase?: string): Pod => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "default", uid: "u-2", resourceVersion: rv, ...(deleting ? { deletionTimestamp: "2026-11-29T00:00:00Z", deletionGracePeriodSeconds: 1 } : {}) },
    spec: { containers: [{ name: "c", image: "busybox" }] },
    status: phase ? { phase } : {},
  });
  loop.apiPodChanged(pod("1", false));
  await workers.idle("u-2");
  loop.apiPodChanged(pod("2", true));
  await workers.idle("u-2");
  assert.deepEqual([terminations, removed], [["2"], ["2"]], "terminated and removed once");
  // The agent's own last status write, seen after the worker finished (before the DELETED event).
  loop.apiPodChanged(pod("3", true, "Failed"));
  await workers.idle("u-2");
  assert.equal(workers.has("u-2"), false, "no second worker");
  assert.deepEqual(workers.activePods(), [], "nothing counts against the node");
  assert.deepEqual(terminations, ["2"]);
  loop.apiPodDeleted(pod("3", true, "Failed"));
  workers.stop();
});

test("PodWorkers: a static pod removed and added again (same uid) runs again", async () => {
  const synced: string[] = [];
  const workers = new PodWorkers({
    sync: { syncPod: async (pod) => {
      synced.push(pod.metadata.resourceVersion!);
      return {};
    }, syncTerminatingPod: async () => {}, syncTerminatedPod: async () => {} },
  });
  const pod = (rv: string): Pod => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "s", namespace: "kube-system", uid: "u-3", resourceVersion: rv }, spec: { containers: [{ name: "c", image: "busybox" }] } });
  workers.update(pod("1"));
  await workers.idle("u-3");
  workers.kill("u-3", 0);
  await workers.idle("u-3");
  assert.equal(workers.has("u-3"), false);
  workers.update(pod("2"));
  await workers.idle("u-3");
  assert.deepEqual(synced, ["1", "2"]);
  workers.stop();
});
