// The controllers and the manager that runs them: what `orch controller-manager`
// and `orch server` use.

export { runControllerManager, selectControllers, controllerManagerLease, CONTROLLERS, type ControllerManagerOptions, type LeaderElectionSettings } from "./manager.js";
export type { ControllerContext, ControllerDescriptor } from "./controller.js";
export { namespaceController, NamespaceController, NAMESPACE_FINALIZER, type NamespaceControllerOptions } from "./namespace/controller.js";
export { garbageCollectorController, GarbageCollector, type GarbageCollectorOptions } from "./garbage-collector/controller.js";
export { replicaSetController, ReplicaSetController, type ReplicaSetControllerOptions } from "./replicaset/controller.js";
export { deploymentController, DeploymentController, type DeploymentControllerOptions } from "./deployment/controller.js";
export { statefulSetController, StatefulSetController, type StatefulSetControllerOptions } from "./statefulset/controller.js";
export { daemonSetController, DaemonSetController, type DaemonSetControllerOptions } from "./daemonset/controller.js";
