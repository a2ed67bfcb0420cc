// The StatefulSet controller: pods with stable names <set>-<ordinal>, made
// one at a time in ordinal order and removed in reverse (OrderedReady) or all
// at once (Parallel), each labelled with its name, index and revision; the
// template's history kept as ControllerRevisions; RollingUpdate replaces
// pods from the highest ordinal down to the partition, OnDelete only when a
// pod is deleted. Each pod's claims from volumeClaimTemplates are made before
// it and kept to persistentVolumeClaimRetentionPolicy (./claims.ts).

import { workloadKeys, type WorkloadKeys } from "../../machinery/naming.js";
import type { StatefulSet, StatefulSetStatus } from "../../api/apps/types.js";
import { NAMESPACE_INDEX, WorkQueue, splitKey, type Informer, type ProcessResult } from "../../client/index.js";
import { CONTROLLER_UID_INDEX, claimCandidates, controllerUidIndex } from "../indexes.js";
import { isApiError } from "../../machinery/index.js";
import type { ControllerContext, ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";
import {
  Expectations,
  claimObjects,
  isPodAvailable,
  isPodReady,
  isPodTerminating,
  msUntilAvailable,
  podFromTemplate,
  ownerRevisions,
  selectorOf,
  templateOf,
  truncateHistory,
  watchOwnersAndPods,
  writeStatus,
  type ControllerRevision,
  type Pod,
  type PodTemplate,
} from "../workload/index.js";
import { isPodTerminal } from "../../api/core/pod-phase.js";
import { CONTROLLERREVISIONS, PERSISTENT_VOLUME_CLAIMS, PODS, STATEFULSETS } from "../../api/resource-refs.js";
import type { PersistentVolumeClaim } from "../../api/core/persistent-volume-types.js";
import { claimsFor, retentionOwners, sameOwners, withClaimVolumes } from "./claims.js";

/** The pod label naming the revision a pod was made from (upstream's StatefulSetRevisionLabel). */
export const REVISION_LABEL = "controller-revision-hash";

export interface StatefulSetControllerOptions {
  /** StatefulSets synced in parallel (upstream --concurrent-statefulset-syncs, default 5). */
  workers?: number | undefined;
  /** Gate StatefulSetAutoDeletePVC: persistentVolumeClaimRetentionPolicy is acted on (default true); off, claims are always retained. */
  autoDeletePVC?: boolean | undefined;
}

export const statefulSetController: ControllerDescriptor = {
  name: "statefulset-controller",
  aliases: ["statefulset"],
  enabledByDefault: true,
  run: (context) => new StatefulSetController(context, { workers: context.config?.concurrentStatefulSetSyncs, autoDeletePVC: context.config?.statefulSetAutoDeletePVC }).run(),
};

/** The ordinal in a member pod's name, or -1 when the pod is not named <set>-<n>. */
export function ordinalOf(setName: string, pod: Pod): number {
  const name = pod.metadata.name ?? "";
  if (!name.startsWith(`${setName}-`)) return -1;
  const tail = name.slice(setName.length + 1);
  return /^(0|[1-9]\d*)$/.test(tail) ? Number(tail) : -1;
}

export class StatefulSetController {
  readonly #ctx: ControllerContext;
  readonly #workers: number;
  readonly #keys: WorkloadKeys;
  readonly queue = new WorkQueue({ name: "statefulset" });
  readonly #sets: Informer<StatefulSet>;
  readonly #pods: Informer<Pod>;
  readonly #revisions: Informer<ControllerRevision>;
  readonly #claims: Informer<PersistentVolumeClaim>;
  readonly #autoDeletePVC: boolean;

  constructor(context: ControllerContext, options: StatefulSetControllerOptions = {}) {
    this.#ctx = context;
    this.#workers = options.workers ?? 5;
    this.#keys = workloadKeys(context.naming);
    this.#sets = context.informers.informerFor<StatefulSet>({ resource: STATEFULSETS });
    this.#pods = context.informers.informerFor<Pod>({ resource: PODS });
    this.#pods.addIndexers({ [CONTROLLER_UID_INDEX]: controllerUidIndex });
    this.#revisions = context.informers.informerFor<ControllerRevision>({ resource: CONTROLLERREVISIONS });
    this.#claims = context.informers.informerFor<PersistentVolumeClaim>({ resource: PERSISTENT_VOLUME_CLAIMS });
    this.#autoDeletePVC = options.autoDeletePVC ?? true;
  }

  async run(): Promise<void> {
    // Names are deterministic (a second create is AlreadyExists), so no creation expectations are needed.
    watchOwnersAndPods({ kind: "StatefulSet", owners: this.#sets, pods: this.#pods, queue: this.queue, expectations: new Expectations() });
    await runQueue(this.#ctx, { name: "statefulset-controller", queue: this.queue, workers: this.#workers, informers: [this.#sets, this.#pods, this.#revisions, this.#claims], process: (key) => this.sync(key) });
  }

  /** One pass over one StatefulSet ("namespace/name"). */
  async sync(key: string): Promise<ProcessResult | void> {
    const set = this.#sets.get(key);
    if (set === undefined || set.metadata.deletionTimestamp) return;
    const { namespace } = splitKey(key);
    const client = this.#ctx.client;
    const selector = selectorOf(set);
    if (selector.empty) return; // selecting everything is refused, as upstream
    const name = set.metadata.name!;
    const candidates = claimCandidates(this.#pods, set).filter((p) => ordinalOf(name, p) >= 0);
    const pods = await claimObjects({ client, resource: PODS, owner: set, ownerResource: STATEFULSETS, selector, candidates });
    const { revisions, update } = await ownerRevisions({ client, owner: set, ownerResource: STATEFULSETS, candidates: this.#revisions.byIndex(NAMESPACE_INDEX, namespace!), hashLabel: this.#keys.revisionHash });
    const current = revisions.find((r) => r.metadata.name === set.status?.currentRevision) ?? update;

    // A claim still being deleted: nothing else brings this set back when it is gone.
    const pending = await this.#update(set, pods, current, update);
    // Counted from the cache afresh: what this pass did shows up as the events arrive.
    const claimed = new Set(pods.map((p) => p.metadata.uid));
    const now = claimCandidates(this.#pods, set).filter((p) => claimed.has(p.metadata.uid));
    const status = this.#status(set, now, current, update);
    if (!sameStatus(set.status, status)) await writeStatus(client, STATEFULSETS, set, status);

    const live = new Set([current.metadata.name!, update.metadata.name!, ...now.map((p) => p.metadata.labels?.[REVISION_LABEL] ?? "")]);
    await truncateHistory(client, revisions, live, set.spec?.revisionHistoryLimit ?? 10);

    const minReady = set.spec?.minReadySeconds ?? 0;
    if (pending === "claim-pending") return { requeueAfterMs: 1000 };
    if (minReady > 0 && (status.availableReplicas ?? 0) < (status.readyReplicas ?? 0)) return { requeueAfterMs: Math.max(1000, ...now.map((p) => msUntilAvailable(p, minReady))) };
  }

  /** upstream's updateStatefulSet: create, fix and delete pods, one step at a time under OrderedReady. */
  async #update(set: StatefulSet, pods: Pod[], current: ControllerRevision, update: ControllerRevision): Promise<"claim-pending" | void> {
    const name = set.metadata.name!;
    const replicaCount = set.spec?.replicas ?? 1;
    const start = set.spec?.ordinals?.start ?? 0;
    const monotonic = (set.spec?.podManagementPolicy ?? "OrderedReady") !== "Parallel";
    const minReady = set.spec?.minReadySeconds ?? 0;
    const healthy = (p: Pod) => !isPodTerminating(p) && p.status?.phase === "Running" && isPodAvailable(p, minReady);

    const replicas: (Pod | undefined)[] = new Array(replicaCount).fill(undefined);
    const condemned: Pod[] = [];
    for (const pod of pods) {
      const ord = ordinalOf(name, pod);
      if (ord >= start && ord < start + replicaCount) replicas[ord - start] = pod;
      else condemned.push(pod);
    }
    // As upstream: the first unhealthy pod in ordinal order (kept replicas, then the condemned from the lowest);
    // scale-down goes from the highest ordinal and halts at an unhealthy pod that is not that one.
    condemned.sort((a, b) => ordinalOf(name, a) - ordinalOf(name, b));
    const firstUnhealthy = [...replicas, ...condemned].find((p) => p !== undefined && !healthy(p));
    condemned.reverse();
    let pending: "claim-pending" | undefined;

    for (let i = 0; i < replicaCount; i++) {
      const pod = replicas[i];
      if (pod !== undefined && !isPodTerminating(pod) && isPodTerminal(pod)) {
        // A finished pod is replaced: delete it now, recreate it once it is gone.
        await this.#deletePod(pod);
        if (monotonic) return pending;
        continue;
      }
      if (pod === undefined) {
        // The pod's claims first; one still being deleted holds the pod back (upstream: "pvc is being deleted").
        const claimed = await this.#ensureClaims(set, start + i, undefined, false);
        if (claimed) await this.#createPod(set, start + i, current, update);
        else pending = "claim-pending";
        if (monotonic) return pending;
        continue;
      }
      if (!isPodTerminating(pod)) await this.#ensureClaims(set, start + i, pod, false);
      if (isPodTerminating(pod) || !healthy(pod)) {
        if (monotonic) return pending;
        continue;
      }
      await this.#fixIdentity(pod, start + i);
    }

    // Claims of pods scaled away follow whenScaled before the pods go (upstream's UpdatePodClaimForRetentionPolicy).
    if (this.#autoDeletePVC) for (const pod of condemned) await this.#ensureClaims(set, ordinalOf(name, pod), pod, true, false);

    for (const pod of condemned) {
      if (isPodTerminating(pod)) {
        if (monotonic) return pending;
        continue;
      }
      if (monotonic && !healthy(pod) && pod !== firstUnhealthy) return pending;
      await this.#deletePod(pod);
      if (monotonic) return pending;
    }

    if ((set.spec?.updateStrategy?.type ?? "RollingUpdate") !== "RollingUpdate") return pending;
    const partition = set.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
    for (let i = replicaCount - 1; i >= partition; i--) {
      const pod = replicas[i];
      if (pod === undefined) return pending;
      if (pod.metadata.labels?.[REVISION_LABEL] !== update.metadata.name && !isPodTerminating(pod)) {
        await this.#deletePod(pod);
        return pending;
      }
      if (!healthy(pod)) return pending;
    }
    return pending;
  }

  async #createPod(set: StatefulSet, ordinal: number, current: ControllerRevision, update: ControllerRevision): Promise<void> {
    const strategy = set.spec?.updateStrategy;
    const rolling = (strategy?.type ?? "RollingUpdate") === "RollingUpdate";
    const start = set.spec?.ordinals?.start ?? 0;
    // Below the partition (or not yet replaced), a recreated pod keeps the current revision.
    const useCurrent = rolling && (strategy?.rollingUpdate ? ordinal < start + (strategy.rollingUpdate.partition ?? 0) : ordinal < start + (set.status?.currentReplicas ?? 0));
    const revision = useCurrent ? current : update;
    const template = (revision === update ? set.spec?.template : templateOf(revision)) as PodTemplate | undefined;
    const podName = `${set.metadata.name}-${ordinal}`;
    const pod = podFromTemplate(template, set, { name: podName, labels: this.#identityLabels(podName, ordinal, revision.metadata.name!) });
    pod.spec!.hostname = podName;
    withClaimVolumes(set, pod, ordinal);
    if (set.spec?.serviceName) pod.spec!.subdomain = set.spec.serviceName;
    try {
      await this.#ctx.client.create(PODS, pod);
    } catch (err) {
      if (!isApiError(err, "AlreadyExists")) throw err; // our cache lags our own create
    }
  }

  /**
   * Pod `ordinal`'s claims: the missing ones made (unless `create` is false),
   * owners set to the retention policy; false while one is being deleted.
   */
  async #ensureClaims(set: StatefulSet, ordinal: number, pod: Pod | undefined, condemned: boolean, create = true): Promise<boolean> {
    const client = this.#ctx.client;
    let ready = true;
    for (const claim of claimsFor(set, ordinal).values()) {
      const cached = this.#claims.get(`${claim.metadata.namespace}/${claim.metadata.name}`);
      if (cached === undefined) {
        if (!create) continue;
        if (this.#autoDeletePVC) claim.metadata.ownerReferences = retentionOwners(claim, set, pod, condemned);
        if (claim.metadata.ownerReferences?.length === 0) delete claim.metadata.ownerReferences;
        try {
          await client.create(PERSISTENT_VOLUME_CLAIMS, claim);
        } catch (err) {
          if (!isApiError(err, "AlreadyExists")) throw err; // our cache lags our own create
        }
        continue;
      }
      if (cached.metadata.deletionTimestamp) {
        ready = false;
        continue;
      }
      if (!this.#autoDeletePVC || pod === undefined) continue;
      const owners = retentionOwners(cached, set, pod, condemned);
      if (sameOwners(cached.metadata.ownerReferences, owners)) continue;
      try {
        await client.patch(PERSISTENT_VOLUME_CLAIMS, { namespace: cached.metadata.namespace!, name: cached.metadata.name!, patch: { metadata: { ownerReferences: owners, resourceVersion: cached.metadata.resourceVersion } } });
      } catch (err) {
        if (!isApiError(err, "NotFound") && !isApiError(err, "Conflict")) throw err; // the next pass sees it as it is now
      }
    }
    return ready;
  }

  #identityLabels(podName: string, ordinal: number, revision?: string): Record<string, string> {
    return { [this.#keys.statefulSetPodName]: podName, [this.#keys.podIndex]: String(ordinal), ...(revision !== undefined ? { [REVISION_LABEL]: revision } : {}) };
  }

  /** A pod that lost its identity labels gets them back (upstream's updateStatefulPod). */
  async #fixIdentity(pod: Pod, ordinal: number): Promise<void> {
    const want = this.#identityLabels(pod.metadata.name!, ordinal);
    if (Object.entries(want).every(([k, v]) => pod.metadata.labels?.[k] === v)) return;
    await this.#ctx.client.patch(PODS, { namespace: pod.metadata.namespace!, name: pod.metadata.name!, patch: { metadata: { labels: want } } });
  }

  async #deletePod(pod: Pod): Promise<void> {
    try {
      await this.#ctx.client.delete(PODS, { namespace: pod.metadata.namespace!, name: pod.metadata.name!, preconditions: { uid: pod.metadata.uid! } });
    } catch (err) {
      if (!isApiError(err, "NotFound") && !isApiError(err, "Conflict")) throw err;
    }
  }

  #status(set: StatefulSet, pods: Pod[], current: ControllerRevision, update: ControllerRevision): StatefulSetStatus {
    const minReady = set.spec?.minReadySeconds ?? 0;
    const live = pods.filter((p) => !isPodTerminating(p));
    const status: StatefulSetStatus = {
      observedGeneration: set.metadata.generation ?? 0,
      replicas: pods.length,
      readyReplicas: pods.filter((p) => p.status?.phase === "Running" && isPodReady(p)).length,
      availableReplicas: pods.filter((p) => p.status?.phase === "Running" && isPodAvailable(p, minReady)).length,
      currentReplicas: live.filter((p) => p.metadata.labels?.[REVISION_LABEL] === current.metadata.name).length,
      updatedReplicas: live.filter((p) => p.metadata.labels?.[REVISION_LABEL] === update.metadata.name).length,
      currentRevision: current.metadata.name!,
      updateRevision: update.metadata.name!,
      collisionCount: set.status?.collisionCount ?? 0,
    };
    // A finished rolling update: the update revision becomes the current one.
    if ((set.spec?.updateStrategy?.type ?? "RollingUpdate") === "RollingUpdate" && status.updatedReplicas === status.replicas && status.readyReplicas === status.replicas) {
      status.currentReplicas = status.updatedReplicas;
      status.currentRevision = status.updateRevision;
    }
    return { ...set.status, ...status };
  }
}

function sameStatus(a: StatefulSetStatus | undefined, b: StatefulSetStatus): boolean {
  const keys = ["observedGeneration", "replicas", "readyReplicas", "availableReplicas", "currentReplicas", "updatedReplicas", "collisionCount"] as const;
  return keys.every((k) => (a?.[k] ?? 0) === (b[k] ?? 0)) && a?.currentRevision === b.currentRevision && a?.updateRevision === b.updateRevision;
}
