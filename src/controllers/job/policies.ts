// A Job's podFailurePolicy and successPolicy as upstream evaluates them:
// failure rules in order, the first match decides (FailJob, FailIndex,
// Ignore, Count), with upstream's messages; success rules over the succeeded
// indexes of an Indexed Job.

import type { Pod } from "../../api/core/types.js";
import type { Job } from "../../api/batch/types.js";
import { parseIndexes } from "./indexes.js";

export interface FailureMatch {
  action: "FailJob" | "FailIndex" | "Ignore" | "Count";
  message: string;
}

/** The first podFailurePolicy rule a failed pod matches; undefined: no rule (default handling, Count). */
export function matchPodFailurePolicy(job: Job, pod: Pod): FailureMatch | undefined {
  const rules = job.spec?.podFailurePolicy?.rules ?? [];
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const [index, rule] of rules.entries()) {
    const action = rule.action as FailureMatch["action"];
    if (!["FailJob", "FailIndex", "Ignore", "Count"].includes(action)) continue; // unknown actions are skipped, as upstream says clients must
    const onExit = rule.onExitCodes;
    if (onExit) {
      for (const cs of statuses) {
        const code = cs?.state?.terminated?.exitCode;
        // Containers that succeeded (exit code 0) are not looked at.
        if (code === undefined || code === 0) continue;
        if (onExit.containerName && onExit.containerName !== cs.name) continue;
        const listed = (onExit.values ?? []).includes(code);
        if (onExit.operator === "In" ? listed : !listed) {
          return { action, message: `Container ${cs.name} for pod ${pod.metadata.namespace}/${pod.metadata.name} failed with exit code ${code} matching ${action} rule at index ${index}` };
        }
      }
    }
    for (const pattern of rule.onPodConditions ?? []) {
      const found = (pod.status?.conditions ?? []).find((c) => c?.type === pattern.type && c.status === (pattern.status ?? "True"));
      if (found !== undefined) {
        return { action, message: `Pod ${pod.metadata.namespace}/${pod.metadata.name} has condition ${pattern.type} matching ${action} rule at index ${index}` };
      }
    }
  }
  return undefined;
}

/** The first successPolicy rule the succeeded indexes satisfy, as upstream's message names it. */
export function matchSuccessPolicy(job: Job, succeeded: ReadonlySet<number>): string | undefined {
  const completions = job.spec?.completions ?? 0;
  for (const [index, rule] of (job.spec?.successPolicy?.rules ?? []).entries()) {
    const wanted = rule.succeededIndexes != null ? parseIndexes(rule.succeededIndexes, completions) : undefined;
    const have = wanted === undefined ? succeeded.size : [...wanted].filter((i) => succeeded.has(i)).length;
    const need = rule.succeededCount ?? wanted?.size ?? Infinity;
    if (have >= need) return `Matched rules at index ${index}`;
  }
  return undefined;
}
