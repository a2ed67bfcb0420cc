// The scheduler: pending pods (spec.nodeName empty, schedulerName ours) from
// the queue, one at a time, through PreFilter, Filter over a sample of nodes
// (upstream's adaptive percentageOfNodesToScore) and Score; the winner is
// assumed in the cache and bound asynchronously (POST pods/binding). A pod no
// node fits gets PodScheduled=False/Unschedulable with upstream's message,
// and may preempt lower-priority pods. Cluster events move pods back.

import type { Naming } from "../machinery/naming.js";
import type { Node, Pod } from "../api/core/types.js";
import type { PersistentVolume, PersistentVolumeClaim } from "../api/core/persistent-volume-types.js";
import type { StorageClass } from "../api/storage/types.js";
import type { PodDisruptionBudget } from "../api/policy/types.js";
import { EventRecorder, InformerFactory, isApiError, keyOf, type Informer, type RestClient } from "../client/index.js";
import { formatTimestamp } from "../machinery/index.js";
import { SchedulerCache } from "./cache/cache.js";
import { Diagnosis, fitErrorMessage, NO_NODES_AVAILABLE } from "./framework/fit-error.js";
import { Framework } from "./framework/framework.js";
import type { ClusterEvent, CycleState, FilterPlugin, Plugin, Status } from "./framework/interface.js";
import type { NodeInfo } from "./framework/node-info.js";
import { PodInfo } from "./framework/pod-info.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import { SchedulerMetrics } from "./metrics.js";
import { Nominator } from "./nominator.js";
import { defaultPlugins, type VolumeLister } from "./plugins/index.js";
import { preempt } from "./plugins/default-preemption/index.js";
import { SchedulingQueue, type Clock, type QueuedPodInfo } from "./queue/scheduling-queue.js";
import { isPodTerminal } from "../api/core/pod-phase.js";
import { NODES, PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODDISRUPTIONBUDGETS, PODS, storageClassResource } from "../api/resource-refs.js";

export const DEFAULT_SCHEDULER_NAME = "default-scheduler";
/** Upstream's minFeasibleNodesToFind, minFeasibleNodesPercentageToFind and basePercentageOfNodesToScore. */
const MIN_FEASIBLE_NODES = 100;
const MIN_FEASIBLE_PERCENT = 5;
const BASE_PERCENT = 50;
/** Let I/O (binding answers, watch events) in at least this often while pods are waiting. */
const YIELD_EVERY_MS = 10;

export interface SchedulerOptions {
  client: RestClient;
  naming: Naming;
  /** Pods whose spec.schedulerName is this (default "default-scheduler"; also the profile label). */
  schedulerName?: string;
  metrics?: MetricsRegistry;
  /** Informers shared with other parts of the process: the scheduler takes a view of them for each run. */
  informers?: InformerFactory;
  log?: (line: string) => void;
  clock?: Clock;
  /** Share of nodes to find feasible before scoring (1–100); 0 or unset: upstream's adaptive default. */
  percentageOfNodesToScore?: number;
  /** Bindings in flight at once (default 64). */
  bindConcurrency?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Replace the default plugin set (tests). */
  plugins?: readonly Plugin[];
}

export class Scheduler {
  readonly cache = new SchedulerCache();
  readonly queue: SchedulingQueue;
  readonly framework: Framework;
  readonly metrics: SchedulerMetrics;
  readonly nominator = new Nominator();
  readonly #o: SchedulerOptions;
  readonly #name: string;
  readonly #log: (line: string) => void;
  readonly #events: EventRecorder;
  #pods: Informer<Pod> | undefined;
  #pdbs: Informer<PodDisruptionBudget> | undefined;
  /** Claims, volumes and classes for VolumeBinding; filled in by run(). */
  #claims: Informer<PersistentVolumeClaim> | undefined;
  #volumes: Informer<PersistentVolume> | undefined;
  #classes: Informer<StorageClass> | undefined;
  #nextStartNode = 0;
  #bindsInFlight = 0;
  #bindWaiters: (() => void)[] = [];
  readonly #synced: { promise: Promise<void>; resolve: () => void } = (() => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  })();
  /** Settles when every binding and status write started has finished. */
  #pending = new Set<Promise<void>>();

