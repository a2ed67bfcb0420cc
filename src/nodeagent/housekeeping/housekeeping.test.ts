import { test } from "node:test";
import assert from "node:assert/strict";
import type { Pod } from "../../api/core/types.js";
import { Housekeeping } from "./housekeeping.js";

const pod = (uid: string): Pod => ({ apiVersion: "v1", kind: "Pod", metadata: { uid, name: uid, namespace: "default" } });

function setup(o: { runtime: string[]; workers: string[]; failing?: string }) {
  const calls: string[] = [];
  const logs: string[] = [];
  const housekeeping = new Housekeeping({
    runtime: { runtimeUids: () => new Set(o.runtime) },
    workers: { has: (uid) => o.workers.includes(uid), pods: () => o.workers.map(pod), wake: (uid) => void calls.push(`wake ${uid}`) },
    syncer: {
      syncTerminatingPod: async (p, grace) => {
        calls.push(`terminate ${p.metadata.uid} grace ${grace}`);
        if (p.metadata.uid === o.failing) throw new Error("runtime down");
        return { uid: p.metadata.uid!, sandboxes: [], containers: [] };
      },
      syncTerminatedPod: async (p, options) => void calls.push(`remove ${p.metadata.uid} ${options.remove}`),
    },
    housekeepingMs: 60_000,
    syncFrequencyMs: 60_000,
    log: (l) => logs.push(l),
  });
  return { housekeeping, calls, logs };
}

test("housekeeping: runtime pods no worker wants are stopped at once and removed; a failure is logged and the next goes on", async () => {
  const { housekeeping, calls, logs } = setup({ runtime: ["kept", "orphan-1", "orphan-2"], workers: ["kept"], failing: "orphan-1" });
  await housekeeping.removeOrphans();
  assert.deepStrictEqual(calls, ["terminate orphan-1 grace 0", "terminate orphan-2 grace 0", "remove orphan-2 true"]);
  assert.deepStrictEqual(logs, ["housekeeping: pod orphan-1: runtime down"]);
});

test("housekeeping: a resync wakes every pod's worker", () => {
  const { housekeeping, calls } = setup({ runtime: [], workers: ["a", "b"] });
  housekeeping.resync();
  assert.deepStrictEqual(calls, ["wake a", "wake b"]);
});
