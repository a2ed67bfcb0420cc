// The node lifecycle controller (seed 001, "States and transitions"): a node whose agent has not
// renewed its Lease nor its Ready heartbeat for --node-monitor-grace-period gets its conditions set
// to Unknown (NodeStatusUnknown); Ready False/Unknown taint the node not-ready/unreachable with
// NoSchedule and NoExecute (which the taint eviction controller acts on), Ready True removes them;
// the pods of a node that is not Ready are marked not ready.

import { formatTimestamp, isApiError } from "../../machinery/index.js";
import { WorkQueue, keyOf, type ProcessResult } from "../../client/index.js";
import type { Lease } from "../../api/coordination/types.js";
import type { Condition, Node, Pod, Taint } from "../../api/core/types.js";
import type { Naming } from "../../machinery/naming.js";
import { type ControllerContext, type ControllerDescriptor, nowMs } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { type Counter, type Gauge, MetricsRegistry } from "../../component/metrics/index.js";
import { getIfExists, isPodReady } from "../resources.js";
import { isPodTerminal } from "../../api/core/pod-phase.js";
import { nodeTaintKeys, zoneKey } from "./taints.js";
import { EventRecorder } from "../events.js";
import { POD_NODE_NAME_INDEX, podNodeNameIndex } from "../indexes.js";
import { NODES, PODS, leaseResource } from "../../api/resource-refs.js";

export const nodeLifecycleController: ControllerDescriptor = {
  name: "node-lifecycle-controller",
  aliases: ["nodelifecycle"],
  enabledByDefault: true,
  run: (context) => new NodeLifecycleController(context).run(),
};

/** The conditions an agent posts that go Unknown with it (upstream's list). */
const AGENT_CONDITIONS = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"];

/** "Orch node agent" ("Kubelet" under upstream's names): who stopped posting. */
export function agentDisplayName(naming: Naming): string {
  if (naming.agentName === "kubelet") return "Kubelet";
  const product = naming.systemNamespace.replace(/-system$/, "");
  return `${product.charAt(0).toUpperCase()}${product.slice(1)} node agent`;
}

interface Heartbeat {
  /** The lease renewTime and Ready heartbeat last seen. */
  signature: string;
  /** When this controller saw it change (its own clock: node clocks may be skewed, as upstream reasons). */
  observedAt: number;
}

export class NodeLifecycleController {
  readonly #ctx: ControllerContext;
  readonly #graceMs: number;
  readonly #queue = new WorkQueue({ name: "node_lifecycle_controller", baseDelayMs: 50, maxDelayMs: 10_000 });
  readonly #heartbeats = new Map<string, Heartbeat>();
  readonly #taints: ReturnType<typeof nodeTaintKeys>;
  readonly #evictions: Counter;
  readonly #zoneSize: Gauge;
  readonly #zoneUnhealthy: Gauge;
  readonly #zoneHealth: Gauge;
  /** Each node's zone and health as last counted, and the counts per zone (the zone gauges). */
  readonly #zoneOf = new Map<string, { zone: string; unhealthy: boolean }>();
  readonly #zones = new Map<string, { size: number; unhealthy: number }>();
  readonly #events: EventRecorder;

  constructor(context: ControllerContext) {
    this.#ctx = context;
    this.#events = new EventRecorder(context, "node-controller");
    this.#graceMs = context.config?.nodeMonitorGracePeriodMs ?? 50_000;
    this.#taints = nodeTaintKeys(context.naming);
    context.informers.informerFor<Pod>({ resource: PODS }).addIndexers({ [POD_NODE_NAME_INDEX]: podNodeNameIndex });
    const m = (context.metrics ?? new MetricsRegistry());
    this.#evictions = m.counter({ name: "node_collector_evictions_total", help: "Number of Node evictions that happened since current instance of NodeController started.", labelNames: ["zone"], stabilityLevel: "STABLE" });
    this.#zoneSize = m.gauge({ name: "node_collector_zone_size", help: "Gauge measuring number of registered Nodes per zones.", labelNames: ["zone"] });
    this.#zoneUnhealthy = m.gauge({ name: "node_collector_unhealthy_nodes_in_zone", help: "Gauge measuring number of not Ready Nodes per zones.", labelNames: ["zone"] });
    this.#zoneHealth = m.gauge({ name: "node_collector_zone_health", help: "Gauge measuring percentage of healthy nodes per zone.", labelNames: ["zone"] });
  }

