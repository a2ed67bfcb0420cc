// DefaultPreemption (PostFilter): when no node fits a pod, find nodes where
// evicting lower-priority pods would make room, keep as many of those pods as
// still leaves room (most important first, PodDisruptionBudget-protected ones
// before the rest), and pick the node whose victims hurt least: fewest budget
// violations, then lowest top victim priority, lowest priority sum, fewest
// victims. The caller nominates the node and deletes the victims.

import type { PodDisruptionBudget } from "../../../api/policy/types.js";
import { asSelector, intOrPercentValue } from "../../../api/apps/workload.js";
import type { Selector } from "../../../machinery/index.js";
import type { ClusterView, Status } from "../../framework/interface.js";
import { unresolvable } from "../../framework/interface.js";
import type { Framework } from "../../framework/framework.js";
import { Diagnosis, fitErrorMessage } from "../../framework/fit-error.js";
import type { NodeInfo } from "../../framework/node-info.js";
import type { PodInfo } from "../../framework/pod-info.js";

export const NAME = "DefaultPreemption";
const NOT_HELPFUL = unresolvable(NAME, "Preemption is not helpful for scheduling");
const NO_VICTIMS = unresolvable(NAME, "No preemption victims found for incoming pod");
/** Upstream's minCandidateNodesPercentage and minCandidateNodesAbsolute. */
const MIN_CANDIDATE_PERCENT = 10;
const MIN_CANDIDATE_ABSOLUTE = 100;

export interface PreemptionResult {
  /** The node to nominate; undefined when preemption cannot help. */
  nodeName?: string;
  victims: PodInfo[];
  /** For the PodScheduled condition: "preemption: ...". */
  message: string;
  /** No node can be freed: an earlier nomination is void (upstream clears it). */
  clearNomination?: boolean;
}

export interface PreemptionInput {
  pod: PodInfo;
  cluster: ClusterView;
  framework: Framework;
  /** Why each node failed in the scheduling attempt. */
  diagnosis: Diagnosis;
  pdbs: readonly PodDisruptionBudget[];
}

interface Candidate {
  node: string;
  victims: PodInfo[];
  violations: number;
}

interface Budget {
  namespace: string;
  selector: Selector;
  allowed: number;
  disrupted: ReadonlySet<string>;
}

export function preempt(input: PreemptionInput): PreemptionResult {
  const { pod, cluster, diagnosis } = input;
  const numAllNodes = cluster.nodes.length;
  if (pod.pod.spec?.preemptionPolicy === "Never") return { victims: [], message: "preemption: not eligible due to preemptionPolicy=Never." };
  const nominated = pod.pod.status?.nominatedNodeName;
  if (nominated) {
    const node = cluster.get(nominated);
    // Victims chosen earlier are still going: wait for them instead of choosing more (upstream).
    if (node !== undefined && diagnosis.nodeStatuses.get(nominated)?.code !== "UnschedulableAndUnresolvable") {
      for (const p of node.pods.values()) {
        if (p.pod.metadata.deletionTimestamp && p.priority < pod.priority) {
          return { victims: [], message: "preemption: not eligible due to a terminating pod on the nominated node." };
        }
      }
    }
  }
  const result = new Diagnosis();
  const potential: NodeInfo[] = [];
  for (const node of cluster.nodes) {
    const s = diagnosis.nodeStatuses.get(node.name);
    if (s === undefined || s.code === "UnschedulableAndUnresolvable") result.record(node.name, NOT_HELPFUL);
    else potential.push(node);
  }
  const budgets = budgetsOf(input.pdbs, cluster);
  const candidates: Candidate[] = [];
  const want = Math.min(potential.length, Math.max(Math.floor((potential.length * MIN_CANDIDATE_PERCENT) / 100), MIN_CANDIDATE_ABSOLUTE));
  // Start at a random offset so repeated preemptions do not always pick on the same nodes (upstream).
  const offset = potential.length === 0 ? 0 : Math.floor(Math.random() * potential.length);
  for (let i = 0; i < potential.length && candidates.length < want; i++) {
    const node = potential[(offset + i) % potential.length]!;
    const c = selectVictimsOnNode(input, node, budgets);
    if ("victims" in c) candidates.push(c);
    else result.record(node.name, c);
  }
  if (candidates.length === 0) return { victims: [], message: `preemption: ${fitErrorMessage(numAllNodes, result)}`, clearNomination: true };
  const best = pickBest(candidates);
  return { nodeName: best.node, victims: best.victims, message: "" };
}

