// Housekeeping (seed 001, "What the service does" 2: pods are reconciled
// "periodically"): two timers beside the sync loop's events. Every
// syncFrequency each pod's worker is woken for a full resync; every
// housekeeping period, pods the runtime still has but no source wants any more
// (orphans: removed while the agent was down, or left by a failed removal) are
// stopped and removed.

import type { Pod } from "../../api/core/types.js";
import type { PodWorkers } from "../pod-workers/pod-workers.js";
import type { PodSyncer } from "../runtime-manager/pod-syncer.js";

export interface HousekeepingOptions {
  /** The pod uids the runtime has, as of the last relist (PLEG). */
  runtime: { runtimeUids(): Iterable<string> };
  workers: Pick<PodWorkers, "has" | "pods" | "wake">;
  syncer: Pick<PodSyncer, "syncTerminatingPod" | "syncTerminatedPod">;
  housekeepingMs: number;
  syncFrequencyMs: number;
  log?: (line: string) => void;
}

export class Housekeeping {
  readonly #o: HousekeepingOptions;
  #timers: NodeJS.Timeout[] = [];

  constructor(options: HousekeepingOptions) {
    this.#o = options;
  }

  start(): void {
    if (this.#timers.length > 0) return;
    this.#timers = [setInterval(() => void this.removeOrphans(), this.#o.housekeepingMs), setInterval(() => this.resync(), this.#o.syncFrequencyMs)];
  }

  stop(): void {
    for (const t of this.#timers.splice(0)) clearInterval(t);
  }

  /** Wakes every pod's worker: a full sync, whatever events came. */
  resync(): void {
    for (const p of this.#o.workers.pods()) this.#o.workers.wake(p.metadata.uid!);
  }

  /** Stops and removes the runtime's pods that have no worker (no source wants them). */
  async removeOrphans(): Promise<void> {
    const { workers, syncer, log } = this.#o;
    for (const uid of this.#o.runtime.runtimeUids()) {
      if (workers.has(uid)) continue;
      // All the syncer needs of a pod it has no spec for: its uid (its containers carry it as a label).
      const orphan: Pod = { apiVersion: "v1", kind: "Pod", metadata: { uid, name: uid, namespace: "" } };
      await syncer.syncTerminatingPod(orphan, 0).then(() => syncer.syncTerminatedPod(orphan, { remove: true })).catch((err: Error) => log?.(`housekeeping: pod ${uid}: ${err.message}`));
    }
  }
}
