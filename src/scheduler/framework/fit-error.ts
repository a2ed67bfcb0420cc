// Why a pod fits nowhere, in upstream's words: "0/3 nodes are available:
// 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu."
// followed by what preemption found (" preemption: 0/3 nodes are available: ...").

import type { Status } from "./interface.js";

export const NO_NODES_AVAILABLE = "no nodes available to schedule pods";

export class Diagnosis {
  /** Node name → why it was rejected. */
  readonly nodeStatuses = new Map<string, Status>();
  readonly unschedulablePlugins = new Set<string>();
  /** Set when PreFilter rejected the pod for every node. */
  preFilterMessage = "";
  postFilterMessage = "";

  record(node: string, status: Status): void {
    this.nodeStatuses.set(node, status);
    this.unschedulablePlugins.add(status.plugin);
  }
}

/** "N reason" counts, sorted as strings (upstream's sortReasonsHistogram). */
export function reasonHistogram(statuses: Iterable<Status>): string[] {
  const counts = new Map<string, number>();
  for (const s of statuses) for (const r of s.reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts].map(([reason, n]) => `${n} ${reason}`).sort();
}

export function fitErrorMessage(numAllNodes: number, diagnosis: Diagnosis): string {
  let message = `0/${numAllNodes} nodes are available:`;
  if (diagnosis.preFilterMessage !== "") message += ` ${diagnosis.preFilterMessage}.`;
  else {
    const reasons = reasonHistogram(diagnosis.nodeStatuses.values());
    if (reasons.length > 0) message += ` ${reasons.join(", ")}.`;
  }
  // The preemption message is itself a fit error ending in "."; upstream's separator adds another, so real
  // messages end in "..", and tools that match them expect exactly that.
  if (diagnosis.postFilterMessage !== "") message += ` ${diagnosis.postFilterMessage}.`;
  return message;
}
