// Taints and tolerations as the node lifecycle and taint eviction controllers
// read them: the well-known taint keys (naming table), how long tolerations
// let a pod stay, and a node's zone key.

import type { Naming } from "../../machinery/naming.js";
import type { Node, Taint, Toleration } from "../../api/core/types.js";
import { toleratesTaint } from "../../api/core/node-matching.js";

export function nodeTaintKeys(naming: Naming): { notReady: string; unreachable: string; unschedulable: string } {
  const d = naming.keyDomain;
  return { notReady: `node.${d}/not-ready`, unreachable: `node.${d}/unreachable`, unschedulable: `node.${d}/unschedulable` };
}

/**
 * How long a pod may stay on a node with these NoExecute taints: 0 (evict
 * now) if one is not tolerated, Infinity if all are tolerated forever,
 * otherwise the smallest tolerationSeconds (negative counts as 0).
 */
export function tolerationWindowMs(tolerations: readonly Toleration[], taints: readonly Taint[]): number {
  let window = Infinity;
  for (const taint of taints) {
    const matching = tolerations.filter((t) => toleratesTaint(t, taint));
    if (matching.length === 0) return 0;
    for (const t of matching) if (t.tolerationSeconds != null) window = Math.min(window, Math.max(0, t.tolerationSeconds) * 1000);
  }
  return window;
}

/** upstream's GetZoneKey: region and zone labels joined by ":\x00:"; "" when neither is set. */
export function zoneKey(node: Node, naming: Naming): string {
  const labels = node.metadata.labels ?? {};
  const region = labels[`topology.${naming.keyDomain}/region`] ?? "";
  const zone = labels[`topology.${naming.keyDomain}/zone`] ?? "";
  return region === "" && zone === "" ? "" : `${region}:\x00:${zone}`;
}