  async run(): Promise<void> {
    const { informers, naming } = this.#ctx;
    const nodes = informers.informerFor<Node>({ resource: NODES });
    const leases = informers.informerFor<Lease>({ resource: leaseResource(naming), namespace: naming.nodeLeaseNamespace });
    nodes.addEventHandler({
      onAdd: (n) => this.#queue.add(keyOf(n)),
      onUpdate: (_o, n) => this.#queue.add(keyOf(n)),
      onDelete: (n) => {
        this.#heartbeats.delete(keyOf(n));
        this.#countZone(keyOf(n), undefined);
      },
    });
    // A ready pod on a node that is not Ready is marked not ready too (see #markPodsNotReady).
    const onPod = (pod: Pod) => {
      const nodeName = pod.spec?.nodeName;
      if (!nodeName || !isPodReady(pod)) return;
      const node = nodes.get(nodeName);
      if (node !== undefined && (node.status?.conditions ?? []).find((c) => c?.type === "Ready")?.status !== "True") this.#queue.add(nodeName);
    };
    informers.informerFor<Pod>({ resource: PODS }).addEventHandler({ onAdd: onPod, onUpdate: (_o, p) => onPod(p) });
    const onLease = (l: Lease) => this.#queue.add(l.metadata.name!);
    leases.addEventHandler({ onAdd: onLease, onUpdate: (_o, l) => onLease(l) });
    await runQueue(this.#ctx, { name: "node-lifecycle-controller", queue: this.#queue, workers: 2, process: (key) => this.sync(key) });
  }

  /**
   * Checks one node's health and taints; returns when to look again (when its grace period runs out).
   * The node comes from the informer (a sync per lease renewal, 100/s at 1,000 nodes, made a GET
   * each before); only a write that meets a newer node reads it afresh and checks again.
   */
  async sync(name: string): Promise<ProcessResult | void> {
    const cached = this.#ctx.informers.informerFor<Node>({ resource: NODES }).get(name);
    if (cached === undefined) return;
    try {
      return await this.#check(cached);
    } catch (err) {
      if (!isApiError(err, "Conflict")) throw err;
      const fresh = await getIfExists<Node>(this.#ctx.client, NODES, { name });
      if (fresh !== undefined) return await this.#check(fresh);
    }
  }

  async #check(current: Node): Promise<ProcessResult | void> {
    const { naming, informers } = this.#ctx;
    const name = current.metadata.name!;
    let node = current;
    const now = nowMs(this.#ctx);
    const lease = informers.informerFor<Lease>({ resource: leaseResource(naming), namespace: naming.nodeLeaseNamespace }).get(`${naming.nodeLeaseNamespace}/${name}`);
    const ready = (node.status?.conditions ?? []).find((c) => c?.type === "Ready");
    const signature = `${lease?.spec?.renewTime ?? ""}|${ready?.lastHeartbeatTime ?? ""}`;
    let beat = this.#heartbeats.get(name);
    if (beat === undefined || beat.signature !== signature) {
      beat = { signature, observedAt: now };
      this.#heartbeats.set(name, beat);
    }

    let result: ProcessResult | undefined;
    const silentFor = now - beat.observedAt;
    if (silentFor >= this.#graceMs) {
      if (ready?.status !== "Unknown") node = await this.#markUnknown(node, ready === undefined, now);
    } else {
      result = { requeueAfterMs: this.#graceMs - silentFor + 10 };
    }
    await this.#reconcileTaints(node, now);
    if ((node.status?.conditions ?? []).find((c) => c?.type === "Ready")?.status !== "True") await this.#markPodsNotReady(name, now);
    this.#countZone(name, informers.informerFor<Node>({ resource: NODES }).get(name));
    return result;
  }

  /** Every agent-posted condition goes Unknown; heartbeat times stay as the agent last wrote them. */
  async #markUnknown(node: Node, never: boolean, now: number): Promise<Node> {
    const who = agentDisplayName(this.#ctx.naming);
    const stamp = formatTimestamp(new Date(now));
    const conditions: Condition[] = [...(node.status?.conditions ?? [])];
    for (const type of AGENT_CONDITIONS) {
      const i = conditions.findIndex((c) => c?.type === type);
      if (i < 0 && type !== "Ready") continue;
      const unknown: Condition = never
        ? { type, status: "Unknown", reason: "NodeStatusNeverUpdated", message: `${who} never posted node status.`, lastHeartbeatTime: node.metadata.creationTimestamp ?? stamp, lastTransitionTime: stamp }
        : { ...conditions[i], type, status: "Unknown", reason: "NodeStatusUnknown", message: `${who} stopped posting node status.`, lastTransitionTime: stamp };
      if (i < 0) conditions.push(unknown);
      else conditions[i] = unknown;
    }
    this.#ctx.log(`node-lifecycle-controller: node ${node.metadata.name} has not been heard from for ${this.#graceMs / 1000}s: conditions Unknown`);
    const updated = await this.#ctx.client.update<Node>(NODES, { ...node, status: { ...node.status, conditions } }, { subresource: "status" });
    this.#events.record({ ...updated, apiVersion: "v1", kind: "Node" }, "Normal", "NodeNotReady", `Node ${node.metadata.name} status is now: NodeNotReady`);
    return updated;
  }

  /**
   * Upstream's MarkPodsNotReady: the pods of a node that is not Ready get Ready=False, so that
   * Services stop sending them traffic (nothing on the node will say otherwise).
   */
  async #markPodsNotReady(nodeName: string, now: number): Promise<void> {
    const pods = this.#ctx.informers.informerFor<Pod>({ resource: PODS }).byIndex(POD_NODE_NAME_INDEX, nodeName);
    for (const pod of pods) {
      if (isPodTerminal(pod)) continue;
      const conditions = [...(pod.status?.conditions ?? [])];
      const i = conditions.findIndex((c) => c?.type === "Ready");
      if (i < 0 || conditions[i]!.status !== "True") continue;
      conditions[i] = { ...conditions[i], status: "False", lastTransitionTime: formatTimestamp(new Date(now)) };
      try {
        await this.#ctx.client.update(PODS, { ...pod, status: { ...pod.status, conditions } }, { subresource: "status" });
        this.#events.record({ ...pod, apiVersion: "v1", kind: "Pod" }, "Warning", "NodeNotReady", "Node is not ready");
      } catch (err) {
        // The cache was behind (Conflict) or the pod went: its next event brings it back here.
        if (!isApiError(err, "Conflict") && !isApiError(err, "NotFound")) throw err;
      }
    }
  }

  /** The taints the Ready condition (and spec.unschedulable) call for, set; ours that no longer apply, removed. */
  async #reconcileTaints(node: Node, now: number): Promise<void> {
    const keys = this.#taints;
    const ready = (node.status?.conditions ?? []).find((c) => c?.type === "Ready");
    const wanted: Taint[] = [];
    const condemned = ready?.status === "False" ? keys.notReady : ready?.status === "Unknown" ? keys.unreachable : undefined;
    if (condemned !== undefined) wanted.push({ key: condemned, effect: "NoSchedule" }, { key: condemned, effect: "NoExecute" });
    if (node.spec?.unschedulable) wanted.push({ key: keys.unschedulable, effect: "NoSchedule" });
    const ours = new Set([keys.notReady, keys.unreachable, keys.unschedulable]);
    const current = node.spec?.taints ?? [];
    const same = (a: Taint, b: Taint) => a.key === b.key && a.effect === b.effect;
    const kept = current.filter((t) => !ours.has(t.key ?? "") || wanted.some((w) => same(w, t)));
    const added = wanted.filter((w) => !current.some((t) => same(w, t)));
    if (added.length === 0 && kept.length === current.length) return;
    const stamp = formatTimestamp(new Date(now));
    const taints = [...kept, ...added.map((t) => (t.effect === "NoExecute" ? { ...t, timeAdded: stamp } : t))];
    await this.#ctx.client.update<Node>(NODES, { ...node, spec: { ...node.spec, taints } });
    const zone = zoneKey(node, this.#ctx.naming);
    for (const t of added) if (t.effect === "NoExecute") this.#evictions.inc({ zone });
  }

  /**
   * Moves one node's contribution to the zone gauges (its zone, Ready or not,
   * as the node informer has it; undefined: gone). Counted per node change,
   * not by walking every node per sync: with 1,000 nodes whose leases renew
   * every 10 s the walk was 4 % of `orch server`'s CPU.
   */
  #countZone(name: string, node: Node | undefined): void {
    const before = this.#zoneOf.get(name);
    const after = node === undefined ? undefined : { zone: zoneKey(node, this.#ctx.naming), unhealthy: (node.status?.conditions ?? []).find((c) => c?.type === "Ready")?.status !== "True" };
    if (before?.zone === after?.zone && before?.unhealthy === after?.unhealthy) return;
    if (before !== undefined) this.#addToZone(before.zone, -1, before.unhealthy ? -1 : 0);
    if (after !== undefined) this.#addToZone(after.zone, 1, after.unhealthy ? 1 : 0);
    if (after === undefined) this.#zoneOf.delete(name);
    else this.#zoneOf.set(name, after);
  }

  #addToZone(zone: string, size: number, unhealthy: number): void {
    const z = this.#zones.get(zone) ?? { size: 0, unhealthy: 0 };
    z.size += size;
    z.unhealthy += unhealthy;
    this.#zones.set(zone, z);
    this.#zoneSize.set({ zone }, z.size);
    this.#zoneUnhealthy.set({ zone }, z.unhealthy);
    this.#zoneHealth.set({ zone }, z.size === 0 ? 100 : (100 * (z.size - z.unhealthy)) / z.size);
  }

}
