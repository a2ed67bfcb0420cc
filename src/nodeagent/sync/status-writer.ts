// After each pass of a pod's worker: the pod's status, built from what the
// runtime, the syncer and the probes say, handed to the status manager. The
// start time is the first time the agent saw the pod (kept across passes, or
// the API's); the pod start duration metric runs from then to Running. It
// lives in sync/ because it joins the syncer's and the status manager's views.

import { podContainers } from "../../api/core/pod-containers.js";
import type { Pod } from "../../api/core/types.js";
import type { Prober } from "../probes/prober.js";
import type { PodSyncer } from "../runtime-manager/pod-syncer.js";
import { buildPodStatus, rfc3339 } from "../status/pod-status.js";
import type { StatusManager } from "../status/status-manager.js";

export interface PodStatusWriterOptions {
  statuses: Pick<StatusManager, "set">;
  syncer: Pick<PodSyncer, "lastRuntime" | "waiting">;
  prober: Pick<Prober, "ready" | "started">;
  hostIP: string;
  runtimeName: string;
  /** A pod reached Running: seconds since the agent first saw it. */
  onRunning: (seconds: number) => void;
}

export class PodStatusWriter {
  readonly #o: PodStatusWriterOptions;
  readonly #startTimes = new Map<string, string>();
  /** When the agent first saw each pod, until it ran (pod start duration). */
  readonly #firstSeen = new Map<string, number>();
  /** Pods the agent failed itself (activeDeadlineSeconds): phase Failed with this reason, whatever the containers say. */
  readonly #failed = new Map<string, { reason: string; message: string }>();

  constructor(options: PodStatusWriterOptions) {
    this.#o = options;
  }

  /** The pod's start time on this node: the API's, else now (kept from then on). */
  startTime(pod: Pod): string {
    const uid = pod.metadata.uid!;
    let start = this.#startTimes.get(uid);
    if (start === undefined) {
      start = pod.status?.startTime ?? rfc3339(new Date());
      this.#startTimes.set(uid, start);
      this.#firstSeen.set(uid, performance.now());
    }
    return start;
  }

  /** The agent fails the pod (Failed, with `reason`); false when it already had. */
  fail(uid: string, reason: string, message: string): boolean {
    if (this.#failed.has(uid)) return false;
    this.#failed.set(uid, { reason, message });
    return true;
  }

  write(pod: Pod): void {
    const { syncer, prober } = this.#o;
    const uid = pod.metadata.uid!;
    const startTime = this.startTime(pod);
    const failed = this.#failed.get(uid);
    const spec = (name: string) => podContainers(pod.spec).find((c) => c.name === name) ?? {};
    const status = buildPodStatus({
      pod,
      runtime: syncer.lastRuntime(uid),
      waiting: syncer.waiting(uid),
      ready: (name, id) => prober.ready(uid, name, id, spec(name)),
      started: (name, id) => prober.started(uid, name, id, spec(name)),
      hostIP: this.#o.hostIP,
      startTime,
      runtimeName: this.#o.runtimeName,
      now: new Date(),
      ...(failed ? { terminal: "Failed" as const } : {}),
    });
    if (failed) Object.assign(status, failed);
    this.#o.statuses.set(pod, status);
    const seen = this.#firstSeen.get(uid);
    if (seen !== undefined && status.phase === "Running") {
      this.#o.onRunning((performance.now() - seen) / 1000);
      this.#firstSeen.delete(uid);
    }
  }

  /** The pod is gone from the node. */
  forget(uid: string): void {
    this.#startTimes.delete(uid);
    this.#firstSeen.delete(uid);
    this.#failed.delete(uid);
  }
}
