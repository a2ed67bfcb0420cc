// The apps/v1 types (Deployment, ReplicaSet, DaemonSet, StatefulSet,
// ControllerRevision and their lists) as schema data: upstream's field sets
// (v1.33), Protobuf field numbers from k8s.io/api/apps/v1/generated.proto,
// required fields and list/patch semantics as upstream's OpenAPI publishes them.

import { f, s, type, type Field, type TypeDef } from "../../machinery/schema.js";

export const APPS_V1 = "io.k8s.api.apps.v1";
export const META_V1 = "io.k8s.apimachinery.pkg.apis.meta.v1";
export const CORE_V1 = "io.k8s.api.core.v1";

const meta = (name: string) => s.ref(`${META_V1}.${name}`);
const core = (name: string) => s.ref(`${CORE_V1}.${name}`);
const apps = (name: string) => s.ref(`${APPS_V1}.${name}`);

/** Status conditions of every apps kind: a map list keyed by type, merged by type. */
const conditions = (tag: number, item: string, description: string) =>
  f(tag, s.array(apps(item), { listType: "map", listMapKeys: ["type"] }), description, { patchStrategy: "merge", patchMergeKey: "type" });

/** `<Kind>List`: list metadata (1) and the items (2), as every upstream list message. */
export function listOf(group: string, kind: string, description: string): TypeDef {
  return type(`${group}.${kind}List`, description, {
    metadata: f(1, meta("ListMeta"), "Standard list metadata."),
    items: f(2, s.array(s.ref(`${group}.${kind}`)), `The ${kind} objects in this list.`, { required: true }),
  });
}

/** An object kind with metadata (1), spec (2) and, where it has one, status (3). */
function kindWithSpec(kind: string, description: string, withStatus = true): TypeDef {
  const fields: Record<string, Field> = {
    metadata: f(1, meta("ObjectMeta"), "Standard object metadata."),
    spec: f(2, apps(`${kind}Spec`), `What the ${kind} should look like.`),
  };
  if (withStatus) fields["status"] = f(3, apps(`${kind}Status`), `What the ${kind} looked like when last observed; written by its controller.`);
  return type(`${APPS_V1}.${kind}`, description, fields);
}

/** type/status/lastTransitionTime/reason/message, the condition shape shared by ReplicaSet, DaemonSet and StatefulSet. */
function plainCondition(kind: string, what: string): TypeDef {
  return type(`${APPS_V1}.${kind}Condition`, `One observed condition of a ${what}.`, {
    type: f(1, s.string(), "The kind of condition.", { required: true }),
    status: f(2, s.string(), "True, False or Unknown.", { required: true }),
    lastTransitionTime: f(3, s.time(), "When the status last changed."),
    reason: f(4, s.string(), "A one-word, CamelCase reason for the last change."),
    message: f(5, s.string(), "A human-readable explanation of the last change."),
  });
}

// ---- Deployment ----

const deployment = kindWithSpec("Deployment", "Declarative, rolling updates of a set of identical Pods through ReplicaSets.");

const deploymentSpec = type(`${APPS_V1}.DeploymentSpec`, "The desired state of a Deployment.", {
  replicas: f(1, s.int32(), "How many Pods to run; 1 when unset."),
  selector: f(2, meta("LabelSelector"), "Which Pods (and ReplicaSets) belong to this Deployment; must match the template's labels.", {
    required: true,
  }),
  template: f(3, core("PodTemplateSpec"), "The Pods to create; their restartPolicy must be Always.", { required: true }),
  strategy: f(4, apps("DeploymentStrategy"), "How old Pods are replaced by new ones.", { patchStrategy: "retainKeys" }),
  minReadySeconds: f(5, s.int32(), "Seconds a new Pod must stay ready before it counts as available; 0 when unset."),
  revisionHistoryLimit: f(6, s.int32(), "How many old ReplicaSets to keep for rollback; 10 when unset."),
  paused: f(7, s.bool(), "When true, changes to the template are not rolled out."),
  progressDeadlineSeconds: f(9, s.int32(), "Seconds a rollout may go without progress before it is reported as failed; 600 when unset."),
});

