// PodTopologySpread (filter): for each DoNotSchedule constraint, placing the
// pod on a node must keep (matching pods in the node's domain + 1) − (the
// fewest in any eligible domain) within maxSkew. Eligible domains come from
// nodes with every constraint's topology key that pass the pod's node
// affinity (nodeAffinityPolicy Honor) and, with nodeTaintsPolicy Honor, its tolerations.

import type { ClusterView, CycleState, FilterPlugin, PreFilterPlugin } from "../../framework/interface.js";
import { unresolvable, unschedulable } from "../../framework/interface.js";
import type { NodeInfo } from "../../framework/node-info.js";
import type { PodInfo } from "../../framework/pod-info.js";
import { selectorFromLabelSelector, type LabelSelector, type Selector } from "../../../machinery/index.js";
import { matchesNodeSelector } from "../node-affinity/index.js";
import { tolerates } from "../taint-toleration/index.js";

export const NAME = "PodTopologySpread";
export const REASON = "node(s) didn't match pod topology spread constraints";
export const REASON_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)";
const FAIL = unschedulable(NAME, REASON);
const FAIL_LABEL = unresolvable(NAME, REASON_MISSING_LABEL);

interface RawConstraint {
  maxSkew?: number;
  topologyKey?: string;
  whenUnsatisfiable?: string;
  labelSelector?: LabelSelector | null;
  minDomains?: number | null;
  nodeAffinityPolicy?: string | null;
  nodeTaintsPolicy?: string | null;
  matchLabelKeys?: string[] | null;
}

interface Constraint {
  maxSkew: number;
  key: string;
  selector: Selector;
  minDomains: number;
  selfMatch: number;
  counts: Map<string, number>;
  minMatch: number;
}

const STATE = "PreFilterPodTopologySpread";

function constraintsOf(pod: PodInfo): Constraint[] {
  const raw = (pod.pod.spec?.topologySpreadConstraints ?? []) as RawConstraint[];
  return raw
    .filter((c) => c?.whenUnsatisfiable === "DoNotSchedule")
    .map((c) => {
      let selector: Selector;
      try {
        const extra = (c.matchLabelKeys ?? []).filter((k) => pod.labels[k] !== undefined).map((k) => [k, pod.labels[k]!]);
        selector = selectorFromLabelSelector(
          c.labelSelector == null
            ? null
            : { matchLabels: { ...(c.labelSelector.matchLabels ?? {}), ...Object.fromEntries(extra) }, matchExpressions: c.labelSelector.matchExpressions ?? [] },
        );
      } catch {
        selector = selectorFromLabelSelector(null);
      }
      return {
        maxSkew: c.maxSkew ?? 1,
        key: c.topologyKey ?? "",
        selector,
        minDomains: c.minDomains ?? 1,
        selfMatch: selector.matches(pod.labels) ? 1 : 0,
        counts: new Map<string, number>(),
        minMatch: 0,
      };
    });
}

function hasAllKeys(node: NodeInfo, constraints: readonly Constraint[]): boolean {
  for (const c of constraints) if (node.labels[c.key] === undefined) return false;
  return true;
}

export const podTopologySpread: PreFilterPlugin & FilterPlugin = {
  name: NAME,
  events: ["NodeAdd", "NodeLabelChange", "NodeTaintChange", "AssignedPodAdd", "AssignedPodUpdate", "AssignedPodDelete"],
  preFilter(state: CycleState, pod: PodInfo, cluster: ClusterView) {
    const constraints = constraintsOf(pod);
    if (constraints.length === 0) return "skip";
    const raw = (pod.pod.spec?.topologySpreadConstraints ?? []) as RawConstraint[];
    const honorAffinity = raw.every((c) => (c.nodeAffinityPolicy ?? "Honor") === "Honor");
    const honorTaints = raw.some((c) => c.nodeTaintsPolicy === "Honor");
    for (const node of cluster.nodes) {
      if (!hasAllKeys(node, constraints)) continue;
      if (honorAffinity && !matchesNodeSelector(pod, node)) continue;
      if (honorTaints && node.hardTaints.some((t) => !tolerates(pod.pod.spec?.tolerations, t))) continue;
      for (const c of constraints) {
        let n = 0;
        for (const other of node.pods.values()) if (other.namespace === pod.namespace && c.selector.matches(other.labels)) n++;
        const domain = node.labels[c.key]!;
        c.counts.set(domain, (c.counts.get(domain) ?? 0) + n);
      }
    }
    for (const c of constraints) {
      // Fewer domains than minDomains: the global minimum counts as 0 (upstream).
      c.minMatch = c.counts.size < c.minDomains ? 0 : Math.min(...c.counts.values());
    }
    state.set(STATE, constraints);
    return undefined;
  },
  filter(state, _pod, node) {
    const constraints = state.get(STATE) as Constraint[];
    if (!hasAllKeys(node, constraints)) return FAIL_LABEL;
    for (const c of constraints) {
      const skew = (c.counts.get(node.labels[c.key]!) ?? 0) + c.selfMatch - c.minMatch;
      if (skew > c.maxSkew) return FAIL;
    }
    return undefined;
  },
};
