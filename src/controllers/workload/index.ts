// What the workload controllers (ReplicaSet, Deployment, DaemonSet,
// StatefulSet) share: resources, expectations, adoption, pod predicates and
// ranking, revision history, status writes and slow-start batches.

export * from "./resources.js";
export * from "./expectations.js";
export * from "./claim.js";
export * from "./pods.js";
export * from "./hash.js";
export * from "./history.js";
export * from "./status.js";
export * from "./slow-start.js";
export * from "./pod-events.js";
export * from "./int-or-percent.js";
