// storageclasses (storage.<suffix>/v1, cluster-scoped, `sc`): upstream's
// defaults (reclaimPolicy Delete, volumeBindingMode Immediate), its
// ValidateStorageClass / ValidateStorageClassUpdate messages, and its table,
// where the default class (annotation `storageclass.<domain>/is-default-class:
// "true"`) shows as "NAME (default)".

import { field, isQualifiedName, type FieldError } from "../../machinery/index.js";
import { storageKeys, type Naming } from "../../machinery/naming.js";
import { jsonEqual } from "../core/validation.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { AGE_COLUMN, formatAge, NAME_COLUMN } from "../table-format.js";
import { STORAGE_V1 } from "./schemas.js";
import type { StorageClass } from "./types.js";

const RECLAIM_POLICIES = ["Delete", "Retain"];
export const BINDING_MODES = ["Immediate", "WaitForFirstConsumer"];
/** upstream's maxProvisionerParameterSize (256 KiB) and maxProvisionerParameterLen (512 entries). */
const MAX_PARAMETERS_BYTES = 256 * 1024;
const MAX_PARAMETERS = 512;

/** Whether the class is marked as the default (the annotation's value is exactly "true", as upstream). */
export function isDefaultClass(sc: StorageClass, naming: Naming): boolean {
  return sc.metadata.annotations?.[storageKeys(naming).defaultClass] === "true";
}

function validate(sc: StorageClass): FieldError[] {
  const errs: FieldError[] = [];
  if (!sc.provisioner) errs.push(field.required("provisioner", ""));
  else for (const msg of isQualifiedName(sc.provisioner.toLowerCase())) errs.push(field.invalid("provisioner", sc.provisioner, msg));
  const params = Object.entries(sc.parameters ?? {});
  let size = 0;
  for (const [k, v] of params) {
    if (k.length === 0) errs.push(field.invalid("parameters", k, "field can not be empty."));
    size += k.length + String(v).length;
  }
  if (params.length > MAX_PARAMETERS) errs.push(field.tooLong("parameters", MAX_PARAMETERS));
  if (size > MAX_PARAMETERS_BYTES) errs.push(field.tooLong("parameters", MAX_PARAMETERS_BYTES));
  if (sc.reclaimPolicy && !RECLAIM_POLICIES.includes(sc.reclaimPolicy)) errs.push(field.notSupported("reclaimPolicy", sc.reclaimPolicy, RECLAIM_POLICIES));
  if (!sc.volumeBindingMode) errs.push(field.required("volumeBindingMode", ""));
  else if (!BINDING_MODES.includes(sc.volumeBindingMode)) errs.push(field.notSupported("volumeBindingMode", sc.volumeBindingMode, BINDING_MODES));
  (sc.allowedTopologies ?? []).forEach((term, i) => {
    const exprs = term?.matchLabelExpressions ?? [];
    if (exprs.length === 0) errs.push(field.required(`allowedTopologies[${i}].matchLabelExpressions`, "must have at least one label requirement"));
    exprs.forEach((r, j) => {
      if ((r.values ?? []).length === 0) errs.push(field.required(`allowedTopologies[${i}].matchLabelExpressions[${j}].values`, "must specify as least one value"));
    });
  });
  return errs;
}

export function storageClasses(naming: Naming): ResourceDefinition {
  return defineResource<StorageClass>({
    group: naming.storageGroup,
    versions: ["v1"],
    resource: "storageclasses",
    singular: "storageclass",
    kind: "StorageClass",
    namespaced: false,
    shortNames: ["sc"],
    schema: `${STORAGE_V1}.StorageClass`,
    defaults(sc) {
      sc.reclaimPolicy ||= "Delete";
      sc.volumeBindingMode ||= "Immediate";
    },
    validate,
    validateUpdate(sc, old) {
      const errs = validate(sc);
      if (!jsonEqual(sc.parameters ?? {}, old.parameters ?? {})) errs.push(field.forbidden("parameters", "updates to parameters are forbidden."));
      if (sc.provisioner !== old.provisioner) errs.push(field.forbidden("provisioner", "updates to provisioner are forbidden."));
      if (sc.reclaimPolicy !== old.reclaimPolicy) errs.push(field.forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."));
      if (sc.volumeBindingMode !== old.volumeBindingMode) errs.push(field.immutable("volumeBindingMode", sc.volumeBindingMode));
      return errs;
    },
    table: {
      columns: [
        NAME_COLUMN,
        { name: "Provisioner", type: "string", description: "The provisioner that makes this class's volumes.", priority: 0 },
        { name: "ReclaimPolicy", type: "string", description: "What happens to a volume when its claim is released.", priority: 0 },
        { name: "VolumeBindingMode", type: "string", description: "When claims are bound and provisioned.", priority: 0 },
        { name: "AllowVolumeExpansion", type: "string", description: "Whether claims may grow.", priority: 0 },
        AGE_COLUMN,
      ],
      cells: (sc, now) => [
        isDefaultClass(sc, naming) ? `${sc.metadata.name} (default)` : sc.metadata.name ?? "",
        sc.provisioner ?? "",
        sc.reclaimPolicy ?? "Delete",
        sc.volumeBindingMode ?? "Immediate",
        sc.allowVolumeExpansion === true,
        formatAge(sc.metadata.creationTimestamp, now),
      ],
    },
  });
}
