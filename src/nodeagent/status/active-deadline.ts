// spec.activeDeadlineSeconds on the node (upstream's active deadline
// handler): counted from the pod's status.startTime, a pod past its deadline
// is failed with reason DeadlineExceeded and its containers are killed. The
// field may be set or lowered on a running pod, so the check runs at every
// sync, and a pod with a deadline is synced again when it runs out.

import type { Pod } from "../../api/core/types.js";

export const DEADLINE_EXCEEDED = "DeadlineExceeded";
export const DEADLINE_MESSAGE = "Pod was active on the node longer than the specified deadline";

/**
 * Milliseconds left before the pod's deadline (0 or less: past it), or
 * undefined when it has none or has not started. `startTime` is RFC 3339.
 */
export function activeDeadlineRemainingMs(pod: Pod, startTime: string | null | undefined, nowMs: number): number | undefined {
  const seconds = pod.spec?.activeDeadlineSeconds;
  if (seconds === undefined || seconds === null || !startTime) return undefined;
  const start = Date.parse(startTime);
  if (Number.isNaN(start)) return undefined;
  return start + seconds * 1000 - nowMs;
}
