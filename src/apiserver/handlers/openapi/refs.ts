// The model's schemas write a reference as `{ "$ref": "<type name>", ...rest }`;
// each renderer turns it into its own form (v2 `#/definitions/`, v3 `allOf`).

import type { Json } from "./model.js";

/**
 * A copy of the schema with every `{ $ref: name, ...rest }` node replaced by
 * `{ ...ref(name), ...rest }`, looking into the keys that hold schemas
 * (properties, items, additionalProperties); everything else (defaults,
 * enums, extensions) is data, kept as is.
 */
export function mapRefs(schema: Json, ref: (name: string) => Json): Json {
  const out: Json = typeof schema["$ref"] === "string" ? { ...ref(schema["$ref"]) } : {};
  for (const [key, v] of Object.entries(schema)) {
    if (key === "$ref") continue;
    if (key === "properties" && isObject(v)) out[key] = Object.fromEntries(Object.entries(v).map(([name, p]) => [name, isObject(p) ? mapRefs(p, ref) : p]));
    else if ((key === "items" || key === "additionalProperties") && isObject(v)) out[key] = mapRefs(v, ref);
    else out[key] = v;
  }
  return out;
}

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