function selectVictimsOnNode(input: PreemptionInput, node: NodeInfo, budgets: readonly Budget[]): Candidate | Status {
  const { pod } = input;
  const sim = node.clone();
  const potential: PodInfo[] = [];
  for (const p of node.pods.values()) {
    if (p.priority < pod.priority) {
      potential.push(p);
      sim.removePod(p.key);
    }
  }
  if (potential.length === 0) return NO_VICTIMS;
  const failure = fitsOn(input, sim);
  if (failure !== undefined) return failure;
  // Most important first: those are the ones worth keeping.
  potential.sort((a, b) => b.priority - a.priority);
  const { violating, other } = splitByBudget(potential, budgets);
  const victims: PodInfo[] = [];
  let violations = 0;
  const reprieve = (p: PodInfo): boolean => {
    sim.addPod(p);
    if (fitsOn(input, sim) === undefined) return true;
    sim.removePod(p.key);
    victims.push(p);
    return false;
  };
  for (const p of violating) if (!reprieve(p)) violations++;
  for (const p of other) reprieve(p);
  return { node: node.name, victims, violations };
}

/** Runs PreFilter and Filter for the pod against the cluster with `sim` in place of its node. */
function fitsOn(input: PreemptionInput, sim: NodeInfo): Status | undefined {
  const { cluster, framework, pod } = input;
  let nodes: NodeInfo[] | undefined;
  const view: ClusterView = {
    get nodes() {
      return (nodes ??= cluster.nodes.map((n) => (n.name === sim.name ? sim : n)));
    },
    get nodesWithRequiredAntiAffinity() {
      return this.nodes.filter((n) => n.podsWithRequiredAntiAffinity.size > 0);
    },
    get: (name) => (name === sim.name ? sim : cluster.get(name)),
  };
  const state = new Map<string, unknown>();
  const pre = framework.runPreFilter(state, pod, view);
  if (pre.status !== undefined) return pre.status;
  return framework.runFilters(state, pod, sim, pre.filters);
}

function budgetsOf(pdbs: readonly PodDisruptionBudget[], cluster: ClusterView): Budget[] {
  const out: Budget[] = [];
  for (const pdb of pdbs) {
    const selector = pdb.spec?.selector ? asSelector(pdb.spec.selector) : undefined;
    if (selector === undefined || selector.empty) continue;
    const namespace = pdb.metadata.namespace ?? "";
    const st = pdb.status;
    let allowed: number;
    if (st?.observedGeneration !== undefined && st.observedGeneration === pdb.metadata.generation) allowed = st.disruptionsAllowed ?? 0;
    else allowed = computeAllowed(pdb, namespace, selector, cluster);
    out.push({ namespace, selector, allowed, disrupted: new Set(Object.keys(st?.disruptedPods ?? {})) });
  }
  return out;
}

/** disruptionsAllowed as the disruption controller would set it, for budgets no controller has observed yet. */
function computeAllowed(pdb: PodDisruptionBudget, namespace: string, selector: Selector, cluster: ClusterView): number {
  let expected = 0;
  let healthy = 0;
  for (const node of cluster.nodes) {
    for (const p of node.pods.values()) {
      if (p.namespace !== namespace || !selector.matches(p.labels)) continue;
      expected++;
      const ready = (p.pod.status?.conditions ?? []).some((c) => c?.type === "Ready" && c.status === "True");
      if (ready && !p.pod.metadata.deletionTimestamp) healthy++;
    }
  }
  const spec = pdb.spec ?? {};
  const amount = (v: number | string) => (typeof v === "string" ? Math.ceil((intOrPercentValue(v) * expected) / 100) : v);
  let desired: number;
  if (spec.maxUnavailable != null) desired = Math.max(0, expected - amount(spec.maxUnavailable));
  else desired = spec.minAvailable != null ? amount(spec.minAvailable) : 0;
  return Math.max(0, healthy - desired);
}

/** Upstream's filterPodsWithPDBViolation: which evictions would take a budget below zero. */
function splitByBudget(pods: readonly PodInfo[], budgets: readonly Budget[]): { violating: PodInfo[]; other: PodInfo[] } {
  const allowed = budgets.map((b) => b.allowed);
  const violating: PodInfo[] = [];
  const other: PodInfo[] = [];
  for (const p of pods) {
    let violates = false;
    budgets.forEach((b, i) => {
      if (b.namespace !== p.namespace || !b.selector.matches(p.labels) || b.disrupted.has(p.pod.metadata.name ?? "")) return;
      allowed[i]!--;
      if (allowed[i]! < 0) violates = true;
    });
    (violates ? violating : other).push(p);
  }
  return { violating, other };
}

function pickBest(candidates: Candidate[]): Candidate {
  const topPriority = (c: Candidate) => Math.max(...c.victims.map((v) => v.priority), -Infinity);
  // Offsets make every priority positive, so a sum of more victims is never smaller (upstream adds MaxInt32+1).
  const prioritySum = (c: Candidate) => c.victims.reduce((s, v) => s + v.priority + 2 ** 31, 0);
  const criteria: ((c: Candidate) => number)[] = [(c) => c.violations, (c) => (c.victims.length === 0 ? -Infinity : topPriority(c)), prioritySum, (c) => c.victims.length];
  let best = candidates;
  for (const score of criteria) {
    if (best.length === 1) break;
    const min = Math.min(...best.map(score));
    best = best.filter((c) => score(c) === min);
  }
  return best[0]!;
}
