// The ReplicaSet controller: keeps spec.replicas active pods matching the
// selector — creating them from the template in slow-start batches,
// deleting the least valuable first — adopts matching orphans, releases
// pods it no longer selects, and reports status (replicas, fullyLabeled,
// ready, available after minReadySeconds, the ReplicaFailure condition).
// The same loop runs core/v1 ReplicationControllers (upstream does the
// same): a ReplicatedKind says where the kind lives and how its selector reads.

import { isDeepStrictEqual } from "node:util";
import { workloadKeys, type WorkloadKeys } from "../../machinery/naming.js";
import type { ReplicaSetStatus } from "../../api/apps/types.js";
import { NAMESPACE_INDEX, WorkQueue, keyOf, splitKey, type Informer, type ProcessResult } from "../../client/index.js";
import { CONTROLLER_UID_INDEX, claimCandidates, controllerUidIndex } from "../indexes.js";
import { isApiError, selectorFromLabelSelector, type ApiObject, type Selector } from "../../machinery/index.js";
import type { ControllerContext, ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";
import {
  Expectations,
  claimObjects,
  controllerOf,
  findCondition,
  isPodActive,
  isPodAvailable,
  isPodReady,
  msUntilAvailable,
  newCondition,
  podFromTemplate,
  rankPodsForDeletion,
  removeCondition,
  selectorOf,
  setCondition,
  slowStartBatch,
  watchOwnersAndPods,
  writeStatus,
  type Condition,
  type Pod,
  type PodTemplate,
} from "../workload/index.js";
import { PODS, REPLICASETS, REPLICATIONCONTROLLERS } from "../../api/resource-refs.js";
import type { ResourceRef } from "../../client/index.js";

/** Upstream's BurstReplicas: at most this many creations or deletions per sync. */
const BURST_REPLICAS = 500;

/** How soon an owner whose cached pods disagree with the server's is looked at again. */
const CACHE_BEHIND_RETRY_MS = 2000;
/** How long a count from the server is waited for before asking again (someone else may have changed the pods since). */
const SERVER_COUNT_TTL_MS = 60_000;

/** A replicated kind as this loop sees it: ReplicaSets and ReplicationControllers share spec and status but for the selector's form. */
export interface ReplicatedObject extends ApiObject {
  spec?: { replicas?: number; minReadySeconds?: number; selector?: unknown; template?: PodTemplate | null };
  status?: ReplicaSetStatus;
}

/** Where a replicated kind lives and how its selector reads. */
export interface ReplicatedKind {
  readonly kind: string;
  readonly apiVersion: string;
  readonly resource: ResourceRef;
  /** The controller's name (`--controllers`, the run loop's metrics) and its work queue's. */
  readonly controllerName: string;
  readonly queueName: string;
  selectorOf(obj: ReplicatedObject): Selector;
}

export const REPLICA_SET_KIND: ReplicatedKind = {
  kind: "ReplicaSet",
  apiVersion: "apps/v1",
  resource: REPLICASETS,
  controllerName: "replicaset-controller",
  queueName: "replicaset",
  selectorOf: (rs) => selectorOf(rs as { spec?: { selector?: never } }),
};

/** core/v1 ReplicationControllers: the selector is a plain label map (an empty one selects nothing: validation forbids it). */
export const REPLICATION_CONTROLLER_KIND: ReplicatedKind = {
  kind: "ReplicationController",
  apiVersion: "v1",
  resource: REPLICATIONCONTROLLERS,
  controllerName: "replicationcontroller-controller",
  queueName: "replicationmanager",
  selectorOf: (rc) => {
    const labels = (rc.spec?.selector ?? {}) as Record<string, string>;
    return Object.keys(labels).length === 0 ? selectorFromLabelSelector(null) : selectorFromLabelSelector({ matchLabels: labels });
  },
};

export interface ReplicaSetControllerOptions {
  /** Objects synced in parallel (upstream --concurrent-replicaset-syncs, --concurrent-rc-syncs: default 5). */
  workers?: number | undefined;
  /** The kind run (default ReplicaSets). */
  kind?: ReplicatedKind;
}

export const replicaSetController: ControllerDescriptor = {
  name: "replicaset-controller",
  aliases: ["replicaset"],
  enabledByDefault: true,
  run: (context) => new ReplicaSetController(context, { workers: context.config?.concurrentReplicaSetSyncs }).run(),
};

export const replicationControllerController: ControllerDescriptor = {
  name: "replicationcontroller-controller",
  aliases: ["replicationcontroller"],
  enabledByDefault: true,
  run: (context) => new ReplicaSetController(context, { kind: REPLICATION_CONTROLLER_KIND }).run(),
};

export class ReplicaSetController {
  readonly #ctx: ControllerContext;
  readonly #workers: number;
  readonly #keys: WorkloadKeys;
  readonly #kind: ReplicatedKind;
  readonly queue: WorkQueue;
  readonly expectations = new Expectations();
  readonly #sets: Informer<ReplicatedObject>;
  readonly #pods: Informer<Pod>;
  /** When this run began: owners older than it may have pods a lagging cache has not shown yet. */
  readonly #startedAt = Date.now();
  /** Owners (key → uid) whose cached pod count has matched the server's once in this run. */
  readonly #confirmed = new Map<string, string>();
  /** Owners whose cache was found behind: the server's count then, waited for without asking again. */
  readonly #serverCounts = new Map<string, { uid: string; count: number; at: number }>();

  constructor(context: ControllerContext, options: ReplicaSetControllerOptions = {}) {
    this.#ctx = context;
    this.#workers = options.workers ?? 5;
    this.#kind = options.kind ?? REPLICA_SET_KIND;
    this.queue = new WorkQueue({ name: this.#kind.queueName });
    this.#keys = workloadKeys(context.naming);
    this.#sets = context.informers.informerFor<ReplicatedObject>({ resource: this.#kind.resource });
    this.#pods = context.informers.informerFor<Pod>({ resource: PODS });
    this.#pods.addIndexers({ [CONTROLLER_UID_INDEX]: controllerUidIndex });
  }

  async run(): Promise<void> {
    const kind = this.#kind;
    watchOwnersAndPods({ kind: kind.kind, owners: this.#sets, pods: this.#pods, queue: this.queue, expectations: this.expectations, selectorOf: (o) => kind.selectorOf(o) });
    await runQueue(this.#ctx, { name: kind.controllerName, queue: this.queue, workers: this.#workers, informers: [this.#sets, this.#pods], process: (key) => this.sync(key) });
  }

  /** One pass over one ReplicaSet or ReplicationController ("namespace/name"). */
  async sync(key: string): Promise<ProcessResult | void> {
    const rs = this.#sets.get(key);
    if (rs === undefined) {
      this.expectations.delete(key);
      this.#confirmed.delete(key);
      this.#serverCounts.delete(key);
      return;
    }
    const { namespace } = splitKey(key);
    const selector = this.#kind.selectorOf(rs);
    const needsSync = this.expectations.satisfied(key) && !rs.metadata.deletionTimestamp;
    const candidates = claimCandidates(this.#pods, rs).filter(isPodActive);
    const pods = await claimObjects({ client: this.#ctx.client, resource: PODS, owner: rs, ownerResource: this.#kind.resource, selector, candidates });

    if (needsSync && pods.length !== (rs.spec?.replicas ?? 1) && !(await this.#cacheAgrees(key, rs, selector, pods))) {
      // The cache is behind the server: acting on it would create (or delete) pods twice. Wait for it.
      return { requeueAfterMs: CACHE_BEHIND_RETRY_MS };
    }
    let manageError: unknown;
    if (needsSync) manageError = await this.#manageReplicas(key, rs, pods).then(() => undefined, (err: unknown) => err);

    const minReady = rs.spec?.minReadySeconds ?? 0;
    const status = this.#calculateStatus(rs, pods, manageError);
    const written = await this.#updateStatus(rs, status);
    if (manageError !== undefined) throw manageError;
    if (written && minReady > 0 && status.readyReplicas === (rs.spec?.replicas ?? 1) && status.availableReplicas !== status.readyReplicas) {
      const wait = Math.max(...pods.map((p) => msUntilAvailable(p, minReady)));
      return { requeueAfterMs: Math.max(wait, 1000) };
    }
  }

  /**
   * Whether the cached count of the owner's pods can be acted on. Expectations
   * cover what this run did and saw; two things they cannot cover: an owner
   * older than the run (a controller manager started again after losing its
   * lease, whose shared caches may lag the server by minutes under load) and
   * expectations that expired unmet (the cache fell more than their TTL
   * behind). Then the server is asked once (a list of the selector's pods):
   * a different count means the cache is behind. At 30,000 pods on a saturated
   * server, ReplicaSets created 12,000 pods too many before this, every five
   * minutes more. The list is served from the server's watch cache
   * (resourceVersion 0): that cache feeds this controller's informers, so it
   * is never behind them, and it costs the server a filter of cached objects.
   * A consistent list costs far more where the cache cannot prove itself
   * current (etcd 3.4 reads etcd): every pod of the namespace inflated and
   * decoded, a 6-s stall of the API server per owner at 30,000 pods.
   */
  async #cacheAgrees(key: string, rs: ReplicatedObject, selector: Selector, cached: Pod[]): Promise<boolean> {
    const uid = rs.metadata.uid!;
    const expired = this.expectations.expiredUnmet(key);
    const older = Date.parse(rs.metadata.creationTimestamp ?? "") < this.#startedAt;
    if (!expired && (this.#confirmed.get(key) === uid || !older)) return true;
    if (selector.requirements.length === 0) return true; // selects nothing (or is invalid): no list to compare with
    const owned = (pods: Pod[]) => pods.filter((p) => isPodActive(p) && controllerOf(p)?.uid === uid).length;
    // One list, then the cache is waited for: a list of each owner every retry would load a server already behind.
    let server = this.#serverCounts.get(key);
    if (server === undefined || server.uid !== uid || Date.now() - server.at > SERVER_COUNT_TTL_MS) {
      const live = await this.#ctx.client.list<Pod>(PODS, { namespace: rs.metadata.namespace!, labelSelector: selector.toString(), resourceVersion: "0" });
      server = { uid, count: owned(live.items), at: Date.now() };
      this.#serverCounts.set(key, server);
    }
    if (owned(cached) !== server.count) return false;
    this.#serverCounts.delete(key);
    this.#confirmed.set(key, uid);
    if (expired) this.expectations.delete(key);
    return true;
  }

  async #beingDeleted(rs: ReplicatedObject): Promise<boolean> {
    try {
      const live = await this.#ctx.client.get<ReplicatedObject>(this.#kind.resource, { namespace: rs.metadata.namespace!, name: rs.metadata.name!, metadataOnly: true });
      return live.metadata.uid !== rs.metadata.uid || !!live.metadata.deletionTimestamp;
    } catch (err) {
      if (isApiError(err, "NotFound")) return true;
      throw err;
    }
  }

  async #manageReplicas(key: string, rs: ReplicatedObject, pods: Pod[]): Promise<void> {
    const want = rs.spec?.replicas ?? 1;
    const diff = pods.length - want;
    const client = this.#ctx.client;
    if (diff < 0) {
      // The cached owner may lag behind its deletion (its watch is not the pods'): a pod made for an owner being
      // deleted outlives it (the garbage collector's foreground wait may already have ended). Ask the server first.
      if (await this.#beingDeleted(rs)) return;
      const count = Math.min(-diff, BURST_REPLICAS);
      this.expectations.expect(key, count);
      const { succeeded, error, stopped } = await slowStartBatch(count, async () => {
        const pod = podFromTemplate(rs.spec?.template ?? undefined, { ...rs, apiVersion: this.#kind.apiVersion, kind: this.#kind.kind });
        try {
          await client.create(PODS, pod);
        } catch (err) {
          // The namespace is going away: creating more is pointless, and not a failure to report.
          if (isApiError(err, "Forbidden") && /being terminated/.test(String((err as Error).message))) return this.expectations.lowerAdds(key, 1);
          throw err;
        }
      }, { signal: this.#ctx.signal });
      const skipped = count - succeeded;
      if (error !== undefined || stopped) this.expectations.lowerAdds(key, skipped);
      if (error !== undefined) throw error;
      return;
    }
    if (diff > 0) {
      const count = Math.min(diff, BURST_REPLICAS);
      const doomed = this.#podsToDelete(rs, pods, count);
      this.expectations.expect(key, 0, doomed.map((p) => keyOf(p)));
      const results = await Promise.allSettled(
        doomed.map(async (pod) => {
          try {
            await client.delete(PODS, { namespace: pod.metadata.namespace!, name: pod.metadata.name!, preconditions: { uid: pod.metadata.uid! } });
          } catch (err) {
            // Not going to see a deletion we did not make.
            this.expectations.deletionObserved(key, keyOf(pod));
            if (!isApiError(err, "NotFound")) throw err;
          }
        }),
      );
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed !== undefined) throw failed.reason;
    }
  }

  /**
   * The `count` pods to delete first. Pods doubled up on a node with pods of
   * related ReplicaSets (the same Deployment's) rank before lone ones.
   */
  #podsToDelete(rs: ReplicatedObject, pods: Pod[], count: number): Pod[] {
    const owner = controllerOf(rs)?.uid;
    const relatedSets = this.#sets
      .byIndex(NAMESPACE_INDEX, rs.metadata.namespace!)
      .filter((s) => s.metadata.uid === rs.metadata.uid || (owner !== undefined && controllerOf(s)?.uid === owner));
    const perNode = new Map<string, number>();
    for (const s of relatedSets) {
      for (const p of this.#pods.byIndex(CONTROLLER_UID_INDEX, s.metadata.uid!)) {
        const node = p.spec?.nodeName;
        if (node && p.metadata.namespace === rs.metadata.namespace && isPodActive(p)) perNode.set(node, (perNode.get(node) ?? 0) + 1);
      }
    }
    const siblingsOnNode = (p: Pod) => (p.spec?.nodeName ? perNode.get(p.spec.nodeName) ?? 0 : 0);
    return rankPodsForDeletion(pods, { deletionCostKey: this.#keys.podDeletionCost, siblingsOnNode }).slice(0, count);
  }

  #calculateStatus(rs: ReplicatedObject, pods: Pod[], manageError: unknown): ReplicaSetStatus {
    const templateLabels = rs.spec?.template?.metadata?.labels ?? {};
    const minReady = rs.spec?.minReadySeconds ?? 0;
    const now = Date.now();
    const conditions = replicaFailureConditions((rs.status?.conditions ?? []) as Condition[], pods.length - (rs.spec?.replicas ?? 1), manageError);
    return {
      replicas: pods.length,
      fullyLabeledReplicas: pods.filter((p) => Object.entries(templateLabels).every(([k, v]) => p.metadata.labels?.[k] === v)).length,
      readyReplicas: pods.filter(isPodReady).length,
      availableReplicas: pods.filter((p) => isPodAvailable(p, minReady, now)).length,
      ...(rs.metadata.generation !== undefined ? { observedGeneration: rs.metadata.generation } : {}),
      ...(conditions.length > 0 ? { conditions } : {}),
    };
  }

  /** Writes the status when it changed; true when it is (now) as calculated. */
  async #updateStatus(rs: ReplicatedObject, status: ReplicaSetStatus): Promise<boolean> {
    const old = rs.status ?? {};
    const same =
      (old.replicas ?? 0) === status.replicas &&
      (old.fullyLabeledReplicas ?? 0) === status.fullyLabeledReplicas &&
      (old.readyReplicas ?? 0) === status.readyReplicas &&
      (old.availableReplicas ?? 0) === status.availableReplicas &&
      old.observedGeneration === status.observedGeneration &&
      isDeepStrictEqual(old.conditions ?? [], status.conditions ?? []);
    if (same) return true;
    const next: ReplicaSetStatus = { ...old, ...status };
    if (status.conditions === undefined) delete next.conditions;
    return (await writeStatus(this.#ctx.client, this.#kind.resource, rs, next)) !== undefined;
  }
}

/**
 * The conditions after a pass (upstream's calculateStatus): a failed pass
 * adds ReplicaFailure (FailedCreate when pods were missing, FailedDelete when
 * there were too many) with the error's message; a clean pass removes it.
 */
export function replicaFailureConditions(conditions: readonly Condition[], diff: number, manageError: unknown): Condition[] {
  const failure = findCondition(conditions, "ReplicaFailure");
  if (manageError !== undefined && failure === undefined) {
    const reason = diff < 0 ? "FailedCreate" : diff > 0 ? "FailedDelete" : "";
    return setCondition([...conditions], newCondition("ReplicaFailure", "True", reason, manageError instanceof Error ? manageError.message : String(manageError)));
  }
  if (manageError === undefined && failure !== undefined) return removeCondition([...conditions], "ReplicaFailure");
  return [...conditions];
}