  constructor(options: SchedulerOptions) {
    this.#o = options;
    this.#name = options.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.#log = options.log ?? (() => {});
    this.#events = new EventRecorder({ client: options.client, component: this.#name, log: this.#log });
    this.metrics = new SchedulerMetrics({ registry: options.metrics, profile: this.#name, metricPrefix: options.naming.metricPrefix, pods: () => this.#pods?.list() ?? [] });
    this.framework = new Framework({
      profile: this.#name,
      plugins: options.plugins ?? defaultPlugins(options.naming, this.#volumeLister()),
      observe: (point, status, seconds) => this.metrics.extensionPoint(point, status, seconds),
    });
    const byEvent = new Map<ClusterEvent, ReadonlySet<string>>();
    this.queue = new SchedulingQueue({
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.initialBackoffMs !== undefined ? { initialBackoffMs: options.initialBackoffMs } : {}),
      ...(options.maxBackoffMs !== undefined ? { maxBackoffMs: options.maxBackoffMs } : {}),
      pluginsFor: (event) => {
        let set = byEvent.get(event);
        if (set === undefined) byEvent.set(event, (set = this.framework.pluginsFor(event)));
        return set;
      },
      metrics: this.metrics,
    });
  }

  /** Resolves once nodes and pods are cached and scheduling has begun (readiness). */
  get synced(): Promise<void> {
    return this.#synced.promise;
  }

  /** Watches pods, nodes and budgets and schedules until the signal fires. */
  async run(signal: AbortSignal): Promise<void> {
    const informers = this.#o.informers?.view() ?? new InformerFactory({ client: this.#o.client, log: this.#log, ...(this.#o.metrics ? { metrics: this.#o.metrics } : {}) });
    const nodes = informers.informerFor<Node>({ resource: NODES });
    this.#pods = informers.informerFor<Pod>({ resource: PODS });
    this.#pdbs = informers.informerFor<PodDisruptionBudget>({ resource: PODDISRUPTIONBUDGETS });
    // Not waited for: a pod with claims meets "not found" until they arrive, and their events retry it.
    this.#claims = informers.informerFor<PersistentVolumeClaim>({ resource: PERSISTENT_VOLUME_CLAIMS });
    this.#volumes = informers.informerFor<PersistentVolume>({ resource: PERSISTENT_VOLUMES });
    this.#classes = informers.informerFor<StorageClass>({ resource: storageClassResource(this.#o.naming) });
    this.#claims.addEventHandler({ onAdd: () => this.queue.moveOnEvent("PersistentVolumeClaimAdd"), onUpdate: () => this.queue.moveOnEvent("PersistentVolumeClaimUpdate") });
    this.#volumes.addEventHandler({ onAdd: () => this.queue.moveOnEvent("PersistentVolumeAdd"), onUpdate: () => this.queue.moveOnEvent("PersistentVolumeUpdate") });
    this.#classes.addEventHandler({ onAdd: () => this.queue.moveOnEvent("StorageClassAdd") });
    nodes.addEventHandler({
      onAdd: (n) => this.onNode(n),
      onUpdate: (_o, n) => this.onNode(n),
      onDelete: (n) => this.cache.removeNode(n.metadata.name ?? ""),
    });
    this.#pods.addEventHandler({
      onAdd: (p) => this.onPod(undefined, p),
      onUpdate: (o, p) => this.onPod(o, p),
      onDelete: (p) => this.onPodDelete(p),
    });
    informers.start(signal);
    // Budgets only refine preemption: a server without policy/v1 must not keep the scheduler from starting.
    const synced = await Promise.all([nodes.waitForSync(signal), this.#pods.waitForSync(signal)]);
    if (!synced.every(Boolean)) return;
    this.queue.run(signal);
    this.#synced.resolve();
    this.#log(`scheduler ${this.#name}: caches synced (${this.cache.nodes.length} nodes); scheduling`);
    let slice = performance.now();
    for (;;) {
      const q = await this.queue.pop(signal);
      if (q === undefined) break;
      try {
        await this.scheduleOne(q);
      } catch (err) {
        // A bug or an odd object must cost one pod a retry, not stop the scheduler.
        this.#log(`scheduler: scheduling ${q.key} failed: ${describe(err)}`);
        this.metrics.attempt("error", 0);
        this.cache.forget(q.key);
        this.queue.addBackoff(q);
      }
      if (performance.now() - slice > YIELD_EVERY_MS) {
        await new Promise((r) => setImmediate(r));
        slice = performance.now();
      }
    }
    await Promise.allSettled([...this.#pending]);
  }

  // ---- informer events ----

  onNode(node: Node): void {
    for (const event of this.cache.addNode(node)) this.queue.moveOnEvent(event);
  }

  onPod(old: Pod | undefined, pod: Pod): void {
    const key = keyOf(pod);
    if (pod.spec?.nodeName) {
      if (isPodTerminal(pod)) {
        if (this.cache.nodeOf(key) !== undefined) {
          this.cache.removePod(key);
          this.queue.moveOnEvent("AssignedPodDelete");
        }
        return;
      }
      const wasAssigned = old?.spec?.nodeName !== undefined && old.spec.nodeName !== "";
      this.queue.delete(key);
      this.nominator.delete(key);
      this.cache.addPod(pod);
      if (!wasAssigned) this.queue.moveOnEvent("AssignedPodAdd");
      // Status heartbeats of running pods change nothing a filter reads: only labels and resources matter (upstream's queueing hints).
      else if (schedulingRelevantChange(old!, pod)) this.queue.moveOnEvent("AssignedPodUpdate");
      return;
    }
    if (!this.#responsibleFor(pod)) {
      // Deleting or finished before it was placed: nothing to schedule any more.
      this.queue.delete(key);
      this.nominator.delete(key);
      return;
    }
    // Our own placement, waiting for the binding to show up: nothing to redo.
    if (this.cache.isAssumed(key)) return;
    const nominated = pod.status?.nominatedNodeName;
    if (nominated) this.nominator.set(new PodInfo(pod), nominated);
    else this.nominator.delete(key);
    if (old === undefined) this.queue.add(pod);
    else this.queue.update(pod);
  }

  onPodDelete(pod: Pod): void {
    const key = keyOf(pod);
    this.nominator.delete(key);
    if (this.cache.nodeOf(key) !== undefined) {
      const assumed = this.cache.isAssumed(key);
      this.cache.removePod(key);
      if (!assumed) this.queue.moveOnEvent("AssignedPodDelete");
    }
    this.queue.delete(key);
  }

  #responsibleFor(pod: Pod): boolean {
    return (pod.spec?.schedulerName || DEFAULT_SCHEDULER_NAME) === this.#name && !isPodTerminal(pod) && !pod.metadata.deletionTimestamp;
  }

  // ---- one scheduling cycle ----

  /** Schedules one popped pod: places and binds it, or records why it cannot go anywhere. */
  async scheduleOne(q: QueuedPodInfo): Promise<void> {
    const started = performance.now();
    const cycle = this.queue.schedulingCycle;
    const pi = q.podInfo;
    const state: CycleState = new Map();
    const diagnosis = new Diagnosis();
    const nodeName = this.#findNode(state, pi, diagnosis);
    if (nodeName !== undefined) {
      this.cache.assume(pi, nodeName);
      this.nominator.delete(pi.key);
      await this.#bindSlot();
      this.#track(this.#bind(q, nodeName, started, state));
      return;
    }
    // No node: preemption may make room (upstream's PostFilter), then the pod waits for an event.
    /** A node to nominate, null to clear a void nomination, undefined to leave it. */
    let nominate: string | null | undefined;
    const numNodes = this.cache.nodes.length;
    if (numNodes > 0 && diagnosis.preFilterMessage === "") {
      const t = performance.now();
      const result = preempt({ pod: pi, cluster: this.cache, framework: this.framework, diagnosis, pdbs: this.#pdbs?.list() ?? [] });
      this.framework.observe("PostFilter", result.nodeName ? "Success" : "Unschedulable", (performance.now() - t) / 1000);
      if (result.nodeName !== undefined) {
        nominate = result.nodeName;
        this.nominator.set(pi, nominate);
        this.metrics.preemption(result.victims.length);
        this.#track(this.#evict(pi, result.nodeName, result.victims));
      } else {
        diagnosis.postFilterMessage = result.message;
        if (result.clearNomination && pi.pod.status?.nominatedNodeName) {
          nominate = null;
          this.nominator.delete(pi.key);
        }
      }
    }
    const message = numNodes === 0 ? NO_NODES_AVAILABLE : fitErrorMessage(numNodes, diagnosis);
    q.unschedulablePlugins = diagnosis.unschedulablePlugins;
    this.queue.addUnschedulable(q, cycle);
    this.metrics.attempt("unschedulable", (performance.now() - started) / 1000);
    this.#events.event(asPod(pi.pod), "Warning", "FailedScheduling", message);
    this.#track(this.#reportUnschedulable(pi.pod, message, nominate));
  }

  /** The chosen node, or undefined with the diagnosis filled in. */
  #findNode(state: CycleState, pi: PodInfo, diagnosis: Diagnosis): string | undefined {
    const nodes = this.cache.nodes;
    if (nodes.length === 0) return undefined;
    const pre = this.framework.runPreFilter(state, pi, this.cache);
    if (pre.status !== undefined) {
      diagnosis.preFilterMessage = pre.status.reasons.join(", ");
      for (const n of nodes) diagnosis.record(n.name, pre.status);
      return undefined;
    }
    const t = performance.now();
    // A pod nominated by an earlier preemption tries its node first (upstream's evaluateNominatedNode).
    const nominated = pi.pod.status?.nominatedNodeName ? this.cache.get(pi.pod.status.nominatedNodeName) : undefined;
    if (nominated !== undefined && this.#filter(state, pi, nominated, pre.filters) === undefined) {
      this.framework.observe("Filter", "Success", (performance.now() - t) / 1000);
      return nominated.name;
    }
    const want = this.#numFeasibleNodesToFind(nodes.length);
    const feasible: NodeInfo[] = [];
    const start = this.#nextStartNode % nodes.length;
    let processed = 0;
    for (let i = 0; i < nodes.length && feasible.length < want; i++) {
      const node = nodes[(start + i) % nodes.length]!;
      processed++;
      const s = this.#filter(state, pi, node, pre.filters);
      if (s === undefined) feasible.push(node);
      else diagnosis.record(node.name, s);
    }
    this.#nextStartNode = (start + processed) % nodes.length;
    this.framework.observe("Filter", feasible.length > 0 ? "Success" : "Unschedulable", (performance.now() - t) / 1000);
    if (feasible.length === 0) return undefined;
    if (feasible.length === 1) return feasible[0]!.name;
    const scores = this.framework.runScore(state, pi, feasible);
    return feasible[selectHighest(scores)]!.name;
  }

  /** Filters with the node's nominated pods of equal or higher priority counted in (upstream's RunFilterPluginsWithNominatedPods). */
  #filter(state: CycleState, pi: PodInfo, node: NodeInfo, filters: readonly FilterPlugin[]): Status | undefined {
    const nominated = this.nominator.blocking(node.name, pi);
    if (nominated.length === 0) return this.framework.runFilters(state, pi, node, filters);
    const withNominated = node.clone();
    for (const p of nominated) if (!withNominated.pods.has(p.key)) withNominated.addPod(p);
    return this.framework.runFilters(state, pi, withNominated, filters);
  }

  #numFeasibleNodesToFind(numAll: number): number {
    const pct = this.#o.percentageOfNodesToScore ?? 0;
    if (numAll < MIN_FEASIBLE_NODES || pct >= 100) return numAll;
    const adaptive = pct > 0 ? pct : Math.max(MIN_FEASIBLE_PERCENT, BASE_PERCENT - Math.floor(numAll / 125));
    return Math.max(MIN_FEASIBLE_NODES, Math.floor((numAll * adaptive) / 100));
  }

  // ---- API writes ----

  async #bind(q: QueuedPodInfo, nodeName: string, started: number, state: CycleState): Promise<void> {
    const pod = q.podInfo.pod;
    const t = performance.now();
    try {
      await this.framework.runPreBind(state, q.podInfo, nodeName);
      await this.#o.client.create(
        PODS,
        {
          apiVersion: "v1",
          kind: "Binding",
          metadata: { name: pod.metadata.name!, namespace: pod.metadata.namespace!, ...(pod.metadata.uid ? { uid: pod.metadata.uid } : {}) },
          target: { apiVersion: "v1", kind: "Node", name: nodeName },
        } as never,
        { subresource: "binding", namespace: pod.metadata.namespace! },
      );
      this.framework.observe("Bind", "Success", (performance.now() - t) / 1000);
      this.#events.event(asPod(pod), "Normal", "Scheduled", `Successfully assigned ${q.key} to ${nodeName}`);
      this.metrics.attempt("scheduled", (performance.now() - started) / 1000);
      this.metrics.podScheduled(q.attempts, (this.#clock() - q.initialAttemptTimestamp) / 1000);
      this.queue.done(q.key);
    } catch (err) {
      this.framework.observe("Bind", "Error", (performance.now() - t) / 1000);
      this.metrics.attempt("error", (performance.now() - started) / 1000);
      this.cache.forget(q.key);
      if (isApiError(err, "NotFound") || alreadyAssigned(err)) {
        // Gone, or bound already (this scheduler's cache was behind: after a restart it lists from a watch cache
        // that may lag): the informer brings the pod's binding, so retrying it with back-off would only repeat the
        // whole cycle (filter and score over every node) for a refusal. Upstream drops such a pod when its informer
        // copy shows a node; the API server's answer is newer than that copy.
        this.queue.delete(q.key);
        return;
      }
      this.#log(`scheduler: binding ${q.key} to ${nodeName} failed: ${describe(err)}`);
      this.queue.addBackoff(q);
    } finally {
      this.#bindsInFlight--;
      this.#bindWaiters.shift()?.();
    }
  }

  /** VolumeBinding's view of the informers run() starts (empty until then). */
  #volumeLister(): VolumeLister {
    return {
      claim: (namespace, name) => this.#claims?.get(`${namespace}/${name}`),
      volume: (name) => this.#volumes?.get(name),
      volumes: () => this.#volumes?.list() ?? [],
      storageClass: (name) => this.#classes?.get(name),
      selectNode: async (claim, annotation, nodeName) => {
        await this.#o.client.patch(PERSISTENT_VOLUME_CLAIMS, {
          namespace: claim.metadata.namespace!,
          name: claim.metadata.name!,
          patch: { metadata: { annotations: { [annotation]: nodeName } } },
        });
      },
    };
  }

  async #bindSlot(): Promise<void> {
    while (this.#bindsInFlight >= (this.#o.bindConcurrency ?? 64)) await new Promise<void>((r) => this.#bindWaiters.push(r));
    this.#bindsInFlight++;
  }

  /** PodScheduled=False/Unschedulable with the message (and a new nomination), written only when it changed. */
  async #reportUnschedulable(pod: Pod, message: string, nominatedNodeName: string | null | undefined): Promise<void> {
    const current = (this.#pods?.get(keyOf(pod)) ?? pod).status;
    const cond = (current?.conditions ?? []).find((c) => c?.type === "PodScheduled");
    const nominationChanges = nominatedNodeName !== undefined && (current?.nominatedNodeName || null) !== nominatedNodeName;
    if (cond?.status === "False" && cond.reason === "Unschedulable" && cond.message === message && !nominationChanges) return;
    const now = formatTimestamp(new Date());
    const condition = {
      type: "PodScheduled",
      status: "False",
      reason: "Unschedulable",
      message,
      lastProbeTime: null,
      lastTransitionTime: cond?.status === "False" && cond.lastTransitionTime ? cond.lastTransitionTime : now,
    };
    try {
      await this.#o.client.patch(PODS, {
        namespace: pod.metadata.namespace!,
        name: pod.metadata.name!,
        subresource: "status",
        type: "strategic",
        patch: { status: { conditions: [condition], ...(nominationChanges ? { nominatedNodeName } : {}) } },
      });
    } catch (err) {
      if (!isApiError(err, "NotFound")) this.#log(`scheduler: updating the status of ${keyOf(pod)} failed: ${describe(err)}`);
    }
  }

  /** Preemption's writes: mark each victim (DisruptionTarget) and delete it; lower nominations on the node are cleared. */
  async #evict(preemptor: PodInfo, nodeName: string, victims: readonly PodInfo[]): Promise<void> {
    const client = this.#o.client;
    await Promise.all(
      victims.map(async (v) => {
        const ref = { namespace: v.namespace, name: v.pod.metadata.name! };
        try {
          await client.patch(PODS, {
            ...ref,
            subresource: "status",
            type: "strategic",
            patch: {
              status: {
                conditions: [
                  {
                    type: "DisruptionTarget",
                    status: "True",
                    reason: "PreemptionByScheduler",
                    message: `${this.#name}: preempting to accommodate a higher priority pod`,
                    lastTransitionTime: formatTimestamp(new Date()),
                  },
                ],
              },
            },
          });
          await client.delete(PODS, { ...ref, ...(v.pod.metadata.uid ? { preconditions: { uid: v.pod.metadata.uid } } : {}) });
          this.#events.event(asPod(v.pod), "Normal", "Preempted", `Preempted by pod ${preemptor.pod.metadata.uid ?? preemptor.key} on node ${nodeName}`);
          this.#log(`scheduler: preempted ${v.key} on ${nodeName} for ${preemptor.key}`);
        } catch (err) {
          if (!isApiError(err, "NotFound") && !isApiError(err, "Conflict")) this.#log(`scheduler: preempting ${v.key} failed: ${describe(err)}`);
        }
      }),
    );
    for (const p of this.nominator.lower(nodeName, preemptor.priority)) {
      this.nominator.delete(p.key);
      try {
        await client.patch(PODS, { namespace: p.namespace, name: p.pod.metadata.name!, subresource: "status", type: "strategic", patch: { status: { nominatedNodeName: null } } });
      } catch {
        // the pod may be gone; nothing to clear then
      }
    }
  }

  #track(p: Promise<void>): void {
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p));
  }

  #clock(): number {
    return this.#o.clock?.now() ?? Date.now();
  }
}

function schedulingRelevantChange(old: Pod, pod: Pod): boolean {
  const resources = (p: Pod) => JSON.stringify([p.spec?.containers?.map((c) => c?.resources), p.spec?.initContainers?.map((c) => c?.resources)]);
  return JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(pod.metadata.labels ?? {}) || resources(old) !== resources(pod);
}

/** List items may lack kind and apiVersion; an event's involvedObject needs them. */
function asPod(pod: Pod): Pod {
  return pod.kind ? pod : { ...pod, apiVersion: "v1", kind: "Pod" };
}


/** Index of the highest score; ties broken at random (reservoir sampling, as upstream's selectHost). */
export function selectHighest(scores: readonly number[]): number {
  let best = 0;
  let ties = 1;
  for (let i = 1; i < scores.length; i++) {
    if (scores[i]! > scores[best]!) {
      best = i;
      ties = 1;
    } else if (scores[i] === scores[best]) {
      ties++;
      if (Math.random() * ties < 1) best = i;
    }
  }
  return best;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The binding was refused because the pod is bound to a node already (pods/binding's 409, src/api/core/pods.ts). */
function alreadyAssigned(err: unknown): boolean {
  return isApiError(err, "Conflict") && / is already assigned to node /.test((err as Error).message);
}
