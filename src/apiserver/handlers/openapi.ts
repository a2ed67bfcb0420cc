// OpenAPI v3 (KUBECTL.md, "OpenAPI"): /openapi/v3 lists one document per
// group-version; each document has the schemas its kinds reach (with
// x-kubernetes-group-version-kind, descriptions, list and patch extensions)
// and the paths with their operations. The `patch` operations advertise the
// fieldValidation parameter, so kubectl leaves validation to the server.
// Documents are built once and cached with their hash.

import { createHash } from "node:crypto";
import { ALL_VERBS, type ResourceDefinition } from "../../api/resource.js";
import { WELL_KNOWN, type Field, type Schema } from "../../machinery/schema.js";
import type { ApiRegistry } from "../api-registry.js";
import { SUBRESOURCE_HANDLERS } from "./subresources/index.js";

type Json = Record<string, unknown>;

const REF_PREFIX = "#/components/schemas/";

/** How the well-known types look in OpenAPI (they are strings or free-form in JSON). */
const WELL_KNOWN_SCHEMAS: Record<string, Json> = {
  [WELL_KNOWN.quantity]: {
    description: "A fixed-point number with a suffix, such as 100m, 1Gi or 2.5.",
    oneOf: [{ type: "string" }, { type: "number" }],
  },
  [WELL_KNOWN.intOrString]: { description: "An integer or a string.", type: "string", format: "int-or-string", "x-kubernetes-int-or-string": true },
  [WELL_KNOWN.time]: { description: "A time in RFC 3339 form, at second precision.", type: "string", format: "date-time" },
  [WELL_KNOWN.microTime]: { description: "A time in RFC 3339 form, at microsecond precision.", type: "string", format: "date-time" },
  [WELL_KNOWN.rawExtension]: { description: "Any embedded object.", type: "object", "x-kubernetes-preserve-unknown-fields": true },
};

export class OpenApi {
  readonly #registry: ApiRegistry;
  #index: Json | undefined;
  readonly #documents = new Map<string, Json>();

  constructor(registry: ApiRegistry) {
    this.#registry = registry;
  }

  /** The served resources changed (a custom resource came or went): documents are built anew. */
  invalidate(): void {
    this.#index = undefined;
    this.#documents.clear();
  }

  /** The document for a request path, or undefined (404). */
  answer(path: string): Json | undefined {
    this.#build();
    if (path === "/openapi/v3") return this.#index;
    if (path.startsWith("/openapi/v3/")) return this.#documents.get(path.slice("/openapi/v3/".length));
    return undefined;
  }

  #build(): void {
    if (this.#index !== undefined) return;
    const paths: Json = {};
    for (const group of this.#registry.groups()) {
      for (const version of group.versions) {
        const key = group.name === "" ? `api/${version}` : `apis/${group.name}/${version}`;
        const doc = this.#document(group.name, version);
        const hash = createHash("sha512").update(JSON.stringify(doc)).digest("hex").slice(0, 64).toUpperCase();
        this.#documents.set(key, doc);
        paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
      }
    }
    this.#index = { paths };
  }

  #document(group: string, version: string): Json {
    const defs = this.#registry.resourcesIn(group, version);
    const schemas: Json = {};
    const gvk = new Map<string, Json[]>();
    for (const def of defs) {
      const entry = { group: def.group, version, kind: def.kind };
      gvk.set(def.schema, [...(gvk.get(def.schema) ?? []), entry]);
      const listName = listSchemaName(def.schema);
      if (this.#registry.schemas.get(listName) !== undefined) {
        gvk.set(listName, [...(gvk.get(listName) ?? []), { ...entry, kind: `${def.kind}List` }]);
      }
    }
    const pending = [...gvk.keys()];
    while (pending.length > 0) {
      const name = pending.pop()!;
      if (name in schemas) continue;
      if (name in WELL_KNOWN_SCHEMAS) {
        schemas[name] = WELL_KNOWN_SCHEMAS[name];
        continue;
      }
      const type = this.#registry.schemas.get(name);
      if (type === undefined) continue;
      const properties: Json = {};
      const required: string[] = [];
      for (const [fieldName, field] of Object.entries(type.fields)) {
        properties[fieldName] = fieldSchema(field, pending);
        if (field.required) required.push(fieldName);
      }
      schemas[name] = {
        description: type.description,
        type: "object",
        properties,
        ...(required.length > 0 ? { required } : {}),
        ...(gvk.has(name) ? { "x-kubernetes-group-version-kind": gvk.get(name) } : {}),
      };
    }
    const paths: Json = {};
    for (const def of defs) Object.assign(paths, resourcePaths(def, version));
    return {
      openapi: "3.0.0",
      info: { title: "orch", version: "v1" },
      paths,
      components: { schemas },
    };
  }
}

