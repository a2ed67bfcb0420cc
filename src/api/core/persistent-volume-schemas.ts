// PersistentVolume and PersistentVolumeClaim of core/v1 as schema data, with
// field numbers from k8s.io/api/core/v1/generated.proto (v1.33 field set). The
// claim's spec and the volume sources pods use live in schemas.ts; this file
// adds the two kinds, the persistent volume sources served (hostPath, nfs,
// local, csi) and node affinity. In-tree cloud sources are left out, as for pods.

import { f, s, type, type Field, type SchemaRegistry, type TypeDef } from "../../machinery/schema.js";
import { META_V1, probedConditionFields } from "../meta/schemas.js";
import { CORE_V1, listOf } from "./schemas.js";

const core = (name: string) => s.ref(`${CORE_V1}.${name}`);
const t = (name: string, description: string, fields: Record<string, Field>): TypeDef => type(`${CORE_V1}.${name}`, description, fields);
const atomic = (items: ReturnType<typeof s.string>) => s.array(items, { listType: "atomic" });

export const PERSISTENT_VOLUME_TYPES: readonly TypeDef[] = [
  t("PersistentVolume", "A piece of storage in the cluster, provisioned by an administrator or dynamically.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    spec: f(2, core("PersistentVolumeSpec"), "The volume's capacity, source and binding."),
    status: f(3, core("PersistentVolumeStatus"), "The volume's phase as last observed."),
  }),
  t("PersistentVolumeSpec", "What a persistent volume offers.", {
    capacity: f(1, s.map(s.quantity()), "The volume's size: storage is the one key."),
    // PersistentVolumeSource is embedded (Go) at field 2.
    hostPath: f(3, core("HostPathVolumeSource"), "A directory on the host (single-node clusters and tests).", { embeddedIn: 2 }),
    nfs: f(5, core("NFSVolumeSource"), "An NFS export.", { embeddedIn: 2 }),
    local: f(20, core("LocalVolumeSource"), "A local disk or directory; needs nodeAffinity.", { embeddedIn: 2 }),
    csi: f(22, core("CSIPersistentVolumeSource"), "A volume of an external CSI driver.", { embeddedIn: 2 }),
    accessModes: f(3, atomic(s.string()), "ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod."),
    claimRef: f(4, core("ObjectReference"), "The claim bound to this volume (both sides of the bind)."),
    persistentVolumeReclaimPolicy: f(5, s.string({ enum: ["Delete", "Recycle", "Retain"] }), "What happens when the claim is released: Retain (default for manual volumes) or Delete.", { default: "Retain" }),
    storageClassName: f(6, s.string(), "The StorageClass this volume belongs to; empty: no class."),
    mountOptions: f(7, atomic(s.string()), "Mount options, not validated."),
    volumeMode: f(8, s.string({ enum: ["Block", "Filesystem"] }), "Filesystem (default) or Block.", { default: "Filesystem" }),
    nodeAffinity: f(9, core("VolumeNodeAffinity"), "The nodes this volume can be reached from."),
    volumeAttributesClassName: f(10, s.string(), "The VolumeAttributesClass of this volume."),
  }),
  t("PersistentVolumeStatus", "The observed state of a volume.", {
    phase: f(1, s.string({ enum: ["Available", "Bound", "Failed", "Pending", "Released"] }), "Pending, Available, Bound, Released or Failed."),
    message: f(2, s.string(), "Why the volume is in this phase."),
    reason: f(3, s.string(), "A one-word reason for a failure."),
    lastPhaseTransitionTime: f(4, s.time(), "When the phase last changed."),
  }),
  t("LocalVolumeSource", "A local disk, partition or directory.", {
    path: f(1, s.string(), "Full path on the node.", { required: true }),
    fsType: f(2, s.string(), "Filesystem type of a block device."),
  }),
  t("CSIPersistentVolumeSource", "A volume of an external CSI driver.", {
    driver: f(1, s.string(), "Name of the driver.", { required: true }),
    volumeHandle: f(2, s.string(), "The driver's id of the volume.", { required: true }),
    readOnly: f(3, s.bool(), "Publish read-only."),
    fsType: f(4, s.string(), "Filesystem type."),
    volumeAttributes: f(5, s.map(s.string()), "Driver-specific attributes."),
    controllerPublishSecretRef: f(6, core("SecretReference"), "Secret for ControllerPublishVolume."),
    nodeStageSecretRef: f(7, core("SecretReference"), "Secret for NodeStageVolume."),
    nodePublishSecretRef: f(8, core("SecretReference"), "Secret for NodePublishVolume."),
    controllerExpandSecretRef: f(9, core("SecretReference"), "Secret for ControllerExpandVolume."),
    nodeExpandSecretRef: f(10, core("SecretReference"), "Secret for NodeExpandVolume."),
  }),
  t("SecretReference", "A secret in any namespace.", {
    name: f(1, s.string(), "Name of the secret."),
    namespace: f(2, s.string(), "Namespace of the secret."),
  }),
  t("VolumeNodeAffinity", "The nodes a volume can be reached from.", {
    required: f(1, core("NodeSelector"), "Nodes the volume's pods must run on."),
  }),
  t("PersistentVolumeClaim", "A user's request for storage, bound to a PersistentVolume.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    spec: f(2, core("PersistentVolumeClaimSpec"), "The storage requested."),
    status: f(3, core("PersistentVolumeClaimStatus"), "The claim's binding and size as last observed."),
  }),
  t("PersistentVolumeClaimStatus", "The observed state of a claim.", {
    phase: f(1, s.string({ enum: ["Bound", "Lost", "Pending"] }), "Pending, Bound or Lost."),
    accessModes: f(2, atomic(s.string()), "The access modes of the bound volume."),
    capacity: f(3, s.map(s.quantity()), "The size of the bound volume."),
    conditions: f(4, s.array(core("PersistentVolumeClaimCondition"), { listType: "map", listMapKeys: ["type"] }), "Observations such as an ongoing resize.", {
      patchStrategy: "merge",
      patchMergeKey: "type",
    }),
    allocatedResources: f(5, s.map(s.quantity()), "Capacity allocated to the claim, which may exceed the request during an expansion."),
    allocatedResourceStatuses: f(7, s.map(s.string()), "Per resource, the state of a resize in progress."),
    currentVolumeAttributesClassName: f(8, s.string(), "The VolumeAttributesClass the claim uses now."),
    modifyVolumeStatus: f(9, core("ModifyVolumeStatus"), "The state of a volume modification in progress."),
  }),
  t("PersistentVolumeClaimCondition", "One observed condition of a claim.", probedConditionFields),
  t("ModifyVolumeStatus", "The state of a ControllerModifyVolume operation.", {
    targetVolumeAttributesClassName: f(1, s.string(), "The VolumeAttributesClass being applied."),
    status: f(2, s.string(), "Pending, InProgress or Infeasible.", { required: true }),
  }),
  t("TopologySelectorTerm", "A topology requirement (StorageClass allowedTopologies).", {
    matchLabelExpressions: f(1, s.array(core("TopologySelectorLabelRequirement"), { listType: "atomic" }), "Label requirements, ANDed."),
  }),
  t("TopologySelectorLabelRequirement", "One topology label and its allowed values.", {
    key: f(1, s.string(), "The label key.", { required: true }),
    values: f(2, atomic(s.string()), "Allowed values.", { required: true }),
  }),
  listOf(CORE_V1, "PersistentVolume", "A list of persistent volumes."),
  listOf(CORE_V1, "PersistentVolumeClaim", "A list of persistent volume claims."),
];

/** Adds the types not yet registered (apps' StatefulSet claim templates ask for the claim too). */
export function registerPersistentVolumeSchemas(registry: SchemaRegistry): void {
  registry.add(...PERSISTENT_VOLUME_TYPES.filter((def) => registry.get(def.name) === undefined));
}
