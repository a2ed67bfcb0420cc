// The controllers and the manager that runs them: what `orch controller-manager`
// and `orch server` use.

export { runControllerManager, selectControllers, controllerManagerLease, CONTROLLERS, type ControllerManagerOptions, type LeaderElectionSettings } from "./manager.js";
export type { ControllerContext, ControllerDescriptor } from "./controller.js";
export { namespaceController, NamespaceController, type NamespaceControllerOptions } from "./namespace/controller.js";
export { garbageCollectorController, GarbageCollector, type GarbageCollectorOptions } from "./garbage-collector/controller.js";
export { replicaSetController, replicationControllerController, ReplicaSetController, REPLICATION_CONTROLLER_KIND, type ReplicaSetControllerOptions } from "./replicaset/controller.js";
export { deploymentController, DeploymentController, type DeploymentControllerOptions } from "./deployment/controller.js";
export { statefulSetController, StatefulSetController, type StatefulSetControllerOptions } from "./statefulset/controller.js";
export { daemonSetController, DaemonSetController, type DaemonSetControllerOptions } from "./daemonset/controller.js";
export { nodeLifecycleController, NodeLifecycleController } from "./node-lifecycle/controller.js";
export { taintEvictionController, TaintEvictionController } from "./node-lifecycle/taint-eviction.js";
export { jobController, JobController, type JobControllerOptions } from "./job/controller.js";
export { cronJobController, CronJobController } from "./cronjob/controller.js";
export { ttlAfterFinishedController, TtlAfterFinishedController } from "./ttl-after-finished/controller.js";
export { podGcController, PodGcController, type PodGcOptions } from "./podgc/controller.js";
export { serviceAccountController, ServiceAccountController } from "./serviceaccount/controller.js";
export { rootCaPublisherController, RootCaPublisher } from "./root-ca-publisher/controller.js";
export { endpointsController, EndpointsController } from "./endpoint/controller.js";
export { endpointSliceController, EndpointSliceController, type EndpointSliceControllerOptions } from "./endpointslice/controller.js";
export { endpointSliceMirroringController, EndpointSliceMirroringController } from "./endpointslicemirroring/controller.js";
export { csrApprovingController, csrSigningController, tokenCleanerController, CsrApprover, CsrSigner, TokenCleaner } from "./certificates/index.js";
export { clusterRoleAggregationController, ClusterRoleAggregationController } from "./clusterrole-aggregation/controller.js";
export type { ControllerConfig } from "./controller.js";
export { persistentVolumeBinderController, PersistentVolumeBinder } from "./persistentvolume/binder.js";
export { pvcProtectionController, pvProtectionController, PvcProtectionController, PvProtectionController } from "./persistentvolume/protection.js";
export { localPathProvisionerController, LocalPathProvisioner, localPathStorageClass, localPathProvisioner } from "./local-path-provisioner/controller.js";
export { resourceQuotaController, ResourceQuotaController, type ResourceQuotaControllerOptions } from "./resourcequota/controller.js";
export { disruptionController, DisruptionController } from "./disruption/controller.js";
export { hpaController, HpaController } from "./hpa/controller.js";
