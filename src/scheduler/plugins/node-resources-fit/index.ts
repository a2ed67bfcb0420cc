// NodeResourcesFit: the pod's requests (cpu, memory, extended resources)
// against what the node has left of its allocatable, and the node's pod
// count; scoring is LeastAllocated (prefer the emptier node, cpu and memory
// weighted equally, on non-zero requests as upstream).

import type { FilterPlugin, ScorePlugin, Status } from "../../framework/interface.js";
import { MAX_NODE_SCORE, unschedulable } from "../../framework/interface.js";
import type { NodeInfo } from "../../framework/node-info.js";
import type { PodInfo } from "../../framework/pod-info.js";

export const NAME = "NodeResourcesFit";
const TOO_MANY_PODS = unschedulable(NAME, "Too many pods");

/** The reasons the pod does not fit (empty when it does). */
export function insufficientResources(pod: PodInfo, node: NodeInfo): string[] {
  const reasons: string[] = [];
  const maxPods = node.allocatable.get("pods");
  if (maxPods !== undefined && node.pods.size + 1 > maxPods) reasons.push("Too many pods");
  for (const [name, want] of pod.requests) {
    if (want <= 0 || name === "pods") continue;
    const free = (node.allocatable.get(name) ?? 0) - (node.requested.get(name) ?? 0);
    if (want > free) reasons.push(`Insufficient ${name}`);
  }
  return reasons;
}

function leastAllocated(requested: number, allocatable: number): number {
  if (allocatable <= 0 || requested > allocatable) return 0;
  return ((allocatable - requested) * MAX_NODE_SCORE) / allocatable;
}

export const nodeResourcesFit: FilterPlugin & ScorePlugin = {
  name: NAME,
  events: ["NodeAdd", "NodeAllocatableChange", "AssignedPodDelete", "AssignedPodUpdate"],
  weight: 1,
  filter(_state, pod, node): Status | undefined {
    const reasons = insufficientResources(pod, node);
    if (reasons.length === 0) return undefined;
    return reasons.length === 1 && reasons[0] === "Too many pods" ? TOO_MANY_PODS : unschedulable(NAME, ...reasons);
  },
  score(_state, pod, node) {
    const cpu = leastAllocated(node.nonZeroCpu + pod.nonZeroCpu, node.allocatable.get("cpu") ?? 0);
    const memory = leastAllocated(node.nonZeroMemory + pod.nonZeroMemory, node.allocatable.get("memory") ?? 0);
    return (cpu + memory) / 2;
  },
};
