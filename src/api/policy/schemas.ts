// PodDisruptionBudget of policy/v1 as schema data. Protobuf field numbers
// from k8s.io/api/policy/v1/generated.proto.

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1, listOf } from "../apps/schemas.js";

export const POLICY_V1 = "io.k8s.api.policy.v1";

const meta = (name: string) => s.ref(`${META_V1}.${name}`);
const policy = (name: string) => s.ref(`${POLICY_V1}.${name}`);

export const POLICY_TYPES: readonly TypeDef[] = [
  type(`${POLICY_V1}.PodDisruptionBudget`, "How many pods of a set may be down at once through voluntary disruptions (evictions, preemption).", {
    metadata: f(1, meta("ObjectMeta"), "Standard object metadata."),
    spec: f(2, policy("PodDisruptionBudgetSpec"), "The desired bounds."),
    status: f(3, policy("PodDisruptionBudgetStatus"), "The most recently observed state."),
  }),
  type(`${POLICY_V1}.PodDisruptionBudgetSpec`, "The pods a budget covers and how many must stay available.", {
    minAvailable: f(1, s.intOrString(), "Pods that must still be available after an eviction (a number or a percentage)."),
    selector: f(2, meta("LabelSelector"), "The pods the budget covers.", { patchStrategy: "replace" }),
    maxUnavailable: f(3, s.intOrString(), "Pods that may be unavailable after an eviction (a number or a percentage)."),
    unhealthyPodEvictionPolicy: f(4, s.string({ enum: ["IfHealthyBudget", "AlwaysAllow"] }), "When unhealthy running pods may be evicted."),
  }),
  type(`${POLICY_V1}.PodDisruptionBudgetStatus`, "The observed state of a budget.", {
    observedGeneration: f(1, s.int64(), "The generation this status was computed from."),
    disruptedPods: f(2, s.map(s.time()), "Pods being evicted, not yet seen gone, by name."),
    disruptionsAllowed: f(3, s.int32(), "Pod disruptions allowed now.", { required: true }),
    currentHealthy: f(4, s.int32(), "Healthy pods now.", { required: true }),
    desiredHealthy: f(5, s.int32(), "Minimum healthy pods wanted.", { required: true }),
    expectedPods: f(6, s.int32(), "Pods the budget counts.", { required: true }),
    conditions: f(7, s.array(meta("Condition"), { listType: "map", listMapKeys: ["type"] }), "Observations of the budget's state (DisruptionAllowed).", {
      patchStrategy: "merge",
      patchMergeKey: "type",
    }),
  }),
  listOf(POLICY_V1, "PodDisruptionBudget", "A list of PodDisruptionBudgets."),
  // The body of pods/eviction (never stored).
  type(`${POLICY_V1}.Eviction`, "A request to evict a pod, subject to its disruption budgets (POST to pods/NAME/eviction).", {
    metadata: f(1, meta("ObjectMeta"), "The pod's name and namespace."),
    deleteOptions: f(2, meta("DeleteOptions"), "How the pod is deleted."),
  }),
];
