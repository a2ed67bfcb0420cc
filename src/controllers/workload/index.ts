// What the workload controllers (ReplicaSet, Deployment, DaemonSet,
// StatefulSet) share: resources, expectations, adoption, pod predicates and
// ranking, revision history, status writes and the worker loop.

export * from "./resources.js";
export * from "./expectations.js";
export * from "./claim.js";
export * from "./pods.js";
export * from "./hash.js";
export * from "./history.js";
export * from "./status.js";
export * from "./run-loop.js";
export * from "./pod-events.js";
export * from "./int-or-percent.js";
