// The sync loop's pod configuration (seed 001, "What the service does" 2): it
// merges the pod sources (static files; the API's pods bound to this node),
// admits new pods (maxPods, resources), and hands every add, change and
// removal to the pod workers. Mirror pods in the API are not run: they only
// show static pods.

import type { Pod } from "../../api/core/types.js";
import { admitPod, allocationRejection, type DeviceAdmission, type Rejection } from "../admission/admission.js";
import type { PodWorkers } from "../pod-workers/pod-workers.js";
import { isPodTerminal } from "../../api/core/pod-phase.js";

export interface SyncLoopOptions {
  workers: PodWorkers;
  allocatable: () => ReadonlyMap<string, number>;
  mirrorAnnotation: string;
  onRejected: (pod: Pod, rejection: Rejection) => void;
  /** Devices are allocated at admission (upstream's device manager admit handler); a pod they fail is rejected. */
  devices?: DeviceAdmission;
  log?: (line: string) => void;
}

export class SyncLoop {
  readonly #o: SyncLoopOptions;
  readonly #static = new Map<string, Pod>();
  readonly #api = new Map<string, Pod>();
  readonly #rejected = new Set<string>();
  /** Pods whose devices are being allocated: updates meanwhile wait for the answer. */
  readonly #admitting = new Set<string>();

  constructor(options: SyncLoopOptions) {
    this.#o = options;
  }

  /** Desired pods from every source. */
  desired(): Pod[] {
    return [...this.#static.values(), ...this.#api.values()];
  }

  isStatic(uid: string): boolean {
    return this.#static.has(uid);
  }

  staticPods(): Pod[] {
    return [...this.#static.values()];
  }

  /** The static pods now in the manifest directory (the whole set). */
  setStaticPods(pods: readonly Pod[]): void {
    const next = new Map(pods.map((p) => [p.metadata.uid!, p]));
    for (const [uid, old] of this.#static) if (!next.has(uid)) this.#remove(uid, old);
    this.#static.clear();
    for (const [uid, pod] of next) {
      this.#static.set(uid, pod);
      this.#upsert(pod);
    }
  }

  /**
   * An API pod bound to this node was added or changed. A change of its
   * status alone (most often the agent's own write coming back) does not sync
   * the pod again: its worker only gets the newer object, as upstream's
   * agent reconciles such updates without a SyncPod.
   */
  apiPodChanged(pod: Pod): void {
    if (pod.metadata.annotations?.[this.#o.mirrorAnnotation] !== undefined) return;
    const uid = pod.metadata.uid!;
    const old = this.#api.get(uid);
    this.#api.set(uid, pod);
    if (old !== undefined && this.#o.workers.has(uid) && !differSemantically(old, pod)) {
      this.#o.workers.refresh(pod);
      return;
    }
    this.#upsert(pod);
  }

  /** An API pod is gone (deleted for good). */
  apiPodDeleted(pod: Pod): void {
    const uid = pod.metadata.uid!;
    if (!this.#api.delete(uid)) return;
    this.#remove(uid, pod);
  }

  #upsert(pod: Pod): void {
    const uid = pod.metadata.uid!;
    const { workers } = this.#o;
    if (this.#rejected.has(uid) || this.#admitting.has(uid)) return;
    if (!workers.has(uid)) {
      // Finished pods are not admitted again (an agent restart sees them in the API).
      if (isPodTerminal(pod)) {
        if (!pod.metadata.deletionTimestamp) return;
      } else if (!pod.metadata.deletionTimestamp) {
        const rejection = admitPod(pod, workers.activePods(), this.#o.allocatable());
        if (rejection) return this.#reject(pod, rejection);
        if (this.#o.devices?.needsDevices(pod)) return this.#admitDevices(pod, this.#o.devices);
      }
    }
    workers.update(pod);
  }

  #reject(pod: Pod, rejection: Rejection): void {
    this.#rejected.add(pod.metadata.uid!);
    this.#o.log?.(`pod ${pod.metadata.namespace}/${pod.metadata.name} rejected: ${rejection.reason}: ${rejection.message}`);
    this.#o.onRejected(pod, rejection);
  }

  /** Allocates the pod's devices, then starts it with its latest object, or rejects it (unless it went away meanwhile). */
  #admitDevices(pod: Pod, devices: DeviceAdmission): void {
    const uid = pod.metadata.uid!;
    this.#admitting.add(uid);
    void devices.admit(pod).catch((err: Error) => err.message).then((error) => {
      this.#admitting.delete(uid);
      const latest = this.#api.get(uid) ?? this.#static.get(uid);
      if (error !== undefined) {
        if (latest !== undefined) this.#reject(latest, allocationRejection(error));
        return;
      }
      if (latest !== undefined) this.#o.workers.update(latest);
      devices.settled(uid);
    });
  }

  #remove(uid: string, pod: Pod): void {
    this.#rejected.delete(uid);
    this.#o.workers.kill(uid, pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30);
  }
}

/** What upstream's agent compares before syncing a changed pod: spec, labels, annotations, deletion. */
function differSemantically(a: Pod, b: Pod): boolean {
  const key = (p: Pod) => JSON.stringify([p.spec, p.metadata.labels ?? {}, p.metadata.annotations ?? {}, p.metadata.deletionTimestamp ?? null, p.metadata.deletionGracePeriodSeconds ?? null]);
  return key(a) !== key(b);
}
