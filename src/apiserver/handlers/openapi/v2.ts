// OpenAPI v2 (Swagger 2.0): the one document of every group-version that
// kubectl 1.27 and 1.28 read for apply, diff, edit, explain and validation.
// Drawn from the same model as v3: definitions keyed by upstream's names with
// `x-kubernetes-group-version-kind`, list and patch extensions; paths with
// upstream's operations and parameters (query parameters are plain typed
// parameters, bodies are `in: body` parameters). `toGnostic` reshapes the
// JSON document into gnostic's `openapi.v2.Document` message for Protobuf.

import { WELL_KNOWN } from "../../../machinery/schema.js";
import { PATCH_TYPES, type Gvk, type GroupVersionModel, type Json, type Operation, type Parameter } from "./model.js";
import { mapRefs } from "./refs.js";

const REF_PREFIX = "#/definitions/";

/** How the well-known types look in OpenAPI v2 (no oneOf there: Quantity is a string, as upstream publishes it). */
const WELL_KNOWN_SCHEMAS: Record<string, Json> = {
  [WELL_KNOWN.quantity]: { description: "A fixed-point number with a suffix, such as 100m, 1Gi or 2.5.", type: "string" },
  [WELL_KNOWN.intOrString]: { description: "An integer or a string.", type: "string", format: "int-or-string" },
  [WELL_KNOWN.time]: { description: "A time in RFC 3339 form, at second precision.", type: "string", format: "date-time" },
  [WELL_KNOWN.microTime]: { description: "A time in RFC 3339 form, at microsecond precision.", type: "string", format: "date-time" },
  [WELL_KNOWN.rawExtension]: { description: "Any embedded object.", type: "object" },
};

const PRODUCES = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"];

const toV2Ref = (name: string): Json => ({ $ref: REF_PREFIX + name });

export function v2Document(model: readonly GroupVersionModel[]): Json {
  const kinds = new Map<string, Gvk[]>();
  const schemas = new Map<string, Json>();
  const v2Schemas = new Map<string, Json>();
  const wellKnown = new Set<string>();
  const paths: Json = {};
  for (const gv of model) {
    for (const [name, list] of gv.kinds) {
      const all = kinds.get(name) ?? [];
      for (const gvk of list) if (!all.some((g) => g.group === gvk.group && g.version === gvk.version && g.kind === gvk.kind)) all.push(gvk);
      kinds.set(name, all);
    }
    for (const [name, schema] of gv.schemas) if (!schemas.has(name)) schemas.set(name, schema);
    for (const [name, schema] of gv.v2Schemas) if (!v2Schemas.has(name)) v2Schemas.set(name, schema);
    for (const name of gv.wellKnown) wellKnown.add(name);
    const tag = gv.key.replace(/^apis?\//, "").replace(/[./]/g, "_") || "core";
    for (const item of gv.paths) {
      const out: Json = {};
      for (const op of item.operations) out[op.method] = operation(op, tag);
      out["parameters"] = item.parameters.map(parameter);
      paths[item.path] = out;
    }
  }
  const definitions: Json = {};
  for (const name of [...schemas.keys(), ...wellKnown].sort()) {
    const schema = v2Schemas.get(name) ?? schemas.get(name);
    const list = kinds.get(name);
    definitions[name] = schema === undefined ? WELL_KNOWN_SCHEMAS[name] : { ...mapRefs(schema, toV2Ref), ...(list !== undefined ? { "x-kubernetes-group-version-kind": list } : {}) };
  }
  return { swagger: "2.0", info: { title: "orch", version: "v1" }, paths, definitions };
}

function parameter(p: Parameter): Json {
  return { name: p.name, in: p.in, description: p.description, ...(p.required ? { required: true } : {}), type: p.type, uniqueItems: true };
}

function operation(op: Operation, tag: string): Json {
  const parameters: Json[] = [];
  if (op.body !== undefined) {
    parameters.push({ name: "body", in: "body", required: true, schema: "schema" in op.body ? toV2Ref(op.body.schema) : { type: "object" } });
  }
  parameters.push(...op.parameters.map(parameter));
  const responses: Json = {};
  for (const [code, name] of Object.entries(op.responses)) responses[code] = { description: "OK", schema: toV2Ref(name) };
  responses["401"] = { description: "Unauthorized" };
  return {
    description: op.description,
    consumes: op.body !== undefined && "patch" in op.body ? [...PATCH_TYPES] : ["*/*"],
    produces: PRODUCES,
    schemes: ["https"],
    tags: [tag],
    operationId: op.operationId,
    ...(parameters.length > 0 ? { parameters } : {}),
    responses,
    "x-kubernetes-action": op.action,
    "x-kubernetes-group-version-kind": op.gvk,
  };
}

// ---- the JSON document as gnostic's message (../../../machinery/codec/protobuf/openapi-v2.ts) ----

/** An `Any` holding a value as YAML (JSON is YAML). */
const any = (value: unknown): Json => ({ yaml: `${JSON.stringify(value)}\n` });

function extensions(obj: Json): Json | undefined {
  const out: Json = {};
  for (const [key, value] of Object.entries(obj)) if (key.startsWith("x-")) out[key] = any(value);
  return Object.keys(out).length > 0 ? out : undefined;
}

function gnosticSchema(schema: Json): Json {
  const out: Json = {};
  if (typeof schema["$ref"] === "string") out["ref"] = schema["$ref"];
  if (typeof schema["format"] === "string") out["format"] = schema["format"];
  if (typeof schema["description"] === "string") out["description"] = schema["description"];
  if (typeof schema["pattern"] === "string") out["pattern"] = schema["pattern"];
  for (const key of ["maxLength", "minLength"]) if (Number.isInteger(schema[key])) out[key] = schema[key];
  if (schema["default"] !== undefined) out["default"] = any(schema["default"]);
  if (Array.isArray(schema["required"])) out["required"] = schema["required"];
  if (Array.isArray(schema["enum"])) out["enum"] = schema["enum"].map(any);
  if (typeof schema["type"] === "string") out["type"] = { value: [schema["type"]] };
  const additional = schema["additionalProperties"];
  if (additional !== undefined && additional !== null && typeof additional === "object") out["additionalProperties"] = { schema: gnosticSchema(additional as Json) };
  if (schema["items"] !== undefined) out["items"] = { schema: [gnosticSchema(schema["items"] as Json)] };
  if (Array.isArray(schema["allOf"])) out["allOf"] = (schema["allOf"] as Json[]).map(gnosticSchema);
  const properties = schema["properties"] as Record<string, Json> | undefined;
  if (properties !== undefined) out["properties"] = { additionalProperties: Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, gnosticSchema(v)])) };
  const ext = extensions(schema);
  if (ext !== undefined) out["vendorExtension"] = ext;
  return out;
}

