// Which nodes a DaemonSet's pod belongs on (upstream's NodeShouldRunDaemonPod):
// the template's nodeName, nodeSelector and required node affinity must
// match the node, and its taints must be tolerated — by the template's
// tolerations plus the ones upstream adds to every daemon pod. A NoExecute
// taint the pod does not tolerate also ends a pod already there.

import type { WorkloadKeys } from "../../machinery/naming.js";
import type { Node, PodSpec, Toleration } from "../../api/core/types.js";
import { nodeSelectorTermMatches, toleratesTaint, type NodeSelectorTerm } from "../../api/core/node-matching.js";

interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] | null } | null;
  [field: string]: unknown;
}

export function nodeAffinityOf(spec: PodSpec | undefined): NodeAffinity | undefined {
  return (spec?.affinity as { nodeAffinity?: NodeAffinity } | null | undefined)?.nodeAffinity ?? undefined;
}

/** nodeSelector and required node affinity both match the node. */
export function matchesNode(spec: PodSpec | undefined, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  if (!Object.entries(spec?.nodeSelector ?? {}).every(([k, v]) => labels[k] === v)) return false;
  const terms = nodeAffinityOf(spec)?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  return terms === undefined || terms === null || terms.some((t) => nodeSelectorTermMatches(t, labels, node.metadata.name));
}


/**
 * The tolerations upstream adds to every daemon pod (AddOrUpdateDaemonPodTolerations):
 * not-ready and unreachable (NoExecute, forever), the pressure and
 * unschedulable taints (NoSchedule), and network-unavailable for host-network pods.
 */
export function daemonPodTolerations(spec: PodSpec | undefined, keys: WorkloadKeys): Toleration[] {
  const wanted: Toleration[] = [
    { key: keys.taintNotReady, operator: "Exists", effect: "NoExecute" },
    { key: keys.taintUnreachable, operator: "Exists", effect: "NoExecute" },
    { key: keys.taintDiskPressure, operator: "Exists", effect: "NoSchedule" },
    { key: keys.taintMemoryPressure, operator: "Exists", effect: "NoSchedule" },
    { key: keys.taintPidPressure, operator: "Exists", effect: "NoSchedule" },
    { key: keys.taintUnschedulable, operator: "Exists", effect: "NoSchedule" },
    ...(spec?.hostNetwork ? [{ key: keys.taintNetworkUnavailable, operator: "Exists", effect: "NoSchedule" }] : []),
  ];
  const own = [...(spec?.tolerations ?? [])];
  // Upstream replaces a toleration with the same key and effect.
  return [...own.filter((t) => !wanted.some((w) => w.key === t.key && w.effect === t.effect)), ...wanted];
}

/** [shouldRun, shouldContinueRunning] for a daemon pod with this spec on this node. */
export function shouldRunOn(spec: PodSpec | undefined, node: Node, keys: WorkloadKeys): [boolean, boolean] {
  if (spec?.nodeName && spec.nodeName !== node.metadata.name) return [false, false];
  if (!matchesNode(spec, node)) return [false, false];
  const tolerations = daemonPodTolerations(spec, keys);
  const untolerated = (node.spec?.taints ?? []).filter((taint) => (taint.effect === "NoSchedule" || taint.effect === "NoExecute") && !tolerations.some((t) => toleratesTaint(t, taint)));
  if (untolerated.length === 0) return [true, true];
  return [false, !untolerated.some((t) => t.effect === "NoExecute")];
}

/** The node a daemon pod is for: its nodeName, or the single name its required node affinity pins (before it is bound). */
export function nodeNameOf(spec: PodSpec | undefined): string | undefined {
  if (spec?.nodeName) return spec.nodeName;
  for (const term of nodeAffinityOf(spec)?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) {
    for (const f of term.matchFields ?? []) if (f.key === "metadata.name" && f.operator === "In" && f.values?.length === 1) return f.values[0];
  }
  return undefined;
}

/** The spec pinned to one node (upstream's ReplaceDaemonSetPodNodeNameNodeAffinity): the required terms become metadata.name In [node]. */
export function pinToNode(spec: PodSpec, nodeName: string): void {
  const affinity = { ...((spec.affinity as Record<string, unknown> | null | undefined) ?? {}) };
  const nodeAffinity = { ...((affinity["nodeAffinity"] as NodeAffinity | undefined) ?? {}) };
  nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: [nodeName] }] }] };
  affinity["nodeAffinity"] = nodeAffinity;
  spec.affinity = affinity;
}
