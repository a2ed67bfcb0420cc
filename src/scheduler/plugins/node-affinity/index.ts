// NodeAffinity: spec.nodeSelector and the required node affinity terms
// (upstream's semantics: terms ORed, expressions within a term ANDed; In,
// NotIn, Exists, DoesNotExist, Gt, Lt on labels; metadata.name in matchFields).
// The preferred terms add their weights to the score.

import { nodeSelectorTermMatches, type NodeSelectorTerm } from "../../../api/core/node-matching.js";
import type { FilterPlugin, PreFilterPlugin, ScorePlugin } from "../../framework/interface.js";
import { MAX_NODE_SCORE, unresolvable } from "../../framework/interface.js";
import type { NodeInfo } from "../../framework/node-info.js";
import type { PodInfo } from "../../framework/pod-info.js";

export const NAME = "NodeAffinity";
export const REASON = "node(s) didn't match Pod's node affinity/selector";
const FAIL = unresolvable(NAME, REASON);

interface NodeAffinitySpec {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] | null } | null;
  preferredDuringSchedulingIgnoredDuringExecution?: { weight?: number; preference?: NodeSelectorTerm | null }[] | null;
}

export function termMatches(term: NodeSelectorTerm, node: NodeInfo): boolean {
  return nodeSelectorTermMatches(term, node.labels, node.name);
}

function affinityOf(pod: PodInfo): NodeAffinitySpec | undefined {
  return ((pod.pod.spec?.affinity ?? {}) as { nodeAffinity?: NodeAffinitySpec | null }).nodeAffinity ?? undefined;
}

/** Whether the node satisfies the pod's nodeSelector and required node affinity (also used by PodTopologySpread). */
export function matchesNodeSelector(pod: PodInfo, node: NodeInfo): boolean {
  const selector = pod.pod.spec?.nodeSelector;
  if (selector) for (const k in selector) if (node.labels[k] !== selector[k]) return false;
  const required = affinityOf(pod)?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required != null) {
    const terms = required.nodeSelectorTerms ?? [];
    if (!terms.some((t) => termMatches(t, node))) return false;
  }
  return true;
}

export const nodeAffinity: PreFilterPlugin & FilterPlugin & ScorePlugin = {
  name: NAME,
  events: ["NodeAdd", "NodeLabelChange"],
  weight: 2,
  preFilter(_state, pod) {
    const hasSelector = Object.keys(pod.pod.spec?.nodeSelector ?? {}).length > 0;
    return hasSelector || affinityOf(pod)?.requiredDuringSchedulingIgnoredDuringExecution != null ? undefined : "skip";
  },
  filter: (_state, pod, node) => (matchesNodeSelector(pod, node) ? undefined : FAIL),
  score(_state, pod, node) {
    let sum = 0;
    for (const p of affinityOf(pod)?.preferredDuringSchedulingIgnoredDuringExecution ?? []) {
      if (p?.preference && termMatches(p.preference, node)) sum += p.weight ?? 0;
    }
    return sum;
  },
  normalize(scores) {
    const max = Math.max(0, ...scores);
    for (let i = 0; i < scores.length; i++) scores[i] = max === 0 ? 0 : (scores[i]! * MAX_NODE_SCORE) / max;
  },
};