function gnosticParameter(p: Json): Json {
  if (p["in"] === "body") {
    return { parameter: { bodyParameter: { name: p["name"], in: "body", required: p["required"] === true, schema: gnosticSchema(p["schema"] as Json) } } };
  }
  const sub = { required: p["required"] === true, in: p["in"], description: p["description"], name: p["name"], type: p["type"], uniqueItems: p["uniqueItems"] === true };
  const key = p["in"] === "path" ? "pathParameterSubSchema" : p["in"] === "header" ? "headerParameterSubSchema" : "queryParameterSubSchema";
  return { parameter: { nonBodyParameter: { [key]: sub } } };
}

function gnosticOperation(op: Json): Json {
  const responses: Json = {};
  for (const [code, r] of Object.entries(op["responses"] as Record<string, Json>)) {
    responses[code] = { response: { description: r["description"], ...(r["schema"] !== undefined ? { schema: { schema: gnosticSchema(r["schema"] as Json) } } : {}) } };
  }
  return {
    tags: op["tags"],
    description: op["description"],
    operationId: op["operationId"],
    produces: op["produces"],
    consumes: op["consumes"],
    parameters: ((op["parameters"] ?? []) as Json[]).map(gnosticParameter),
    responses: { responseCode: responses },
    schemes: op["schemes"],
    vendorExtension: extensions(op),
  };
}

/** The Swagger JSON document in the shape of gnostic's openapi.v2.Document (field names as declared there). */
export function toGnostic(doc: Json): Json {
  const paths: Json = {};
  for (const [path, item] of Object.entries(doc["paths"] as Record<string, Json>)) {
    const out: Json = { parameters: ((item["parameters"] ?? []) as Json[]).map(gnosticParameter) };
    for (const method of ["get", "put", "post", "delete", "patch"]) if (item[method] !== undefined) out[method] = gnosticOperation(item[method] as Json);
    paths[path] = out;
  }
  const definitions: Json = {};
  for (const [name, schema] of Object.entries(doc["definitions"] as Record<string, Json>)) definitions[name] = gnosticSchema(schema);
  return { swagger: doc["swagger"], info: doc["info"], paths: { path: paths }, definitions: { additionalProperties: definitions } };
}
