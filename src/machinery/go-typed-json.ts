// What upstream's Go code sees of an object once decoded into its typed
// struct and written back with encoding/json: fields `omitempty` drops when
// zero are gone, fields Go always writes (no omitempty, or a struct value
// rather than a pointer) are there even when unset (`creationTimestamp: null`,
// `resources: {}`), unknown fields are dropped, and keys are sorted as Go's
// maps sort them. Controllers that store such JSON where clients compare it
// byte for byte (a ControllerRevision's data, which upstream's
// daemon.Match compares with bytes.Equal) build it with goTypedValue.

import { POINTER_SCALARS } from "./codec/protobuf/presence.js";
import { WELL_KNOWN, type Schema, type SchemaRegistry } from "./schema.js";

const META = "io.k8s.apimachinery.pkg.apis.meta.v1";
const CORE = "io.k8s.api.core.v1";

/**
 * Struct-valued fields (not pointers) that are not `required`: encoding/json
 * writes them even when empty, `omitempty` or not. Those under a pod template.
 */
const VALUE_STRUCTS: Readonly<Record<string, readonly string[]>> = {
  [`${META}.ObjectMeta`]: ["creationTimestamp"],
  [`${CORE}.PodTemplateSpec`]: ["metadata", "spec"],
  [`${CORE}.Container`]: ["resources"],
  [`${CORE}.EphemeralContainer`]: ["resources"],
  [`${CORE}.PersistentVolumeClaimTemplate`]: ["metadata", "spec"],
  [`${CORE}.PersistentVolumeClaimSpec`]: ["resources"],
};

const OMIT = Symbol("omit");

/**
 * `value` as Go's encoding/json writes it after decoding it into the type
 * `typeName` of `registry`, keys in sorted order (so JSON.stringify of the
 * result is Go's text, but for Go's escaping of `<`, `>` and `&`).
 */
export function goTypedValue(value: unknown, typeName: string, registry: SchemaRegistry): Record<string, unknown> {
  const def = registry.get(typeName);
  if (def === undefined) return sortedDeep(value ?? {}) as Record<string, unknown>;
  const obj = value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const out: [string, unknown][] = [];
  for (const [name, field] of Object.entries(def.fields)) {
    const always = field.required === true || (VALUE_STRUCTS[typeName]?.includes(name) ?? false);
    const pointer = POINTER_SCALARS[typeName]?.includes(name) ?? false;
    const v = fieldValue(obj[name], field.schema, registry, always, pointer);
    if (v !== OMIT) out.push([name, v]);
  }
  return Object.fromEntries(out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function fieldValue(v: unknown, schema: Schema, registry: SchemaRegistry, always: boolean, pointer: boolean): unknown {
  const absent = v === undefined || v === null;
  switch (schema.type) {
    case "string":
    case "integer":
    case "number":
    case "boolean": {
      const zero = schema.type === "string" ? "" : schema.type === "boolean" ? false : 0;
      if (absent) return always ? zero : OMIT;
      return always || pointer || v !== zero ? v : OMIT;
    }
    case "array":
      // Protobuf decodes an empty list to nil: null where Go always writes the field.
      if (absent || !Array.isArray(v) || v.length === 0) return always ? null : OMIT;
      return v.filter((x) => x !== null && x !== undefined).map((x) => element(x, schema.items, registry));
    case "map": {
      if (absent || typeof v !== "object" || Object.keys(v).length === 0) return always ? null : OMIT;
      const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return Object.fromEntries(entries.map(([k, x]) => [k, x === null ? null : element(x, schema.values, registry)]));
    }
    case "any":
      return absent ? (always ? null : OMIT) : sortedDeep(v);
    case "ref":
      switch (schema.name) {
        case WELL_KNOWN.time:
        case WELL_KNOWN.microTime:
        case WELL_KNOWN.rawExtension:
          return absent ? (always ? null : OMIT) : sortedDeep(v);
        case WELL_KNOWN.quantity:
          return absent ? (always ? "0" : OMIT) : v;
        case WELL_KNOWN.intOrString:
          return absent ? (always ? 0 : OMIT) : v;
        default:
          if (absent) return always ? goTypedValue({}, schema.name, registry) : OMIT;
          return goTypedValue(v, schema.name, registry);
      }
  }
}

function element(x: unknown, schema: Schema, registry: SchemaRegistry): unknown {
  if (schema.type === "ref" && registry.get(schema.name) !== undefined) return goTypedValue(x, schema.name, registry);
  return sortedDeep(x);
}

/** Any JSON with object keys in sorted order (Go's map order). */
function sortedDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedDeep);
  if (v === null || typeof v !== "object") return v;
  const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, x]) => [k, sortedDeep(x)]));
}
