// The one walk over the registry that both OpenAPI documents are drawn from
// (v2: one Swagger 2.0 document; v3: one document per group-version). Per
// group-version it gathers the schemas the kinds reach, with the group,
// version and kind of each kind and list type, and the operations of each
// resource path. Schemas here are JSON Schema with references written as
// `{ "$ref": "<type name>" }` (no prefix) and the well-known types left as
// references: each renderer writes references and well-known types its way.

import { ALL_VERBS, schemaOf as kindSchemaOf, type ResourceDefinition } from "../../../api/resource.js";
import { isWellKnown, type Field, type Schema } from "../../../machinery/schema.js";
import type { ApiRegistry } from "../../api-registry.js";
import { SUBRESOURCE_HANDLERS } from "../subresources/index.js";
import { customSchemaName, customSchemas, TYPE_META_PROPERTIES } from "./custom.js";

export type Json = Record<string, unknown>;

export interface Gvk {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface Parameter {
  readonly name: string;
  readonly in: "path" | "query";
  readonly description: string;
  readonly type: "string" | "boolean" | "integer";
  readonly required?: boolean;
}

export interface Operation {
  readonly method: "get" | "put" | "post" | "delete" | "patch";
  /** x-kubernetes-action: get, list, post, put, patch, delete, deletecollection. */
  readonly action: string;
  readonly operationId: string;
  readonly description: string;
  readonly gvk: Gvk;
  readonly parameters: readonly Parameter[];
  /** The body: an object of this schema, or a patch (any object, in the four patch types). */
  readonly body?: { readonly schema: string } | { readonly patch: true };
  /** Status code → schema name of the answer. */
  readonly responses: Readonly<Record<string, string>>;
}

export interface PathItem {
  readonly path: string;
  readonly parameters: readonly Parameter[];
  readonly operations: readonly Operation[];
}

export interface GroupVersionModel {
  readonly group: string;
  readonly version: string;
  /** `api/v1`, `apis/apps/v1`. */
  readonly key: string;
  /** Schema name → JSON Schema (refs unprefixed); well-known types are absent (see `wellKnown`). */
  readonly schemas: ReadonlyMap<string, Json>;
  /** Schema name → what OpenAPI v2 publishes instead (custom resources: see ./custom.ts). */
  readonly v2Schemas: ReadonlyMap<string, Json>;
  /** The well-known types (Quantity, Time, ...) these schemas reach. */
  readonly wellKnown: ReadonlySet<string>;
  /** Schema name → the kinds it is, for x-kubernetes-group-version-kind. */
  readonly kinds: ReadonlyMap<string, readonly Gvk[]>;
  readonly paths: readonly PathItem[];
}

export const PATCH_TYPES = ["application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"] as const;

export function listSchemaName(kindSchema: string): string {
  return `${kindSchema}List`;
}

/** Every served group-version, core first. */
export function buildModel(registry: ApiRegistry): GroupVersionModel[] {
  const out: GroupVersionModel[] = [];
  for (const group of registry.groups()) {
    for (const version of group.versions) out.push(groupVersion(registry, group.name, version));
  }
  return out;
}

function groupVersion(registry: ApiRegistry, group: string, version: string): GroupVersionModel {
  const defs = registry.resourcesIn(group, version);
  const kinds = new Map<string, Gvk[]>();
  const addKind = (schema: string, gvk: Gvk) => {
    const list = kinds.get(schema) ?? [];
    if (!list.some((g) => g.group === gvk.group && g.version === gvk.version && g.kind === gvk.kind)) list.push(gvk);
    kinds.set(schema, list);
  };
  const schemas = new Map<string, Json>();
  const v2Schemas = new Map<string, Json>();
  const pending: string[] = [];
  // Custom resources: each version under its own name, from the schema the definition gives it.
  const schemaName = (def: ResourceDefinition) => (def.openAPISchema === undefined ? kindSchemaOf(def, version) : customSchemaName(def.group, version, def.kind));
  for (const def of defs) {
    const gvk = { group: def.group, version, kind: def.kind };
    const name = schemaName(def);
    const listName = listSchemaName(name);
    addKind(name, gvk);
    if (def.openAPISchema !== undefined) {
      const custom = customSchemas(name, gvk, def.resource, def.openAPISchema(version));
      schemas.set(name, custom.v3);
      v2Schemas.set(name, custom.v2);
      schemas.set(listName, custom.list);
      addKind(listName, { ...gvk, kind: `${def.kind}List` });
      pending.push(...custom.refs);
    } else if (registry.schemas.get(listName) !== undefined) addKind(listName, { ...gvk, kind: `${def.kind}List` });
  }
  const paths = defs.flatMap((def) => resourcePaths(def, version, schemaName(def)));
  const wellKnown = new Set<string>();
  // The kinds and whatever the operations take or answer (Status of deletecollection).
  pending.push(...kinds.keys());
  for (const item of paths) {
    for (const op of item.operations) {
      pending.push(...Object.values(op.responses));
      if (op.body !== undefined && "schema" in op.body) pending.push(op.body.schema);
    }
  }
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (schemas.has(name) || wellKnown.has(name)) continue;
    if (isWellKnown(name)) {
      wellKnown.add(name);
      continue;
    }
    const type = registry.schemas.get(name);
    if (type === undefined) continue;
    // A kind's object has apiVersion and kind beside its fields, as upstream publishes them (kubectl ≤ 1.26
    // validates manifests against /openapi/v2 and refuses fields the document does not name).
    const properties: Json = kinds.has(name) ? { ...TYPE_META_PROPERTIES } : {};
    const required: string[] = [];
    for (const [fieldName, field] of Object.entries(type.fields)) {
      properties[fieldName] = fieldSchema(field, pending);
      if (field.required) required.push(fieldName);
    }
    schemas.set(name, {
      description: type.description,
      type: "object",
      properties,
      ...(required.length > 0 ? { required } : {}),
    });
  }
  return { group, version, key: group === "" ? `api/${version}` : `apis/${group}/${version}`, schemas, v2Schemas, wellKnown, kinds, paths };
}

