// NodeInfo: one node as the scheduler sees it — the Node object, the pods
// bound or assumed on it, their summed requests and host ports — kept up to
// date incrementally by the cache so filters compare numbers, not specs.

import type { Node, Taint } from "../../api/core/types.js";
import { nodeAllocatable, type Resources } from "./resources.js";
import type { HostPort, PodInfo } from "./pod-info.js";

export class NodeInfo {
  readonly name: string;
  /** Undefined while only pods are known (a pod's node can be seen before the node itself). */
  node: Node | undefined;
  labels: Readonly<Record<string, string>> = {};
  /** Taints with NoSchedule or NoExecute: the ones the filter checks. */
  hardTaints: readonly Taint[] = [];
  preferNoScheduleTaints: readonly Taint[] = [];
  unschedulable = false;
  allocatable: Resources = new Map();
  readonly requested: Resources = new Map();
  nonZeroCpu = 0;
  nonZeroMemory = 0;
  readonly pods = new Map<string, PodInfo>();
  readonly usedPorts: HostPort[] = [];
  /** Pods here with required anti-affinity: only these can repel an incoming pod. */
  readonly podsWithRequiredAntiAffinity = new Set<PodInfo>();
  /** Bumped on every change, so scoring caches can tell. */
  generation = 0;

  constructor(name: string, node?: Node) {
    this.name = name;
    if (node !== undefined) this.setNode(node);
  }

  setNode(node: Node): void {
    this.node = node;
    this.labels = node.metadata.labels ?? {};
    const taints = node.spec?.taints ?? [];
    this.hardTaints = taints.filter((t) => t?.effect === "NoSchedule" || t?.effect === "NoExecute");
    this.preferNoScheduleTaints = taints.filter((t) => t?.effect === "PreferNoSchedule");
    this.unschedulable = node.spec?.unschedulable === true;
    this.allocatable = nodeAllocatable(node);
    this.generation++;
  }

  addPod(pi: PodInfo): void {
    if (this.pods.has(pi.key)) this.removePod(pi.key);
    this.pods.set(pi.key, pi);
    for (const [k, v] of pi.requests) this.requested.set(k, (this.requested.get(k) ?? 0) + v);
    this.nonZeroCpu += pi.nonZeroCpu;
    this.nonZeroMemory += pi.nonZeroMemory;
    for (const p of pi.hostPorts) this.usedPorts.push(p);
    if (pi.requiredAntiAffinity.length > 0) this.podsWithRequiredAntiAffinity.add(pi);
    this.generation++;
  }

  removePod(key: string): PodInfo | undefined {
    const pi = this.pods.get(key);
    if (pi === undefined) return undefined;
    this.pods.delete(key);
    for (const [k, v] of pi.requests) this.requested.set(k, (this.requested.get(k) ?? 0) - v);
    this.nonZeroCpu -= pi.nonZeroCpu;
    this.nonZeroMemory -= pi.nonZeroMemory;
    for (const p of pi.hostPorts) {
      const i = this.usedPorts.indexOf(p);
      if (i >= 0) this.usedPorts.splice(i, 1);
    }
    this.podsWithRequiredAntiAffinity.delete(pi);
    this.generation++;
    return pi;
  }

  /** A copy whose pods can be changed freely (preemption's what-ifs, nominated pods). */
  clone(): NodeInfo {
    const c = new NodeInfo(this.name, this.node);
    for (const pi of this.pods.values()) c.addPod(pi);
    return c;
  }
}
