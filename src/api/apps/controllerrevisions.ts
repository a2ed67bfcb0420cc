// controllerrevisions (apps/v1): immutable snapshots DaemonSets and
// StatefulSets keep for rollback. Data is required and never changes; the
// table names the owning controller as `kind.group/name`.

import { field, parseGroupVersion, type FieldError } from "../../machinery/index.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { APPS_V1 } from "./schemas.js";
import type { ControllerRevision } from "./types.js";
import { immutable, nonnegative } from "./workload.js";

export function validateControllerRevision(obj: ControllerRevision): FieldError[] {
  const errs: FieldError[] = [];
  if (obj.data === undefined || obj.data === null) errs.push(field.required("data", "data is mandatory"));
  errs.push(...nonnegative(obj.revision, "revision"));
  return errs;
}

/** upstream's formatResourceName with kind: lower-cased `kind.group/name` of the controller owner, "<none>" without one. */
export function controllerCell(obj: ControllerRevision): string {
  const ref = obj.metadata.ownerReferences?.find((r) => r.controller === true);
  if (ref === undefined) return "<none>";
  let group = "";
  try {
    group = parseGroupVersion(ref.apiVersion ?? "").group;
  } catch {
    // an unparsable apiVersion still names the kind
  }
  const groupKind = group === "" ? ref.kind : `${ref.kind}.${group}`;
  return `${groupKind.toLowerCase()}/${ref.name}`;
}

export const controllerrevisions: ResourceDefinition = defineResource<ControllerRevision>({
  group: "apps",
  versions: ["v1"],
  resource: "controllerrevisions",
  singular: "controllerrevision",
  kind: "ControllerRevision",
  namespaced: true,
  schema: `${APPS_V1}.ControllerRevision`,
  validate: validateControllerRevision,
  validateUpdate: (obj, old) => [...validateControllerRevision(obj), ...immutable(obj.data, old.data, "data")],
  table: nameAgeTable<ControllerRevision>({
    columns: [
      { name: "Controller", type: "string", description: "Controller of the object", priority: 0 },
      { name: "Revision", type: "integer", description: "Revision indicates the revision of the state represented by Data.", priority: 0 },
    ],
    cells: (obj) => [controllerCell(obj), obj.revision ?? 0],
  }),
});
