// Pods nominated to nodes by preemption (status.nominatedNodeName): while
// their victims leave, other pods of lower or equal priority must not take
// the room, so filtering a node counts its nominated pods as if placed.

import type { PodInfo } from "./framework/pod-info.js";

const NONE: readonly PodInfo[] = Object.freeze([]);

export class Nominator {
  readonly #byNode = new Map<string, Map<string, PodInfo>>();
  readonly #nodeOf = new Map<string, string>();

  /** Records (or moves, or with "" clears) a pod's nomination. */
  set(pi: PodInfo, nodeName: string | undefined): void {
    this.delete(pi.key);
    if (!nodeName) return;
    let pods = this.#byNode.get(nodeName);
    if (pods === undefined) this.#byNode.set(nodeName, (pods = new Map()));
    pods.set(pi.key, pi);
    this.#nodeOf.set(pi.key, nodeName);
  }

  delete(key: string): void {
    const node = this.#nodeOf.get(key);
    if (node === undefined) return;
    this.#nodeOf.delete(key);
    const pods = this.#byNode.get(node);
    pods?.delete(key);
    if (pods?.size === 0) this.#byNode.delete(node);
  }

  nodeOf(key: string): string | undefined {
    return this.#nodeOf.get(key);
  }

  /** Pods nominated to the node that outrank or equal `pod` (it must leave them room). */
  blocking(nodeName: string, pod: PodInfo): readonly PodInfo[] {
    const pods = this.#byNode.get(nodeName);
    if (pods === undefined) return NONE; // the hot path: most nodes have no nominations
    const out: PodInfo[] = [];
    for (const p of pods.values()) if (p.key !== pod.key && p.priority >= pod.priority) out.push(p);
    return out;
  }

  /** Pods nominated to the node with a lower priority than `pod` (preemption clears their nomination). */
  lower(nodeName: string, priority: number): PodInfo[] {
    return [...(this.#byNode.get(nodeName)?.values() ?? [])].filter((p) => p.priority < priority);
  }
}