function schemaOf(schema: Schema, pending: string[]): Json {
  switch (schema.type) {
    case "string":
      return { type: "string", ...(schema.format ? { format: schema.format } : {}), ...(schema.enum ? { enum: schema.enum } : {}) };
    case "integer":
      return { type: "integer", format: schema.format };
    case "number":
      return { type: "number", format: schema.format };
    case "boolean":
      return { type: "boolean" };
    case "ref":
      pending.push(schema.name);
      return { $ref: schema.name };
    case "array":
      return {
        type: "array",
        items: schemaOf(schema.items, pending),
        ...(schema.listType ? { "x-kubernetes-list-type": schema.listType } : {}),
        ...(schema.listMapKeys ? { "x-kubernetes-list-map-keys": schema.listMapKeys } : {}),
      };
    case "map":
      return { type: "object", additionalProperties: schemaOf(schema.values, pending) };
    case "any":
      return { type: "object", "x-kubernetes-preserve-unknown-fields": true };
  }
}

function fieldSchema(field: Field, pending: string[]): Json {
  const out: Json = { ...schemaOf(field.schema, pending), description: field.description };
  if (field.default !== undefined) out["default"] = field.default;
  if (field.patchStrategy !== undefined) out["x-kubernetes-patch-strategy"] = field.patchStrategy;
  if (field.patchMergeKey !== undefined) out["x-kubernetes-patch-merge-key"] = field.patchMergeKey;
  return out;
}

const query = (name: string, description: string, type: Parameter["type"] = "string"): Parameter => ({ name, in: "query", description, type });
const pathParam = (name: string, description: string): Parameter => ({ name, in: "path", description, type: "string", required: true });

const PRETTY = query("pretty", "If 'true', then the output is pretty printed.");
const DRY_RUN = query("dryRun", "When present, indicates that modifications should not be persisted. Valid value: All.");
const FIELD_MANAGER = query("fieldManager", "The name of the actor or entity making these changes.");
const FIELD_VALIDATION = query("fieldValidation", "How the server treats unknown and duplicate fields in the body: Ignore, Warn (the default) or Strict.");
const FORCE = query("force", "Force is going to \"force\" Apply requests: the caller takes ownership of conflicting fields. Must be unset for non-apply patches.", "boolean");
const LIST_PARAMS: readonly Parameter[] = [
  query("allowWatchBookmarks", "Ask for watch events of type BOOKMARK.", "boolean"),
  query("continue", "The continue token of a previous, paged list."),
  query("fieldSelector", "Restrict the returned objects by their fields."),
  query("labelSelector", "Restrict the returned objects by their labels."),
  query("limit", "The maximum number of objects in one answer (paging).", "integer"),
  query("resourceVersion", "Which resource version the answer must be at least as new as."),
  query("resourceVersionMatch", "How resourceVersion applies to a list: Exact or NotOlderThan."),
  query("sendInitialEvents", "With watch: start with the current objects as ADDED events.", "boolean"),
  query("timeoutSeconds", "How long a list or watch may last.", "integer"),
  query("watch", "Watch for changes instead of listing.", "boolean"),
];
const DELETE_PARAMS: readonly Parameter[] = [
  DRY_RUN,
  query("gracePeriodSeconds", "Seconds before the object is deleted; 0 deletes at once.", "integer"),
  query("propagationPolicy", "Whether and how dependents are collected: Orphan, Background or Foreground."),
];
const STATUS = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";

