// The storage.<suffix> types as schema data (definition names keep upstream's
// `io.k8s.api.storage.*` whatever the suffix). Protobuf field numbers from
// k8s.io/api/storage/v1/generated.proto (v1.33 field set); CSIStorageCapacity
// also in v1beta1 (the same fields), which upstream's v1.23 scheduler lists.

import { f, s, type, type Field, type Schema, type TypeDef } from "../../machinery/schema.js";
import { CORE_V1, listOf } from "../core/index.js";
import { META_V1 } from "../meta/schemas.js";

export const STORAGE_V1 = "io.k8s.api.storage.v1";
export const STORAGE_V1BETA1 = "io.k8s.api.storage.v1beta1";

const st = (name: string): Schema => s.ref(`${STORAGE_V1}.${name}`);
const core = (name: string): Schema => s.ref(`${CORE_V1}.${name}`);
const t = (name: string, description: string, fields: Record<string, Field>): TypeDef => type(`${STORAGE_V1}.${name}`, description, fields);
const atomic = (items: Schema): Schema => s.array(items, { listType: "atomic" });
const metadata = f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata.");

function capacityTypes(pkg: string): TypeDef[] {
  return [
    type(`${pkg}.CSIStorageCapacity`, "The storage capacity of one storage class in one topology segment, as a CSI driver reports it.", {
      metadata,
      nodeTopology: f(2, s.ref(`${META_V1}.LabelSelector`), "The nodes that can reach this capacity; none: no node."),
      storageClassName: f(3, s.string(), "The StorageClass this capacity is for.", { required: true }),
      capacity: f(4, s.quantity(), "The space available for new volumes."),
      maximumVolumeSize: f(5, s.quantity(), "The largest volume that can be made."),
    }),
    listOf(pkg, "CSIStorageCapacity", "A list of CSIStorageCapacity objects."),
  ];
}

export const STORAGE_TYPES: readonly TypeDef[] = [
  t("StorageClass", "A class of storage: the provisioner that makes its volumes and their parameters.", {
    metadata,
    provisioner: f(2, s.string(), "The volume plugin or external provisioner that makes volumes of this class.", { required: true }),
    parameters: f(3, s.map(s.string()), "Parameters for the provisioner."),
    reclaimPolicy: f(4, s.string({ enum: ["Delete", "Recycle", "Retain"] }), "The reclaim policy of volumes made for this class: Delete (default) or Retain."),
    mountOptions: f(5, atomic(s.string()), "Mount options of the volumes made, not validated."),
    allowVolumeExpansion: f(6, s.bool(), "Whether claims of this class may grow."),
    volumeBindingMode: f(7, s.string({ enum: ["Immediate", "WaitForFirstConsumer"] }), "Immediate (default), or WaitForFirstConsumer: bind once a pod using the claim is scheduled."),
    allowedTopologies: f(8, atomic(core("TopologySelectorTerm")), "Where volumes may be provisioned; anywhere when empty."),
  }),
  t("CSIDriver", "A CSI volume driver deployed on the cluster and how it is to be called.", {
    metadata,
    spec: f(2, st("CSIDriverSpec"), "The driver's behaviour.", { required: true }),
  }),
  t("CSIDriverSpec", "How a CSI driver is called.", {
    attachRequired: f(1, s.bool(), "Whether volumes need an attach step (VolumeAttachment).", { default: true }),
    podInfoOnMount: f(2, s.bool(), "Whether mounts get the pod's name, namespace, uid and service account.", { default: false }),
    volumeLifecycleModes: f(3, s.array(s.string(), { listType: "set" }), "Persistent and/or Ephemeral."),
    storageCapacity: f(4, s.bool(), "Whether the driver reports CSIStorageCapacity for the scheduler.", { default: false }),
    fsGroupPolicy: f(5, s.string(), "Whether volumes support ownership changes: ReadWriteOnceWithFSType (default), File or None."),
    tokenRequests: f(6, atomic(st("TokenRequest")), "Service account tokens passed to NodePublishVolume."),
    requiresRepublish: f(7, s.bool(), "Whether NodePublishVolume is called again periodically.", { default: false }),
    seLinuxMount: f(8, s.bool(), "Whether the driver supports the -o context mount option."),
    nodeAllocatableUpdatePeriodSeconds: f(9, s.int64(), "How often the node's allocatable volume count is refreshed."),
  }),
  t("TokenRequest", "A service account token for a CSI driver.", {
    audience: f(1, s.string(), "The token's audience.", { required: true }),
    expirationSeconds: f(2, s.int64(), "The token's validity."),
  }),
  t("CSINode", "The CSI drivers installed on a node (named after the node).", {
    metadata,
    spec: f(2, st("CSINodeSpec"), "The node's drivers.", { required: true }),
  }),
  t("CSINodeSpec", "The CSI drivers of a node.", {
    drivers: f(1, s.array(st("CSINodeDriver"), { listType: "map", listMapKeys: ["name"] }), "The drivers on the node.", {
      required: true,
      patchStrategy: "merge",
      patchMergeKey: "name",
    }),
  }),
  t("CSINodeDriver", "One CSI driver on a node.", {
    name: f(1, s.string(), "The driver's name.", { required: true }),
    nodeID: f(2, s.string(), "The node's id as the driver knows it.", { required: true }),
    topologyKeys: f(3, atomic(s.string()), "Topology label keys the driver uses."),
    allocatable: f(4, st("VolumeNodeResources"), "Volumes of this driver the node can take."),
  }),
  t("VolumeNodeResources", "Volume limits of a node.", {
    count: f(1, s.int32(), "How many volumes of the driver the node can take."),
  }),
  t("VolumeAttachment", "The request to attach a volume to a node, or detach it.", {
    metadata,
    spec: f(2, st("VolumeAttachmentSpec"), "What to attach where.", { required: true }),
    status: f(3, st("VolumeAttachmentStatus"), "Whether it is attached; written by the attacher."),
  }),
  t("VolumeAttachmentSpec", "What to attach where.", {
    attacher: f(1, s.string(), "The attacher's name (the CSI driver).", { required: true }),
    source: f(2, st("VolumeAttachmentSource"), "The volume.", { required: true }),
    nodeName: f(3, s.string(), "The node to attach to.", { required: true }),
  }),
  t("VolumeAttachmentSource", "A persistent volume by name, or an inline volume spec.", {
    persistentVolumeName: f(1, s.string(), "The persistent volume."),
    inlineVolumeSpec: f(2, core("PersistentVolumeSpec"), "An inline volume's spec (migrated in-tree volumes)."),
  }),
  t("VolumeAttachmentStatus", "The attach state.", {
    attached: f(1, s.bool(), "Whether the volume is attached.", { required: true }),
    attachmentMetadata: f(2, s.map(s.string()), "What the attacher returned for the mount step."),
    attachError: f(3, st("VolumeError"), "The last attach error."),
    detachError: f(4, st("VolumeError"), "The last detach error."),
  }),
  t("VolumeError", "An error of an attach or detach.", {
    time: f(1, s.time(), "When it happened."),
    message: f(2, s.string(), "What happened."),
    errorCode: f(3, s.int32(), "The gRPC error code, if any."),
  }),
  listOf(STORAGE_V1, "StorageClass", "A list of StorageClasses."),
  listOf(STORAGE_V1, "CSIDriver", "A list of CSIDrivers."),
  listOf(STORAGE_V1, "CSINode", "A list of CSINodes."),
  listOf(STORAGE_V1, "VolumeAttachment", "A list of VolumeAttachments."),
  ...capacityTypes(STORAGE_V1),
  ...capacityTypes(STORAGE_V1BETA1),
];