const deploymentStatus = type(`${APPS_V1}.DeploymentStatus`, "The observed state of a Deployment.", {
  observedGeneration: f(1, s.int64(), "The generation the controller last acted on."),
  replicas: f(2, s.int32(), "Non-terminating Pods selected by this Deployment."),
  updatedReplicas: f(3, s.int32(), "Non-terminating Pods that run the current template."),
  readyReplicas: f(7, s.int32(), "Non-terminating Pods with a Ready condition."),
  availableReplicas: f(4, s.int32(), "Non-terminating Pods ready for at least minReadySeconds."),
  unavailableReplicas: f(5, s.int32(), "Pods still missing for the Deployment to be fully available."),
  terminatingReplicas: f(9, s.int32(), "Selected Pods that are terminating (alpha)."),
  conditions: conditions(6, "DeploymentCondition", "The latest observations of the Deployment's state."),
  collisionCount: f(8, s.int32(), "Hash collisions seen when naming the newest ReplicaSet."),
});

const deploymentStrategy = type(`${APPS_V1}.DeploymentStrategy`, "How a Deployment replaces its Pods.", {
  type: f(1, s.string({ enum: ["Recreate", "RollingUpdate"] }), "Recreate or RollingUpdate (the default)."),
  rollingUpdate: f(2, apps("RollingUpdateDeployment"), "Rolling update limits; only with type RollingUpdate."),
});

const rollingUpdateDeployment = type(`${APPS_V1}.RollingUpdateDeployment`, "Limits of a Deployment's rolling update.", {
  maxUnavailable: f(1, s.intOrString(), "Pods that may be unavailable during the update, a number or a percentage (rounded down); 25% when unset."),
  maxSurge: f(2, s.intOrString(), "Pods that may exist above the desired count, a number or a percentage (rounded up); 25% when unset."),
});

const deploymentCondition = type(`${APPS_V1}.DeploymentCondition`, "One observed condition of a Deployment.", {
  type: f(1, s.string(), "The kind of condition (Available, Progressing, ReplicaFailure).", { required: true }),
  status: f(2, s.string(), "True, False or Unknown.", { required: true }),
  lastUpdateTime: f(6, s.time(), "When the condition was last updated."),
  lastTransitionTime: f(7, s.time(), "When the status last changed."),
  reason: f(4, s.string(), "A one-word, CamelCase reason for the last change."),
  message: f(5, s.string(), "A human-readable explanation of the last change."),
});

// ---- ReplicaSet ----

const replicaSet = kindWithSpec("ReplicaSet", "Keeps a given number of identical Pods running.");

const replicaSetSpec = type(`${APPS_V1}.ReplicaSetSpec`, "The desired state of a ReplicaSet.", {
  replicas: f(1, s.int32(), "How many Pods to run; 1 when unset."),
  minReadySeconds: f(4, s.int32(), "Seconds a new Pod must stay ready before it counts as available."),
  selector: f(2, meta("LabelSelector"), "Which Pods this ReplicaSet counts; must match the template's labels.", { required: true }),
  template: f(3, core("PodTemplateSpec"), "The Pods to create when too few exist."),
});

const replicaSetStatus = type(`${APPS_V1}.ReplicaSetStatus`, "The observed state of a ReplicaSet.", {
  replicas: f(1, s.int32(), "Non-terminating Pods last observed.", { required: true }),
  fullyLabeledReplicas: f(2, s.int32(), "Non-terminating Pods whose labels match the template's."),
  readyReplicas: f(4, s.int32(), "Non-terminating Pods with a Ready condition."),
  availableReplicas: f(5, s.int32(), "Non-terminating Pods ready for at least minReadySeconds."),
  terminatingReplicas: f(7, s.int32(), "Pods of this ReplicaSet that are terminating (alpha)."),
  observedGeneration: f(3, s.int64(), "The generation the controller last acted on."),
  conditions: conditions(6, "ReplicaSetCondition", "The latest observations of the ReplicaSet's state."),
});

// ---- DaemonSet ----

const daemonSet = kindWithSpec("DaemonSet", "Runs one copy of a Pod on every eligible node.");

