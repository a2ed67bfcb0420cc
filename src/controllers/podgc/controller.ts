// The pod garbage collector, a periodic pass as upstream's: deletes the oldest terminated pods beyond
// --terminated-pod-gc-threshold; marks Failed and force-deletes pods bound to nodes that no longer
// exist (after a quarantine, in case the node is only late) and terminating pods on out-of-service
// nodes; force-deletes terminating pods that were never scheduled (nothing would finish them).

import { formatTimestamp, isApiError, parseTimestamp } from "../../machinery/index.js";
import type { Node, Pod } from "../../api/core/types.js";
import { errorMessage, type ControllerContext, type ControllerDescriptor, nowMs } from "../controller.js";
import { type Counter, MetricsRegistry } from "../../component/metrics/index.js";
import { NODES, PODS } from "../../api/resource-refs.js";
import { isPodTerminal } from "../../api/core/pod-phase.js";
import { sleep } from "../../machinery/until.js";

export const podGcController: ControllerDescriptor = {
  name: "pod-garbage-collector-controller",
  aliases: ["podgc"],
  enabledByDefault: true,
  run: (context) => new PodGcController(context).run(),
};

/** The `reason` label of pod_gc_collector_force_delete_pods_total, upstream's values. */
type GcReason = "terminated" | "orphaned" | "unscheduled" | "out-of-service";

export interface PodGcOptions {
  /** How long a node must stay missing before its pods are collected (upstream: 40 s). */
  quarantineMs?: number;
}

export class PodGcController {
  readonly #ctx: ControllerContext;
  readonly #threshold: number;
  readonly #periodMs: number;
  readonly #quarantineMs: number;
  /** Node name → when it was first seen missing. */
  readonly #missingSince = new Map<string, number>();
  readonly #forceDeleted: Counter;

  constructor(context: ControllerContext, options: PodGcOptions = {}) {
    this.#ctx = context;
    this.#threshold = context.config?.terminatedPodGcThreshold ?? 12_500;
    this.#periodMs = context.config?.podGcPeriodMs ?? 20_000;
    this.#quarantineMs = options.quarantineMs ?? 40_000;
    this.#forceDeleted = (context.metrics ?? new MetricsRegistry()).counter({
      name: "pod_gc_collector_force_delete_pods_total",
      help: "Number of pods that are being forcefully deleted since the Pod GC Controller started.",
      labelNames: ["namespace", "reason"],
    });
  }

  async run(): Promise<void> {
    const { signal, informers } = this.#ctx;
    informers.informerFor<Pod>({ resource: PODS });
    informers.informerFor<Node>({ resource: NODES });
    if (!(await informers.waitForSync(signal))) return;
    while (!signal.aborted) {
      try {
        await this.collect();
      } catch (err) {
        this.#ctx.log(`pod-garbage-collector-controller: ${errorMessage(err)} (will retry)`);
      }
      await sleep(this.#periodMs, signal);
    }
  }

  /** One pass; exported for tests. */
  async collect(): Promise<void> {
    const { informers } = this.#ctx;
    const pods = informers.informerFor<Pod>({ resource: PODS }).list();
    const nodes = new Map(informers.informerFor<Node>({ resource: NODES }).list().map((n) => [n.metadata.name!, n]));
    await this.#terminated(pods);
    await this.#orphaned(pods, nodes);
    await this.#unscheduledTerminating(pods);
    await this.#outOfService(pods, nodes);
  }

  async #terminated(pods: Pod[]): Promise<void> {
    if (this.#threshold <= 0) return;
    const finished = pods.filter((p) => isPodTerminal(p) && !p.metadata.deletionTimestamp);
    const excess = finished.length - this.#threshold;
    if (excess <= 0) return;
    finished.sort((a, b) => created(a) - created(b));
    for (const pod of finished.slice(0, excess)) await this.#delete(pod, undefined, "terminated");
  }

  async #orphaned(pods: Pod[], nodes: Map<string, Node>): Promise<void> {
    const now = nowMs(this.#ctx);
    const bound = new Set(pods.map((p) => p.spec?.nodeName).filter((n): n is string => !!n));
    for (const name of this.#missingSince.keys()) if (nodes.has(name) || !bound.has(name)) this.#missingSince.delete(name);
    for (const name of bound) {
      if (nodes.has(name)) continue;
      const since = this.#missingSince.get(name) ?? now;
      this.#missingSince.set(name, since);
      if (now - since < this.#quarantineMs) continue;
      // The cache may be behind: ask the server before collecting.
      try {
        await this.#ctx.client.get(NODES, { name });
        continue;
      } catch (err) {
        if (!isApiError(err, "NotFound")) throw err;
      }
      for (const pod of pods.filter((p) => p.spec?.nodeName === name)) {
        await this.#delete(pod, { reason: "DeletionByPodGC", message: "PodGC: node no longer exists" }, "orphaned");
      }
    }
  }

  async #unscheduledTerminating(pods: Pod[]): Promise<void> {
    for (const pod of pods) if (pod.metadata.deletionTimestamp && !pod.spec?.nodeName) await this.#delete(pod, undefined, "unscheduled");
  }

  /** Terminating pods on a node an administrator declared out of service (and that is not Ready). */
  async #outOfService(pods: Pod[], nodes: Map<string, Node>): Promise<void> {
    const key = `node.${this.#ctx.naming.keyDomain}/out-of-service`;
    for (const pod of pods) {
      const node = nodes.get(pod.spec?.nodeName ?? "");
      if (!pod.metadata.deletionTimestamp || node === undefined) continue;
      const ready = (node.status?.conditions ?? []).find((c) => c?.type === "Ready")?.status === "True";
      if (ready || !(node.spec?.taints ?? []).some((t) => t.key === key && t.effect === "NoExecute")) continue;
      await this.#delete(pod, { reason: "DeletionByPodGC", message: "PodGC: node is out of service" }, "out-of-service");
    }
  }

  /**
   * Force-deletes the pod (grace 0), marking an unfinished
   * one Failed with a DisruptionTarget condition first, as upstream does.
   */
  async #delete(pod: Pod, disruption: { reason: string; message: string } | undefined, why: GcReason): Promise<void> {
    const { client } = this.#ctx;
    const namespace = pod.metadata.namespace!;
    const name = pod.metadata.name!;
    try {
      if (disruption !== undefined && !isPodTerminal(pod)) {
        const conditions = (pod.status?.conditions ?? []).filter((c) => c?.type !== "DisruptionTarget");
        conditions.push({ type: "DisruptionTarget", status: "True", ...disruption, lastTransitionTime: formatTimestamp(new Date(nowMs(this.#ctx))) });
        await client.update(PODS, { ...pod, status: { ...pod.status, phase: "Failed", conditions } }, { subresource: "status" });
      }
      await client.delete(PODS, { namespace, name, gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid! } });
      this.#forceDeleted.inc({ namespace, reason: why });
      this.#ctx.log(`pod-garbage-collector-controller: deleted ${why} pod ${namespace}/${name}`);
    } catch (err) {
      if (!isApiError(err, "NotFound") && !isApiError(err, "Conflict")) throw err;
    }
  }
}

function created(pod: Pod): number {
  return pod.metadata.creationTimestamp ? parseTimestamp(pod.metadata.creationTimestamp).getTime() : 0;
}
