// Custom resources in the OpenAPI documents, as upstream's apiextensions
// server publishes them: every served version under its own name
// (`com.example.stable.v1.CronTab`), the version's schema as the definition
// gives it plus apiVersion, kind and metadata (a reference to ObjectMeta), and
// a list kind. OpenAPI v2 gets the schema reduced to what v2 clients
// (kubectl's validation and explain) understand: no allOf/anyOf/oneOf/not,
// nullable and x-kubernetes-preserve-unknown-fields nodes lose their type and
// structure, and a root that keeps unknown fields is published as a bare
// object (anything else would make kubectl refuse the unknown fields).

import { META_V1 } from "../../../api/meta/schemas.js";

// (The model's Json and Gvk, spelled out here: the model imports this file.)
type Json = Record<string, unknown>;
type Gvk = { readonly group: string; readonly version: string; readonly kind: string };

const OBJECT_META = `${META_V1}.ObjectMeta`;
const LIST_META = `${META_V1}.ListMeta`;
const PRESERVE = "x-kubernetes-preserve-unknown-fields";

const API_VERSION: Json = { description: "APIVersion defines the versioned schema of this representation of an object.", type: "string" };
const KIND: Json = { description: "Kind is a string value representing the REST resource this object represents.", type: "string" };
/** apiVersion and kind, which every kind's object carries (built-in kinds' types leave them to the envelope). */
export const TYPE_META_PROPERTIES: Readonly<Json> = { apiVersion: API_VERSION, kind: KIND };
const METADATA: Json = { $ref: OBJECT_META, description: "Standard object's metadata." };

export interface CustomSchemas {
  /** The kind's schema for OpenAPI v3 (references unprefixed, as the model writes them). */
  readonly v3: Json;
  /** The kind's schema for OpenAPI v2. */
  readonly v2: Json;
  /** The list kind's schema (the same in both). */
  readonly list: Json;
  /** The meta types they reference. */
  readonly refs: readonly string[];
}

/** Upstream's definition name of a custom kind: the group reversed, the version, the kind. */
export function customSchemaName(group: string, version: string, kind: string): string {
  return `${group.split(".").reverse().join(".")}.${version}.${kind}`;
}

export function customSchemas(name: string, gvk: Gvk, plural: string, schema: Json | undefined): CustomSchemas {
  const v3 = schema === undefined ? { type: "object" } : kubeNative(clone(schema), false);
  const v2 = schema === undefined || schema[PRESERVE] === true ? { type: "object" } : kubeNative(toV2(clone(schema)), true);
  const list: Json = {
    description: `${gvk.kind}List is a list of ${gvk.kind}`,
    type: "object",
    required: ["items"],
    properties: {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { $ref: LIST_META, description: "Standard list metadata." },
      items: { description: `List of ${plural}.`, type: "array", items: { $ref: name } },
    },
  };
  return { v3, v2, list, refs: [OBJECT_META, LIST_META] };
}

function kubeNative(schema: Json, v2: boolean): Json {
  const out: Json = { ...schema, properties: { ...properties(schema), metadata: METADATA, apiVersion: API_VERSION, kind: KIND } };
  embedded(out, v2);
  return out;
}

/** apiVersion, kind and metadata in every embedded resource (not below a node keeping unknown fields in v2). */
function embedded(schema: Json, v2: boolean): void {
  for (const child of children(schema)) embedded(child, v2);
  if (v2 && schema[PRESERVE] === true) return;
  if (schema["x-kubernetes-embedded-resource"] !== true) return;
  schema["properties"] = { ...properties(schema), apiVersion: API_VERSION, kind: KIND, metadata: METADATA };
  const required = Array.isArray(schema["required"]) ? [...(schema["required"] as string[])] : [];
  for (const key of ["kind", "apiVersion"]) if (!required.includes(key)) required.push(key);
  schema["required"] = required;
}

/** The schema reduced for OpenAPI v2, node by node (in place). */
function toV2(schema: Json): Json {
  for (const key of ["allOf", "anyOf", "oneOf", "not"]) delete schema[key];
  if (schema["nullable"] === true) {
    delete schema["type"];
    delete schema["nullable"];
    delete schema["items"];
    delete schema["properties"];
  }
  if (schema[PRESERVE] === true) {
    delete schema["items"];
    delete schema["properties"];
  }
  if (schema["items"] === undefined && schema["type"] === "array") delete schema["type"];
  if (schema[PRESERVE] === true && schema["type"] === "object") delete schema["type"];
  const props = properties(schema);
  if (Array.isArray(schema["required"])) {
    const required = (schema["required"] as string[]).filter((f) => !(isObject(props[f]) && props[f]["nullable"] === true));
    if (required.length > 0) schema["required"] = required;
    else delete schema["required"];
  }
  const additional = schema["additionalProperties"];
  if (isObject(additional) && additional["nullable"] === true) delete schema["required"];
  for (const child of children(schema)) toV2(child);
  return schema;
}

function properties(schema: Json): Record<string, Json> {
  return isObject(schema["properties"]) ? (schema["properties"] as Record<string, Json>) : {};
}

function children(schema: Json): Json[] {
  const out = Object.values(properties(schema)).filter(isObject);
  for (const key of ["items", "additionalProperties"]) if (isObject(schema[key])) out.push(schema[key] as Json);
  return out;
}

function clone(schema: Json): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
