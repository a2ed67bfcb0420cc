// The PersistentVolumeClaim object type, which StatefulSet volumeClaimTemplates
// embed. core/v1 declares the claim's spec but (so far) not the claim itself,
// so apps declares the rest here, with field numbers from
// k8s.io/api/core/v1/generated.proto. Registered only where core has not.

import { f, s, type, type SchemaRegistry, type TypeDef } from "../../machinery/schema.js";
import { CORE_V1, META_V1 } from "./schemas.js";

const core = (name: string) => s.ref(`${CORE_V1}.${name}`);

export const PVC_TYPES: readonly TypeDef[] = [
  type(`${CORE_V1}.PersistentVolumeClaim`, "A user's request for storage, bound to a PersistentVolume.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    spec: f(2, core("PersistentVolumeClaimSpec"), "The storage requested."),
    status: f(3, core("PersistentVolumeClaimStatus"), "The claim's binding and size as last observed."),
  }),
  type(`${CORE_V1}.PersistentVolumeClaimStatus`, "The observed state of a claim.", {
    phase: f(1, s.string({ enum: ["Bound", "Lost", "Pending"] }), "Pending, Bound or Lost."),
    accessModes: f(2, s.array(s.string(), { listType: "atomic" }), "The access modes of the bound volume."),
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
  type(`${CORE_V1}.PersistentVolumeClaimCondition`, "One observed condition of a claim.", {
    type: f(1, s.string(), "The kind of condition.", { required: true }),
    status: f(2, s.string(), "True, False or Unknown.", { required: true }),
    lastProbeTime: f(3, s.time(), "When the condition was last checked."),
    lastTransitionTime: f(4, s.time(), "When the status last changed."),
    reason: f(5, s.string(), "A one-word, CamelCase reason for the last change."),
    message: f(6, s.string(), "A human-readable explanation of the last change."),
  }),
  type(`${CORE_V1}.ModifyVolumeStatus`, "The state of a ControllerModifyVolume operation.", {
    targetVolumeAttributesClassName: f(1, s.string(), "The VolumeAttributesClass being applied."),
    status: f(2, s.string(), "Pending, InProgress or Infeasible.", { required: true }),
  }),
];

/** Add the claim types core has not declared (core may grow them; it must then register first). */
export function registerPvcSchemas(registry: SchemaRegistry): void {
  registry.add(...PVC_TYPES.filter((def) => registry.get(def.name) === undefined));
}
