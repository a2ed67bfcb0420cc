// The DaemonSet controller: one pod per eligible node (nodeSelector, node
// affinity, taints against tolerations incl. upstream's defaults), each
// pinned to its node by required node affinity for the scheduler to bind;
// pods leave nodes that no longer qualify. Template history is kept as
// ControllerRevisions; RollingUpdate replaces pods within maxUnavailable
// (or surges within maxSurge), OnDelete waits for pods to be deleted.

import { workloadKeys, type WorkloadKeys } from "../../machinery/naming.js";
import type { DaemonSet, DaemonSetStatus } from "../../api/apps/types.js";
import type { Node } from "../../api/core/types.js";
import { NAMESPACE_INDEX, WorkQueue, keyOf, splitKey, type Informer, type ProcessResult } from "../../client/index.js";
import { CONTROLLER_UID_INDEX, claimCandidates, controllerUidIndex } from "../indexes.js";
import { isApiError, parseTimestamp } from "../../machinery/index.js";
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
  scaled,
  selectorOf,
  slowStartBatch,
  truncateHistory,
  watchOwnersAndPods,
  writeStatus,
  type ControllerRevision,
  type Pod,
} from "../workload/index.js";
import { daemonPodTolerations, nodeNameOf, pinToNode, shouldRunOn } from "./node-eligibility.js";
import { CONTROLLERREVISIONS, DAEMONSETS, NODES, PODS } from "../../api/resource-refs.js";

/** The label carrying the template hash on revisions and pods (upstream's DefaultDaemonSetUniqueLabelKey). */
export const HASH_LABEL = "controller-revision-hash";
/** Deprecated upstream, still written by it: the DaemonSet generation a pod was made from. */
const TEMPLATE_GENERATION_LABEL = "pod-template-generation";

export interface DaemonSetControllerOptions {
  /** DaemonSets synced in parallel (upstream --concurrent-daemonset-syncs, default 2). */
  workers?: number | undefined;
}

export const daemonSetController: ControllerDescriptor = {
  name: "daemonset-controller",
  aliases: ["daemonset"],
  enabledByDefault: true,
  run: (context) => new DaemonSetController(context, { workers: context.config?.concurrentDaemonSetSyncs }).run(),
};

/** Backoff before a node's next failed daemon pod is replaced (upstream's failedPodsBackoff: 1 s doubling to 15 min). */
const FAILED_POD_BACKOFF_MS = 1000;
const FAILED_POD_BACKOFF_MAX_MS = 15 * 60_000;

const created = (p: Pod) => (p.metadata.creationTimestamp ? parseTimestamp(p.metadata.creationTimestamp).getTime() : 0);
const oldestFirst = (pods: Pod[]) => [...pods].sort((a, b) => created(a) - created(b) || (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));

export class DaemonSetController {
  readonly #ctx: ControllerContext;
  readonly #workers: number;
  readonly #keys: WorkloadKeys;
  readonly queue = new WorkQueue({ name: "daemonset" });
  readonly expectations = new Expectations();
  readonly #sets: Informer<DaemonSet>;
  readonly #pods: Informer<Pod>;
  readonly #nodes: Informer<Node>;
  readonly #revisions: Informer<ControllerRevision>;
  /** Per "<daemonset key>/<node>": when the next failed pod may be replaced, and the delay after that. */
  readonly #failedBackoff = new Map<string, { until: number; delayMs: number }>();

  constructor(context: ControllerContext, options: DaemonSetControllerOptions = {}) {
    this.#ctx = context;
    this.#workers = options.workers ?? 2;
    this.#keys = workloadKeys(context.naming);
    this.#sets = context.informers.informerFor<DaemonSet>({ resource: DAEMONSETS });
    this.#pods = context.informers.informerFor<Pod>({ resource: PODS });
    this.#pods.addIndexers({ [CONTROLLER_UID_INDEX]: controllerUidIndex });
    this.#nodes = context.informers.informerFor<Node>({ resource: NODES });
    this.#revisions = context.informers.informerFor<ControllerRevision>({ resource: CONTROLLERREVISIONS });
  }

