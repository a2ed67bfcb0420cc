// The scheduling framework's contract (upstream's framework interfaces, cut
// to what orch uses): plugins implement PreFilter, Filter and Score, say which
// cluster events may make a pod they rejected schedulable, and report
// failures as a Status with upstream's codes and reason strings.

import type { NodeInfo } from "./node-info.js";
import type { PodInfo } from "./pod-info.js";

/** Unschedulable: preemption may help. UnschedulableAndUnresolvable: it cannot (wrong labels, taints, ...). */
export type Code = "Unschedulable" | "UnschedulableAndUnresolvable";

export interface Status {
  readonly code: Code;
  readonly reasons: readonly string[];
  /** The plugin that failed the pod (the queue retries it on that plugin's events). */
  readonly plugin: string;
}

export function unschedulable(plugin: string, ...reasons: string[]): Status {
  return Object.freeze({ code: "Unschedulable", reasons, plugin });
}

export function unresolvable(plugin: string, ...reasons: string[]): Status {
  return Object.freeze({ code: "UnschedulableAndUnresolvable", reasons, plugin });
}

/** Cluster events the queue knows (the names appear in scheduler_queue_incoming_pods_total{event}). */
export type ClusterEvent =
  | "NodeAdd"
  | "NodeLabelChange"
  | "NodeTaintChange"
  | "NodeAllocatableChange"
  | "NodeSpecUnschedulableChange"
  | "AssignedPodAdd"
  | "AssignedPodUpdate"
  | "AssignedPodDelete"
  | "PersistentVolumeClaimAdd"
  | "PersistentVolumeClaimUpdate"
  | "PersistentVolumeAdd"
  | "PersistentVolumeUpdate"
  | "StorageClassAdd";

/** The nodes of one scheduling cycle. */
export interface ClusterView {
  readonly nodes: readonly NodeInfo[];
  /** The nodes holding pods with required anti-affinity (usually none: InterPodAffinity then has nothing to check). */
  readonly nodesWithRequiredAntiAffinity: readonly NodeInfo[];
  get(name: string): NodeInfo | undefined;
}

/** Per-cycle state plugins hand from PreFilter to Filter and Score. */
export type CycleState = Map<string, unknown>;

export interface Plugin {
  readonly name: string;
  /** Events after which a pod this plugin rejected is worth another try. */
  readonly events: readonly ClusterEvent[];
}

export interface PreFilterPlugin extends Plugin {
  /** "skip": this plugin's Filter has nothing to check for this pod. */
  preFilter(state: CycleState, pod: PodInfo, cluster: ClusterView): Status | "skip" | undefined;
}

export interface FilterPlugin extends Plugin {
  filter(state: CycleState, pod: PodInfo, node: NodeInfo): Status | undefined;
}

export interface ScorePlugin extends Plugin {
  readonly weight: number;
  /** 0–100 once normalized. */
  score(state: CycleState, pod: PodInfo, node: NodeInfo): number;
  /** Maps raw scores onto 0–100 in place, when score() does not already. */
  normalize?(scores: number[]): void;
}

export interface PreBindPlugin extends Plugin {
  /** Work before the pod's binding is posted (VolumeBinding: tell delayed claims the chosen node); throw to retry the pod. */
  preBind(state: CycleState, pod: PodInfo, nodeName: string): Promise<void>;
}

export function isPreBind(p: Plugin): p is PreBindPlugin {
  return typeof (p as PreBindPlugin).preBind === "function";
}

export function isPreFilter(p: Plugin): p is PreFilterPlugin {
  return typeof (p as PreFilterPlugin).preFilter === "function";
}

export function isFilter(p: Plugin): p is FilterPlugin {
  return typeof (p as FilterPlugin).filter === "function";
}

export function isScore(p: Plugin): p is ScorePlugin {
  return typeof (p as ScorePlugin).score === "function";
}

export const MAX_NODE_SCORE = 100;
