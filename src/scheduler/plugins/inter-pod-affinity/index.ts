// InterPodAffinity (filter): the pod's required affinity (some matching pod
// in the node's topology domain; the first pod of a group that matches its own
// terms may go anywhere), its required anti-affinity (no matching pod in the
// domain), and existing pods' required anti-affinity against the pod.

import type { ClusterView, CycleState, FilterPlugin, PreFilterPlugin } from "../../framework/interface.js";
import { unresolvable, unschedulable } from "../../framework/interface.js";
import type { NodeInfo } from "../../framework/node-info.js";
import { termMatches, type AffinityTerm, type PodInfo } from "../../framework/pod-info.js";

export const NAME = "InterPodAffinity";
const FAIL_AFFINITY = unresolvable(NAME, "node(s) didn't match pod affinity rules");
const FAIL_ANTI = unschedulable(NAME, "node(s) didn't match pod anti-affinity rules");
const FAIL_EXISTING = unschedulable(NAME, "node(s) didn't satisfy existing pods anti-affinity rules");
const STATE = "PreFilterInterPodAffinity";

/** topologyKey → values of the domains that hold a match. */
type Domains = Map<string, Set<string>>;

interface State {
  existingAnti: Domains;
  /** Per affinity term: domains with a matching pod. */
  affinity: Set<string>[];
  /** No pod anywhere matches the affinity terms, and the pod matches them itself. */
  affinityFirstOfGroup: boolean;
  anti: Set<string>[];
}

function add(domains: Domains, key: string, value: string): void {
  let set = domains.get(key);
  if (set === undefined) domains.set(key, (set = new Set()));
  set.add(value);
}

function domainsMatching(term: AffinityTerm, cluster: ClusterView): Set<string> {
  const out = new Set<string>();
  for (const node of cluster.nodes) {
    const value = node.labels[term.topologyKey];
    if (value === undefined || out.has(value)) continue;
    for (const other of node.pods.values()) {
      if (termMatches(term, other)) {
        out.add(value);
        break;
      }
    }
  }
  return out;
}

function inDomain(node: NodeInfo, key: string, values: Set<string> | undefined): boolean {
  const v = node.labels[key];
  return v !== undefined && values !== undefined && values.has(v);
}

export const interPodAffinity: PreFilterPlugin & FilterPlugin = {
  name: NAME,
  events: ["NodeAdd", "NodeLabelChange", "AssignedPodAdd", "AssignedPodUpdate", "AssignedPodDelete"],
  preFilter(state: CycleState, pod: PodInfo, cluster: ClusterView) {
    const existingAnti: Domains = new Map();
    for (const node of cluster.nodesWithRequiredAntiAffinity) {
      for (const other of node.podsWithRequiredAntiAffinity) {
        for (const term of other.requiredAntiAffinity) {
          const value = node.labels[term.topologyKey];
          if (value !== undefined && termMatches(term, pod)) add(existingAnti, term.topologyKey, value);
        }
      }
    }
    if (existingAnti.size === 0 && pod.requiredAffinity.length === 0 && pod.requiredAntiAffinity.length === 0) return "skip";
    const affinity = pod.requiredAffinity.map((t) => domainsMatching(t, cluster));
    const affinityFirstOfGroup = affinity.every((d) => d.size === 0) && pod.requiredAffinity.every((t) => termMatches(t, pod));
    const s: State = { existingAnti, affinity, affinityFirstOfGroup, anti: pod.requiredAntiAffinity.map((t) => domainsMatching(t, cluster)) };
    state.set(STATE, s);
    return undefined;
  },
  filter(state, pod, node) {
    const s = state.get(STATE) as State;
    if (pod.requiredAffinity.length > 0 && !s.affinityFirstOfGroup) {
      for (let i = 0; i < pod.requiredAffinity.length; i++) if (!inDomain(node, pod.requiredAffinity[i]!.topologyKey, s.affinity[i])) return FAIL_AFFINITY;
    } else if (pod.requiredAffinity.length > 0) {
      // The first pod of a group still needs the topology keys on its node.
      for (const t of pod.requiredAffinity) if (node.labels[t.topologyKey] === undefined) return FAIL_AFFINITY;
    }
    for (let i = 0; i < pod.requiredAntiAffinity.length; i++) if (inDomain(node, pod.requiredAntiAffinity[i]!.topologyKey, s.anti[i])) return FAIL_ANTI;
    for (const [key, values] of s.existingAnti) if (inDomain(node, key, values)) return FAIL_EXISTING;
    return undefined;
  },
};