  async run(): Promise<void> {
    watchOwnersAndPods({ kind: "DaemonSet", owners: this.#sets, pods: this.#pods, queue: this.queue, expectations: this.expectations });
    // A node that comes, goes, or changes what it admits may change every DaemonSet's placement.
    const everyone = () => this.#sets.list().forEach((ds) => this.queue.add(keyOf(ds)));
    const placementOf = (n: Node) => JSON.stringify([n.metadata.labels ?? {}, n.spec?.taints ?? [], n.spec?.unschedulable ?? false]);
    this.#nodes.addEventHandler({ onAdd: everyone, onDelete: everyone, onUpdate: (old, n) => placementOf(old) !== placementOf(n) && everyone() });
    await runQueue(this.#ctx, { name: "daemonset-controller", queue: this.queue, workers: this.#workers, informers: [this.#sets, this.#pods, this.#nodes, this.#revisions], process: (key) => this.sync(key) });
  }

  /** One pass over one DaemonSet ("namespace/name"). */
  async sync(key: string): Promise<ProcessResult | void> {
    const ds = this.#sets.get(key);
    if (ds === undefined) {
      this.expectations.delete(key);
      return;
    }
    if (ds.metadata.deletionTimestamp) return;
    const selector = selectorOf(ds);
    if (selector.empty) return; // selecting everything is refused, as upstream
    const client = this.#ctx.client;
    const { namespace } = splitKey(key);
    const pods = await claimObjects({ client, resource: PODS, owner: ds, ownerResource: DAEMONSETS, selector, candidates: claimCandidates(this.#pods, ds) });
    const { revisions, update: current } = await ownerRevisions({ client, owner: ds, ownerResource: DAEMONSETS, candidates: this.#revisions.byIndex(NAMESPACE_INDEX, namespace!), hashLabel: HASH_LABEL });
    const hash = current.metadata.labels?.[HASH_LABEL] ?? "";
    const nodes = this.#nodes.list();
    const byNode = new Map<string, Pod[]>();
    for (const pod of pods) {
      // A pod with neither a node nor a node pin is not one this controller placed: left alone, as upstream.
      const node = nodeNameOf(pod.spec);
      if (node !== undefined) byNode.set(node, [...(byNode.get(node) ?? []), pod]);
    }

    let retryAfterMs: number | undefined;
    if (this.expectations.satisfied(key)) {
      const plan = this.#manage(key, ds, nodes, byNode, hash);
      if ((ds.spec?.updateStrategy?.type ?? "RollingUpdate") === "RollingUpdate") this.#rollingUpdate(ds, nodes, byNode, hash, plan);
      await this.#syncNodes(key, ds, plan, hash);
      const live = new Set([current.metadata.name!, ...revisions.filter((r) => pods.some((p) => p.metadata.labels?.[HASH_LABEL] === r.metadata.labels?.[HASH_LABEL])).map((r) => r.metadata.name!)]);
      await truncateHistory(client, revisions, live, ds.spec?.revisionHistoryLimit ?? 10);
      retryAfterMs = plan.retryAfterMs;
    }

    const status = this.#status(ds, nodes, byNode, hash);
    if (!sameStatus(ds.status, status)) await writeStatus(client, DAEMONSETS, ds, { ...ds.status, ...status });
    const minReady = ds.spec?.minReadySeconds ?? 0;
    if (minReady > 0 && status.numberReady !== status.numberAvailable) retryAfterMs = Math.min(retryAfterMs ?? Infinity, Math.max(1000, ...pods.map((p) => msUntilAvailable(p, minReady))));
    if (retryAfterMs !== undefined) return { requeueAfterMs: retryAfterMs };
  }

  /** Which nodes need a pod and which pods must go (upstream's manage/podsShouldBeOnNode). */
  #manage(key: string, ds: DaemonSet, nodes: Node[], byNode: Map<string, Pod[]>, hash: string): Plan {
    const plan: Plan = { create: [], remove: [] };
    const surge = maxSurgeOf(ds, nodes.length) > 0;
    const known = new Set(nodes.map((n) => n.metadata.name!));
    for (const node of nodes) {
      const name = node.metadata.name!;
      const [shouldRun, shouldContinue] = shouldRunOn(ds.spec?.template?.spec, node, this.#keys);
      const onNode = byNode.get(name) ?? [];
      if (shouldRun && onNode.length === 0) {
        plan.create.push(name);
      } else if (shouldContinue) {
        const running: Pod[] = [];
        for (const pod of onNode) {
          if (isPodTerminating(pod)) continue;
          if (pod.status?.phase === "Failed") this.#replaceFailed(`${key}/${name}`, pod, plan);
          else running.push(pod);
        }
        if (running.length > 1) {
          const ordered = oldestFirst(running);
          // Without surge only the oldest stays; with surge, the oldest of the new and of the old revision.
          const keep = surge ? [ordered.find((p) => p.metadata.labels?.[HASH_LABEL] === hash), ordered.find((p) => p.metadata.labels?.[HASH_LABEL] !== hash)] : [ordered[0]];
          plan.remove.push(...ordered.filter((p) => !keep.includes(p)));
        }
      } else {
        plan.remove.push(...onNode.filter((p) => !isPodTerminating(p)));
      }
    }
    // Pods for nodes that are gone.
    for (const [name, onNode] of byNode) if (!known.has(name)) plan.remove.push(...onNode.filter((p) => !isPodTerminating(p)));
    return plan;
  }

  /**
   * A failed daemon pod is deleted (the next pass makes a new one) — at once
   * the first time, then only after a backoff per node that doubles, so a pod
   * that keeps failing does not spin.
   */
  #replaceFailed(backoffKey: string, pod: Pod, plan: Plan): void {
    const now = Date.now();
    const backoff = this.#failedBackoff.get(backoffKey);
    if (backoff !== undefined && now < backoff.until) {
      plan.retryAfterMs = Math.min(plan.retryAfterMs ?? Infinity, backoff.until - now);
      return;
    }
    const delayMs = backoff === undefined ? FAILED_POD_BACKOFF_MS : Math.min(backoff.delayMs * 2, FAILED_POD_BACKOFF_MAX_MS);
    this.#failedBackoff.set(backoffKey, { until: now + delayMs, delayMs });
    plan.remove.push(pod);
  }

  /** Adds to the plan the replacements RollingUpdate allows this pass (upstream's rollingUpdate). */
  #rollingUpdate(ds: DaemonSet, nodes: Node[], byNode: Map<string, Pod[]>, hash: string, plan: Plan): void {
    const minReady = ds.spec?.minReadySeconds ?? 0;
    const eligible = nodes.filter((n) => shouldRunOn(ds.spec?.template?.spec, n, this.#keys)[0]);
    const maxSurge = maxSurgeOf(ds, eligible.length);
    const maxUnavailable = maxSurge === 0 ? Math.max(1, scaled(ds.spec?.updateStrategy?.rollingUpdate?.maxUnavailable ?? 1, eligible.length, true)) : scaled(ds.spec?.updateStrategy?.rollingUpdate?.maxUnavailable ?? 0, eligible.length, true);
    const available = (p: Pod) => isPodAvailable(p, minReady);
    const doomed = new Set(plan.remove);
    let unavailable = 0;
    let surged = 0;
    const candidates: (Pod | string)[] = [];
    for (const node of eligible) {
      const live = (byNode.get(node.metadata.name!) ?? []).filter((p) => !isPodTerminating(p) && !doomed.has(p));
      const fresh = live.filter((p) => p.metadata.labels?.[HASH_LABEL] === hash);
      const stale = live.filter((p) => p.metadata.labels?.[HASH_LABEL] !== hash);
      if (fresh.length > 1 || stale.length > 1) continue; // manage() is sorting this node out
      const [newPod] = fresh;
      const [oldPod] = stale;
      if (maxSurge === 0) {
        if (oldPod === undefined) {
          if (newPod === undefined || !available(newPod)) unavailable++;
        } else if (!available(oldPod)) {
          plan.remove.push(oldPod); // unavailable anyway: replace it at once
          unavailable++;
        } else {
          candidates.push(oldPod);
        }
      } else if (oldPod !== undefined) {
        if (newPod === undefined) {
          if (!available(oldPod)) plan.create.push(node.metadata.name!);
          else candidates.push(node.metadata.name!);
        } else if (!available(newPod)) {
          surged++;
        } else {
          plan.remove.push(oldPod);
        }
      }
    }
    const budget = maxSurge === 0 ? maxUnavailable - unavailable : maxSurge - surged;
    for (const c of candidates.slice(0, Math.max(0, budget))) {
      if (typeof c === "string") plan.create.push(c);
      else plan.remove.push(c);
    }
  }

  async #syncNodes(key: string, ds: DaemonSet, plan: Plan, hash: string): Promise<void> {
    const client = this.#ctx.client;
    const remove = [...new Set(plan.remove)];
    this.expectations.expect(key, plan.create.length, remove.map((p) => keyOf(p)));
    const errors: unknown[] = [];
    await Promise.all(
      remove.map(async (pod) => {
        try {
          await client.delete(PODS, { namespace: pod.metadata.namespace!, name: pod.metadata.name!, preconditions: { uid: pod.metadata.uid! } });
        } catch (err) {
          this.expectations.deletionObserved(key, keyOf(pod));
          if (!isApiError(err, "NotFound")) errors.push(err);
        }
      }),
    );
    const { succeeded, error, stopped } = await slowStartBatch(plan.create.length, async (i) => {
      const pod = podFromTemplate(ds.spec?.template, ds, { labels: { [HASH_LABEL]: hash, [TEMPLATE_GENERATION_LABEL]: String(ds.metadata.generation ?? 1) } });
      pinToNode(pod.spec!, plan.create[i]!);
      pod.spec!.tolerations = daemonPodTolerations(pod.spec, this.#keys);
      await client.create(PODS, pod);
    }, { signal: this.#ctx.signal });
    if (error !== undefined || stopped) this.expectations.lowerAdds(key, plan.create.length - succeeded);
    if (error !== undefined) errors.push(error);
    if (errors.length > 0) throw errors[0];
  }

  #status(ds: DaemonSet, nodes: Node[], byNode: Map<string, Pod[]>, hash: string): DaemonSetStatus {
    const minReady = ds.spec?.minReadySeconds ?? 0;
    const s = { desiredNumberScheduled: 0, currentNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0, numberAvailable: 0, updatedNumberScheduled: 0 };
    for (const node of nodes) {
      const [shouldRun] = shouldRunOn(ds.spec?.template?.spec, node, this.#keys);
      const onNode = oldestFirst(byNode.get(node.metadata.name!) ?? []);
      if (!shouldRun) {
        if (onNode.length > 0) s.numberMisscheduled++;
        continue;
      }
      s.desiredNumberScheduled++;
      if (onNode.length === 0) continue;
      s.currentNumberScheduled++;
      const pod = onNode[0]!;
      if (isPodReady(pod)) s.numberReady++;
      if (isPodAvailable(pod, minReady)) s.numberAvailable++;
      if (onNode.some((p) => p.metadata.labels?.[HASH_LABEL] === hash && !isPodTerminating(p))) s.updatedNumberScheduled++;
    }
    return { ...s, numberUnavailable: s.desiredNumberScheduled - s.numberAvailable, observedGeneration: ds.metadata.generation ?? 0 };
  }
}

interface Plan {
  /** Node names that get a new pod. */
  create: string[];
  remove: Pod[];
  /** A failed pod waits out its backoff: look again then. */
  retryAfterMs?: number;
}

function maxSurgeOf(ds: DaemonSet, nodes: number): number {
  const ru = ds.spec?.updateStrategy;
  if ((ru?.type ?? "RollingUpdate") !== "RollingUpdate") return 0;
  return scaled(ru?.rollingUpdate?.maxSurge ?? 0, nodes, true);
}

function sameStatus(a: DaemonSetStatus | undefined, b: DaemonSetStatus): boolean {
  const keys = ["desiredNumberScheduled", "currentNumberScheduled", "numberMisscheduled", "numberReady", "numberAvailable", "numberUnavailable", "updatedNumberScheduled", "observedGeneration"] as const;
  return keys.every((k) => (a?.[k] ?? 0) === (b[k] ?? 0));
}
