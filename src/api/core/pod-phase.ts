// Whether a pod has finished: phase Succeeded or Failed (upstream's
// IsPodPhaseTerminal). A terminal phase is final: nothing runs the pod's
// containers again, so the scheduler, the node agent, quota, graceful deletion
// and the controllers all treat such a pod as gone but for its record. Also
// whether a pod is ready (upstream's IsPodReady), which controllers and
// eviction read alike.

import type { Pod } from "./types.js";

/** Succeeded or Failed. */
export function isTerminalPhase(phase: string | null | undefined): phase is "Succeeded" | "Failed" {
  return phase === "Succeeded" || phase === "Failed";
}

/** The pod's phase is Succeeded or Failed. */
export function isPodTerminal(pod: Pick<Pod, "status">): boolean {
  return isTerminalPhase(pod.status?.phase);
}

/** The pod's Ready condition is True (upstream's IsPodReady). */
export function isPodReady(pod: Pick<Pod, "status">): boolean {
  return (pod.status?.conditions ?? []).some((c) => c?.type === "Ready" && c.status === "True");
}
