// Table and metadata-only representations (seed 000, "Table representation",
// "Metadata-only representation"): the kind's columns from its declaration
// (default: Name and Created At), rows with the object as
// PartialObjectMetadata unless includeObject says otherwise.

import type { ResourceDefinition, TableColumn } from "../../api/resource.js";
import type { ApiObject } from "../../machinery/index.js";

const DEFAULT_COLUMNS: readonly TableColumn[] = [
  { name: "Name", type: "string", format: "name", description: "Name must be unique within a namespace.", priority: 0 },
  { name: "Created At", type: "date", description: "CreationTimestamp is the time the object was created.", priority: 0 },
];

export type IncludeObject = "None" | "Metadata" | "Object";

export function partialObjectMetadata(obj: ApiObject, group: string, version: string): ApiObject {
  return { kind: "PartialObjectMetadata", apiVersion: `${group}/${version}`, metadata: obj.metadata };
}

export function tableColumns(def: ResourceDefinition): readonly TableColumn[] {
  return def.table?.columns ?? DEFAULT_COLUMNS;
}

export function tableRow(def: ResourceDefinition, obj: ApiObject, options: { now: Date; include: IncludeObject; group: string; version: string }): unknown {
  const cells = def.table !== undefined ? def.table.cells(obj, options.now) : [obj.metadata.name ?? "", obj.metadata.creationTimestamp ?? ""];
  const row: Record<string, unknown> = { cells };
  if (options.include === "Metadata") row["object"] = partialObjectMetadata(obj, options.group, options.version);
  else if (options.include === "Object") row["object"] = obj;
  return row;
}

export function table(
  def: ResourceDefinition,
  objects: readonly ApiObject[],
  options: { now: Date; include: IncludeObject; group: string; version: string; listMeta?: object; noHeaders?: boolean },
): Record<string, unknown> {
  return {
    kind: "Table",
    apiVersion: `${options.group}/${options.version}`,
    metadata: options.listMeta ?? {},
    columnDefinitions: options.noHeaders ? [] : tableColumns(def).map((c) => ({ ...c, format: c.format ?? "" })),
    rows: objects.map((o) => tableRow(def, o, options)),
  };
}
