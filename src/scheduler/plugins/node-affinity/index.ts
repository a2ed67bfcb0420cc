// NodeAffinity: spec.nodeSelector and the required node affinity terms
// (upstream's semantics: terms ORed, expressions within a term ANDed; In,
// NotIn, Exists, DoesNotExist, Gt, Lt on labels; metadata.name in matchFields).
// The preferred terms add their weights to the score.

import type { FilterPlugin, PreFilterPlugin, ScorePlugin } from "../../framework/interface.js";
import { MAX_NODE_SCORE, unresolvable } from "../../framework/interface.js";
import type { NodeInfo } from "../../framework/node-info.js";
import type { PodInfo } from "../../framework/pod-info.js";

export const NAME = "NodeAffinity";
export const REASON = "node(s) didn't match Pod's node affinity/selector";
const FAIL = unresolvable(NAME, REASON);

interface Requirement {
  key?: string;
  operator?: string;
  values?: string[] | null;
}

export interface NodeSelectorTerm {
  matchExpressions?: Requirement[] | null;
  matchFields?: Requirement[] | null;
}

interface NodeAffinitySpec {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] | null } | null;
  preferredDuringSchedulingIgnoredDuringExecution?: { weight?: number; preference?: NodeSelectorTerm | null }[] | null;
}

function requirementMatches(r: Requirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case "In":
      return value !== undefined && values.includes(value);
    case "NotIn":
      return value === undefined || !values.includes(value);
    case "Exists":
      return value !== undefined;
    case "DoesNotExist":
      return value === undefined;
    case "Gt":
    case "Lt": {
      if (value === undefined || values.length !== 1 || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(values[0]!)) return false;
      const [a, b] = [BigInt(value), BigInt(values[0]!)];
      return r.operator === "Gt" ? a > b : a < b;
    }
    default:
      return false;
  }
}

/** A term with neither expressions nor fields matches nothing (upstream). */
export function termMatches(term: NodeSelectorTerm, node: NodeInfo): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  for (const r of exprs) if (!requirementMatches(r, node.labels[r.key ?? ""])) return false;
  for (const r of fields) if (r.key !== "metadata.name" || !requirementMatches(r, node.name)) return false;
  return true;
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
