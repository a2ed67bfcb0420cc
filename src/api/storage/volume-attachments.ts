// volumeattachments (storage.<suffix>/v1, cluster-scoped, status subresource):
// the request to attach a volume to a node. Stored and validated as upstream
// (the spec is immutable); orch's own volumes (hostPath, local) need no attach
// step, so no controller acts on them.

import { field, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { jsonEqual } from "../core/validation.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { status } from "../subresources/index.js";
import { nameAgeTable } from "../table-format.js";
import { STORAGE_V1 } from "./schemas.js";
import type { VolumeAttachment } from "./types.js";

const ONE_SOURCE = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";

function validate(va: VolumeAttachment): FieldError[] {
  const spec = va.spec ?? {};
  const errs: FieldError[] = [];
  if (!spec.attacher) errs.push(field.required("spec.attacher", ""));
  if (!spec.nodeName) errs.push(field.required("spec.nodeName", ""));
  const source = spec.source ?? {};
  const byName = source.persistentVolumeName != null;
  const inline = source.inlineVolumeSpec != null;
  if (!byName && !inline) errs.push(field.required("spec.source", ONE_SOURCE));
  else if (byName && inline) errs.push(field.forbidden("spec.source", ONE_SOURCE));
  else if (byName && source.persistentVolumeName === "") errs.push(field.required("spec.source.persistentVolumeName", "must specify non empty persistentVolumeName"));
  return errs;
}

export function volumeAttachments(naming: Naming): ResourceDefinition {
  return defineResource<VolumeAttachment>({
    group: naming.storageGroup,
    versions: ["v1"],
    resource: "volumeattachments",
    singular: "volumeattachment",
    kind: "VolumeAttachment",
    namespaced: false,
    schema: `${STORAGE_V1}.VolumeAttachment`,
    subresources: [status({ validate: () => [], metadata: [] })], // upstream: ResetObjectMetaForStatus
    prepareForCreate(va) {
      delete va.status;
    },
    validate,
    validateUpdate(va, old) {
      const errs = validate(va);
      if (!jsonEqual(va.spec ?? {}, old.spec ?? {})) errs.push(field.invalid("spec", va.spec, "field is immutable"));
      return errs;
    },
    table: nameAgeTable<VolumeAttachment>({
      columns: [
        { name: "Attacher", type: "string", description: "The attacher (CSI driver).", priority: 0 },
        { name: "PV", type: "string", description: "The persistent volume.", priority: 0 },
        { name: "Node", type: "string", description: "The node.", priority: 0 },
        { name: "Attached", type: "boolean", description: "Whether the volume is attached.", priority: 0 },
      ],
      cells: (va) => [va.spec?.attacher ?? "", va.spec?.source?.persistentVolumeName ?? "", va.spec?.nodeName ?? "", va.status?.attached ?? false],
    }),
  });
}
