// NodeResourcesBalancedAllocation: prefer nodes where cpu and memory would be
// used in the same proportion after placing the pod (score = (1 − std) × 100
// over the requested fractions, as upstream).

import type { ScorePlugin } from "../../framework/interface.js";
import { MAX_NODE_SCORE } from "../../framework/interface.js";

export const NAME = "NodeResourcesBalancedAllocation";

function fraction(requested: number, allocatable: number): number {
  return allocatable <= 0 ? 0 : Math.min(1, requested / allocatable);
}

export const balancedAllocation: ScorePlugin = {
  name: NAME,
  events: ["NodeAdd", "NodeAllocatableChange", "AssignedPodDelete"],
  weight: 1,
  score(_state, pod, node) {
    const cpu = fraction((node.requested.get("cpu") ?? 0) + (pod.requests.get("cpu") ?? 0), node.allocatable.get("cpu") ?? 0);
    const memory = fraction((node.requested.get("memory") ?? 0) + (pod.requests.get("memory") ?? 0), node.allocatable.get("memory") ?? 0);
    // The standard deviation of two values is half their difference.
    return (1 - Math.abs(cpu - memory) / 2) * MAX_NODE_SCORE;
  },
};
