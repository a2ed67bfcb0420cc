// The scheduler's cache: every node as a NodeInfo with the pods bound to it
// (from the informer) and the pods assumed onto it (placed by this scheduler,
// binding in flight). Assume first, bind asynchronously, forget on failure,
// so the next pod already sees the space taken. Node changes are reported as
// the cluster events the queue moves pods on.

import type { Node, Pod } from "../../api/core/types.js";
import { keyOf } from "../../client/index.js";
import type { ClusterEvent, ClusterView } from "../framework/interface.js";
import { NodeInfo } from "../framework/node-info.js";
import { PodInfo } from "../framework/pod-info.js";

export class SchedulerCache implements ClusterView {
  readonly #nodes = new Map<string, NodeInfo>();
  /** Nodes with a Node object, in a stable order (rebuilt on add and remove only). */
  #list: NodeInfo[] | undefined;
  /** Pod key → the node it is bound or assumed to. */
  readonly #podNode = new Map<string, string>();
  readonly #assumed = new Set<string>();
  #antiAffinity: NodeInfo[] | undefined;

  get nodes(): readonly NodeInfo[] {
    this.#list ??= [...this.#nodes.values()].filter((n) => n.node !== undefined);
    return this.#list;
  }

  get nodesWithRequiredAntiAffinity(): readonly NodeInfo[] {
    this.#antiAffinity ??= this.nodes.filter((n) => n.podsWithRequiredAntiAffinity.size > 0);
    return this.#antiAffinity;
  }

  get(name: string): NodeInfo | undefined {
    const n = this.#nodes.get(name);
    return n?.node !== undefined ? n : undefined;
  }

  #nodeInfo(name: string): NodeInfo {
    let n = this.#nodes.get(name);
    if (n === undefined) this.#nodes.set(name, (n = new NodeInfo(name)));
    return n;
  }

  // ---- nodes ----

  addNode(node: Node): ClusterEvent[] {
    const name = node.metadata.name ?? "";
    const n = this.#nodeInfo(name);
    const old = n.node;
    n.setNode(node);
    if (old === undefined) {
      this.#list = undefined;
      this.#antiAffinity = undefined;
      return ["NodeAdd"];
    }
    return nodeEvents(old, node);
  }

  removeNode(name: string): void {
    const n = this.#nodes.get(name);
    if (n === undefined) return;
    // Pods still bound there keep their NodeInfo until they are deleted (upstream does the same).
    if (n.pods.size === 0) this.#nodes.delete(name);
    else n.node = undefined;
    this.#list = undefined;
    this.#antiAffinity = undefined;
  }

  // ---- pods ----

  isAssumed(key: string): boolean {
    return this.#assumed.has(key);
  }

  /** Where a pod is bound or assumed. */
  nodeOf(key: string): string | undefined {
    return this.#podNode.get(key);
  }

  /** A pod with spec.nodeName (from the informer); confirms an assumed pod. */
  addPod(pod: Pod): void {
    const key = keyOf(pod);
    const nodeName = pod.spec?.nodeName ?? "";
    const current = this.#podNode.get(key);
    if (current !== undefined && current !== nodeName) this.removePod(key);
    this.#assumed.delete(key);
    this.#podNode.set(key, nodeName);
    this.#add(nodeName, new PodInfo(pod));
  }

  #add(nodeName: string, pi: PodInfo): void {
    this.#nodeInfo(nodeName).addPod(pi);
    if (pi.requiredAntiAffinity.length > 0) this.#antiAffinity = undefined;
  }

  removePod(key: string): void {
    const nodeName = this.#podNode.get(key);
    if (nodeName === undefined) return;
    this.#podNode.delete(key);
    this.#assumed.delete(key);
    const n = this.#nodes.get(nodeName);
    if (n?.removePod(key)?.requiredAntiAffinity.length) this.#antiAffinity = undefined;
    if (n !== undefined && n.node === undefined && n.pods.size === 0) this.#nodes.delete(nodeName);
  }

  /** Places the pod on the node before the binding is confirmed. */
  assume(pi: PodInfo, nodeName: string): void {
    this.#assumed.add(pi.key);
    this.#podNode.set(pi.key, nodeName);
    this.#add(nodeName, pi);
  }

  /** The binding failed: take the assumed pod off its node. */
  forget(key: string): void {
    if (this.#assumed.has(key)) this.removePod(key);
  }

  /** Every pod bound or assumed, with its node (preemption and PDB accounting). */
  *pods(): IterableIterator<PodInfo> {
    for (const n of this.#nodes.values()) yield* n.pods.values();
  }
}

function nodeEvents(old: Node, next: Node): ClusterEvent[] {
  const events: ClusterEvent[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  if (!same(old.metadata.labels, next.metadata.labels)) events.push("NodeLabelChange");
  if (!same(old.spec?.taints, next.spec?.taints)) events.push("NodeTaintChange");
  if (!same(old.status?.allocatable, next.status?.allocatable)) events.push("NodeAllocatableChange");
  if ((old.spec?.unschedulable ?? false) !== (next.spec?.unschedulable ?? false)) events.push("NodeSpecUnschedulableChange");
  return events;
}