function listSchemaName(kindSchema: string): string {
  return `${kindSchema}List`;
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
      return { allOf: [{ $ref: REF_PREFIX + schema.name }] };
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

const QUERY = (name: string, description: string, type = "string"): Json => ({ name, in: "query", description, schema: { type }, uniqueItems: true });
const PATH = (name: string): Json => ({ name, in: "path", required: true, schema: { type: "string" }, uniqueItems: true });
const WRITE_PARAMS = [
  QUERY("dryRun", "When present, the request is processed but nothing is stored. Valid value: All."),
  QUERY("fieldManager", "The name of the actor making the change."),
  QUERY("fieldValidation", "How unknown and duplicate fields are handled: Ignore, Warn (default) or Strict."),
];

function resourcePaths(def: ResourceDefinition, version: string): Json {
  const gv = def.group === "" ? `api/${version}` : `apis/${def.group}/${version}`;
  const verbs = new Set<string>(def.verbs ?? ALL_VERBS);
  const gvk = { group: def.group, version, kind: def.kind };
  const ref = { $ref: REF_PREFIX + def.schema };
  const listRef = { $ref: REF_PREFIX + listSchemaName(def.schema) };
  const ok = (schema: Json) => ({ content: { "application/json": { schema } }, description: "OK" });
  const op = (action: string, extra: Json): Json => ({
    operationId: `${action}${def.kind}`,
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": gvk,
    ...extra,
  });
  const base = def.namespaced ? `/${gv}/namespaces/{namespace}/${def.resource}` : `/${gv}/${def.resource}`;
  const nsParams = def.namespaced ? [PATH("namespace")] : [];
  const collection: Json = { parameters: nsParams };
  if (verbs.has("list")) collection["get"] = op("list", { responses: { "200": ok(listRef) } });
  if (verbs.has("create")) {
    collection["post"] = op("post", {
      parameters: WRITE_PARAMS,
      requestBody: { content: { "*/*": { schema: ref } }, required: true },
      responses: { "200": ok(ref), "201": ok(ref) },
    });
  }
  if (verbs.has("deletecollection")) collection["delete"] = op("deletecollection", { responses: { "200": ok(ref) } });
  const item: Json = { parameters: [PATH("name"), ...nsParams] };
  if (verbs.has("get")) item["get"] = op("get", { responses: { "200": ok(ref) } });
  if (verbs.has("update")) {
    item["put"] = op("put", { parameters: WRITE_PARAMS, requestBody: { content: { "*/*": { schema: ref } }, required: true }, responses: { "200": ok(ref), "201": ok(ref) } });
  }
  if (verbs.has("patch")) {
    item["patch"] = op("patch", {
      parameters: [...WRITE_PARAMS, QUERY("force", "Take ownership of conflicting fields in server-side apply.", "boolean")],
      requestBody: {
        content: Object.fromEntries(
          ["application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"].map((t) => [
            t,
            { schema: { type: "object" } },
          ]),
        ),
        required: true,
      },
      responses: { "200": ok(ref), "201": ok(ref) },
    });
  }
  if (verbs.has("delete")) item["delete"] = op("delete", { responses: { "200": ok(ref), "202": ok(ref) } });
  const out: Json = { [base]: collection, [`${base}/{name}`]: item };
  // Subresources answering the kind itself (their declarations serve get, update and patch of the parent).
  for (const sub of def.subresources ?? []) {
    if (sub.responseKind !== undefined || sub.connect || SUBRESOURCE_HANDLERS[sub.name] !== undefined) continue;
    const path: Json = { parameters: [PATH("name"), ...nsParams] };
    if (sub.verbs.includes("get")) path["get"] = op("get", { responses: { "200": ok(ref) } });
    if (sub.verbs.includes("update")) path["put"] = op("put", { parameters: WRITE_PARAMS, responses: { "200": ok(ref) } });
    if (sub.verbs.includes("patch")) path["patch"] = op("patch", { parameters: WRITE_PARAMS, responses: { "200": ok(ref) } });
    out[`${base}/{name}/${sub.name}`] = path;
  }
  return out;
}