function resourcePaths(def: ResourceDefinition, version: string, schema: string): PathItem[] {
  const gv = def.group === "" ? `api/${version}` : `apis/${def.group}/${version}`;
  const verbs = new Set<string>(def.verbs ?? ALL_VERBS);
  const gvk = { group: def.group, version, kind: def.kind };
  const list = listSchemaName(schema);
  const scope = def.namespaced ? "Namespaced" : "";
  const suffix = `${versionWord(def.group, version)}${scope}${def.kind}`;
  const op = (method: Operation["method"], action: string, verbWord: string, description: string, rest: Omit<Operation, "method" | "action" | "operationId" | "description" | "gvk">): Operation => ({
    method,
    action,
    operationId: `${verbWord}${suffix}`,
    description,
    gvk,
    ...rest,
  });
  const base = def.namespaced ? `/${gv}/namespaces/{namespace}/${def.resource}` : `/${gv}/${def.resource}`;
  const common = [...(def.namespaced ? [pathParam("namespace", "The object name and auth scope, such as for teams and projects.")] : []), PRETTY];
  const writes = [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];
  const collection: Operation[] = [];
  if (verbs.has("list")) collection.push(op("get", "list", "list", `list or watch objects of kind ${def.kind}`, { parameters: LIST_PARAMS, responses: { "200": list } }));
  if (verbs.has("create")) {
    collection.push(op("post", "post", "create", `create a ${def.kind}`, { parameters: writes, body: { schema }, responses: { "200": schema, "201": schema, "202": schema } }));
  }
  if (verbs.has("deletecollection")) {
    collection.push(op("delete", "deletecollection", "deleteCollection", `delete collection of ${def.kind}`, { parameters: [...DELETE_PARAMS, ...LIST_PARAMS], responses: { "200": STATUS } }));
  }
  const name = pathParam("name", `name of the ${def.kind}`);
  const item: Operation[] = [];
  if (verbs.has("get")) item.push(op("get", "get", "read", `read the specified ${def.kind}`, { parameters: [], responses: { "200": schema } }));
  if (verbs.has("update")) item.push(op("put", "put", "replace", `replace the specified ${def.kind}`, { parameters: writes, body: { schema }, responses: { "200": schema, "201": schema } }));
  if (verbs.has("patch")) {
    item.push(op("patch", "patch", "patch", `partially update the specified ${def.kind}`, { parameters: [...writes, FORCE], body: { patch: true }, responses: { "200": schema, "201": schema } }));
  }
  if (verbs.has("delete")) item.push(op("delete", "delete", "delete", `delete a ${def.kind}`, { parameters: DELETE_PARAMS, responses: { "200": schema, "202": schema } }));
  const out: PathItem[] = [];
  if (collection.length > 0) out.push({ path: base, parameters: common, operations: collection });
  if (item.length > 0) out.push({ path: `${base}/{name}`, parameters: [name, ...common], operations: item });
  // Subresources answering the kind itself (their declarations serve get, update and patch of the parent).
  for (const sub of def.subresources ?? []) {
    if (sub.responseKind !== undefined || sub.connect || SUBRESOURCE_HANDLERS[sub.name] !== undefined) continue;
    const word = sub.name[0]!.toUpperCase() + sub.name.slice(1);
    const ops: Operation[] = [];
    const subOp = (method: Operation["method"], action: string, verbWord: string, rest: Omit<Operation, "method" | "action" | "operationId" | "description" | "gvk">): Operation => ({
      ...op(method, action, verbWord, `${verbWord} ${sub.name} of the specified ${def.kind}`, rest),
      operationId: `${verbWord}${suffix}${word}`,
    });
    if (sub.verbs.includes("get")) ops.push(subOp("get", "get", "read", { parameters: [], responses: { "200": schema } }));
    if (sub.verbs.includes("update")) ops.push(subOp("put", "put", "replace", { parameters: writes, body: { schema }, responses: { "200": schema, "201": schema } }));
    if (sub.verbs.includes("patch")) ops.push(subOp("patch", "patch", "patch", { parameters: [...writes, FORCE], body: { patch: true }, responses: { "200": schema, "201": schema } }));
    if (ops.length > 0) out.push({ path: `${base}/{name}/${sub.name}`, parameters: [name, ...common], operations: ops });
  }
  return out;
}

/** `CoreV1`, `AppsV1`, `RbacAuthorizationV1`: the group-version word of upstream's operation ids. */
function versionWord(group: string, version: string): string {
  const first = group === "" ? "core" : group.split(".").slice(0, -2).join(".") || group.split(".")[0]!;
  const words = first.split(/[.-]/).map((w) => w[0]!.toUpperCase() + w.slice(1));
  return words.join("") + version[0]!.toUpperCase() + version.slice(1);
}
