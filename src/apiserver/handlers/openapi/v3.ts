// OpenAPI v3 (KUBECTL.md, "OpenAPI"): one document per group-version, drawn
// from the model: references as `allOf: [{$ref}]` (as upstream writes them,
// so a description can sit beside one), the well-known types as their JSON
// forms, and the paths with their operations. The `patch` operations
// advertise the fieldValidation parameter, so kubectl leaves validation to
// the server.

import { WELL_KNOWN } from "../../../machinery/schema.js";
import { PATCH_TYPES, type GroupVersionModel, type Json, type Operation, type Parameter } from "./model.js";
import { mapRefs } from "./refs.js";

const REF_PREFIX = "#/components/schemas/";

/** How the well-known types look in OpenAPI v3 (they are strings or free-form in JSON). */
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

const toV3Ref = (name: string): Json => ({ allOf: [{ $ref: REF_PREFIX + name }] });

export function v3Document(gv: GroupVersionModel): Json {
  const schemas: Json = {};
  for (const [name, schema] of gv.schemas) {
    const kinds = gv.kinds.get(name);
    schemas[name] = { ...mapRefs(schema, toV3Ref), ...(kinds !== undefined ? { "x-kubernetes-group-version-kind": kinds } : {}) };
  }
  for (const name of gv.wellKnown) schemas[name] = WELL_KNOWN_SCHEMAS[name];
  const paths: Json = {};
  for (const item of gv.paths) {
    const out: Json = { parameters: item.parameters.map(parameter) };
    for (const op of item.operations) out[op.method] = operation(op);
    paths[item.path] = out;
  }
  return {
    openapi: "3.0.0",
    info: { title: "orch", version: "v1" },
    paths,
    components: { schemas },
  };
}

function parameter(p: Parameter): Json {
  return { name: p.name, in: p.in, description: p.description, ...(p.required ? { required: true } : {}), schema: { type: p.type }, uniqueItems: true };
}

function operation(op: Operation): Json {
  const ref = (name: string) => ({ $ref: REF_PREFIX + name });
  const responses: Json = {};
  for (const [code, name] of Object.entries(op.responses)) responses[code] = { description: "OK", content: { "application/json": { schema: ref(name) } } };
  let requestBody: Json | undefined;
  if (op.body !== undefined && "schema" in op.body) requestBody = { content: { "*/*": { schema: ref(op.body.schema) } }, required: true };
  if (op.body !== undefined && "patch" in op.body) requestBody = { content: Object.fromEntries(PATCH_TYPES.map((t) => [t, { schema: { type: "object" } }])), required: true };
  return {
    description: op.description,
    operationId: op.operationId,
    ...(op.parameters.length > 0 ? { parameters: op.parameters.map(parameter) } : {}),
    ...(requestBody !== undefined ? { requestBody } : {}),
    responses,
    "x-kubernetes-action": op.action,
    "x-kubernetes-group-version-kind": op.gvk,
  };
}