const daemonSetSpec = type(`${APPS_V1}.DaemonSetSpec`, "The desired state of a DaemonSet.", {
  selector: f(1, meta("LabelSelector"), "Which Pods belong to this DaemonSet; must match the template's labels.", { required: true }),
  template: f(2, core("PodTemplateSpec"), "The Pod to run on each node; its restartPolicy must be Always.", { required: true }),
  updateStrategy: f(3, apps("DaemonSetUpdateStrategy"), "How Pods are replaced when the template changes."),
  minReadySeconds: f(4, s.int32(), "Seconds a new Pod must stay ready before it counts as available."),
  revisionHistoryLimit: f(6, s.int32(), "How many old revisions to keep for rollback; 10 when unset."),
});

const daemonSetStatus = type(`${APPS_V1}.DaemonSetStatus`, "The observed state of a DaemonSet.", {
  currentNumberScheduled: f(1, s.int32(), "Nodes that run at least one daemon Pod and should.", { required: true }),
  numberMisscheduled: f(2, s.int32(), "Nodes that run the daemon Pod but should not.", { required: true }),
  desiredNumberScheduled: f(3, s.int32(), "Nodes that should run the daemon Pod.", { required: true }),
  numberReady: f(4, s.int32(), "Nodes that should run the daemon Pod and run one that is Ready.", { required: true }),
  observedGeneration: f(5, s.int64(), "The generation the controller last acted on."),
  updatedNumberScheduled: f(6, s.int32(), "Nodes that run the current template's Pod."),
  numberAvailable: f(7, s.int32(), "Nodes that run an available daemon Pod."),
  numberUnavailable: f(8, s.int32(), "Nodes that should run the daemon Pod but have none available."),
  collisionCount: f(9, s.int32(), "Hash collisions seen when naming the newest ControllerRevision."),
  conditions: conditions(10, "DaemonSetCondition", "The latest observations of the DaemonSet's state."),
});

const daemonSetUpdateStrategy = type(`${APPS_V1}.DaemonSetUpdateStrategy`, "How a DaemonSet replaces its Pods.", {
  type: f(1, s.string({ enum: ["OnDelete", "RollingUpdate"] }), "RollingUpdate (the default) or OnDelete."),
  rollingUpdate: f(2, apps("RollingUpdateDaemonSet"), "Rolling update limits; only with type RollingUpdate."),
});

const rollingUpdateDaemonSet = type(`${APPS_V1}.RollingUpdateDaemonSet`, "Limits of a DaemonSet's rolling update.", {
  maxUnavailable: f(1, s.intOrString(), "Daemon Pods that may be unavailable during the update, a number or a percentage (rounded up); 1 when unset."),
  maxSurge: f(2, s.intOrString(), "Nodes that may run an updated Pod beside the old one, a number or a percentage; 0 when unset."),
});

// ---- StatefulSet ----

const statefulSet = kindWithSpec("StatefulSet", "Pods with stable identities: ordinal names, stable network names and their own storage.");

const statefulSetSpec = type(`${APPS_V1}.StatefulSetSpec`, "The desired state of a StatefulSet.", {
  replicas: f(1, s.int32(), "How many Pods to run; 1 when unset."),
  selector: f(2, meta("LabelSelector"), "Which Pods belong to this StatefulSet; must match the template's labels.", { required: true }),
  template: f(3, core("PodTemplateSpec"), "The Pods to create, each named <set name>-<ordinal>.", { required: true }),
  volumeClaimTemplates: f(4, s.array(core("PersistentVolumeClaim"), { listType: "atomic" }), "Claims each Pod gets its own copy of."),
  serviceName: f(5, s.string(), "The headless Service that gives the Pods their network identity."),
  podManagementPolicy: f(6, s.string({ enum: ["OrderedReady", "Parallel"] }), "OrderedReady (the default) creates and removes Pods one at a time, in order; Parallel all at once."),
  updateStrategy: f(7, apps("StatefulSetUpdateStrategy"), "How Pods are replaced when the template changes."),
  revisionHistoryLimit: f(8, s.int32(), "How many old revisions to keep; 10 when unset."),
  minReadySeconds: f(9, s.int32(), "Seconds a new Pod must stay ready before it counts as available."),
  persistentVolumeClaimRetentionPolicy: f(10, apps("StatefulSetPersistentVolumeClaimRetentionPolicy"), "What happens to the claims when the set is deleted or scaled down."),
  ordinals: f(11, apps("StatefulSetOrdinals"), "How replica ordinals are numbered."),
});

const statefulSetStatus = type(`${APPS_V1}.StatefulSetStatus`, "The observed state of a StatefulSet.", {
  observedGeneration: f(1, s.int64(), "The generation the controller last acted on."),
  replicas: f(2, s.int32(), "Pods created by the controller.", { required: true }),
  readyReplicas: f(3, s.int32(), "Pods with a Ready condition."),
  currentReplicas: f(4, s.int32(), "Pods created from currentRevision."),
  updatedReplicas: f(5, s.int32(), "Pods created from updateRevision."),
  currentRevision: f(6, s.string(), "The revision of the Pods in [0, currentReplicas)."),
  updateRevision: f(7, s.string(), "The revision new Pods are created from."),
  collisionCount: f(9, s.int32(), "Hash collisions seen when naming the newest ControllerRevision."),
  conditions: conditions(10, "StatefulSetCondition", "The latest observations of the StatefulSet's state."),
  availableReplicas: f(11, s.int32(), "Pods ready for at least minReadySeconds."),
});

const statefulSetUpdateStrategy = type(`${APPS_V1}.StatefulSetUpdateStrategy`, "How a StatefulSet replaces its Pods.", {
  type: f(1, s.string({ enum: ["OnDelete", "RollingUpdate"] }), "RollingUpdate (the default) or OnDelete."),
  rollingUpdate: f(2, apps("RollingUpdateStatefulSetStrategy"), "Rolling update parameters; only with type RollingUpdate."),
});

const rollingUpdateStatefulSetStrategy = type(`${APPS_V1}.RollingUpdateStatefulSetStrategy`, "Parameters of a StatefulSet's rolling update.", {
  partition: f(1, s.int32(), "Only Pods with an ordinal at or above this are updated; 0 when unset."),
  maxUnavailable: f(2, s.intOrString(), "Pods that may be unavailable during the update, a number or a percentage (alpha)."),
});

const pvcRetentionPolicy = type(
  `${APPS_V1}.StatefulSetPersistentVolumeClaimRetentionPolicy`,
  "What happens to the claims made from volumeClaimTemplates.",
  {
    whenDeleted: f(1, s.string(), "Retain (the default) or Delete the claims when the StatefulSet is deleted."),
    whenScaled: f(2, s.string(), "Retain (the default) or Delete the claims of Pods removed by a scale-down."),
  },
);

const statefulSetOrdinals = type(`${APPS_V1}.StatefulSetOrdinals`, "How a StatefulSet numbers its replicas.", {
  start: f(1, s.int32(), "The first ordinal; replicas are numbered [start, start+replicas). 0 when unset."),
});

// ---- ControllerRevision ----

const controllerRevision = type(
  `${APPS_V1}.ControllerRevision`,
  "An immutable snapshot of a controller's state, kept by DaemonSets and StatefulSets for updates and rollback.",
  {
    metadata: f(1, meta("ObjectMeta"), "Standard object metadata."),
    data: f(2, s.rawExtension(), "The serialized state."),
    revision: f(3, s.int64(), "Which revision of the state this is.", { required: true }),
  },
);

export const APPS_TYPES: readonly TypeDef[] = [
  deployment,
  deploymentSpec,
  deploymentStatus,
  deploymentStrategy,
  rollingUpdateDeployment,
  deploymentCondition,
  listOf(APPS_V1, "Deployment", "A list of Deployments."),
  replicaSet,
  replicaSetSpec,
  replicaSetStatus,
  plainCondition("ReplicaSet", "ReplicaSet"),
  listOf(APPS_V1, "ReplicaSet", "A list of ReplicaSets."),
  daemonSet,
  daemonSetSpec,
  daemonSetStatus,
  daemonSetUpdateStrategy,
  rollingUpdateDaemonSet,
  plainCondition("DaemonSet", "DaemonSet"),
  listOf(APPS_V1, "DaemonSet", "A list of DaemonSets."),
  statefulSet,
  statefulSetSpec,
  statefulSetStatus,
  statefulSetUpdateStrategy,
  rollingUpdateStatefulSetStrategy,
  pvcRetentionPolicy,
  statefulSetOrdinals,
  plainCondition("StatefulSet", "StatefulSet"),
  listOf(APPS_V1, "StatefulSet", "A list of StatefulSets."),
  controllerRevision,
  listOf(APPS_V1, "ControllerRevision", "A list of ControllerRevisions."),
];
