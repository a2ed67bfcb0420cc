// A custom resource's schema at work on its objects (upstream's structural
// schema semantics): validation with kube-openapi's messages, pruning of
// fields the schema does not name, and `default` values. Pure functions over
// JSON values; the paths are field paths (`spec.items[0].name`).

import { field, type FieldError } from "../../machinery/index.js";
import type { JSONSchemaProps } from "./types.js";

type Json = Record<string, unknown>;

export const PRESERVE = "x-kubernetes-preserve-unknown-fields";
export const EMBEDDED = "x-kubernetes-embedded-resource";
export const INT_OR_STRING = "x-kubernetes-int-or-string";
export const LIST_TYPE = "x-kubernetes-list-type";
export const LIST_MAP_KEYS = "x-kubernetes-list-map-keys";
export const MAP_TYPE = "x-kubernetes-map-type";
export const VALIDATIONS = "x-kubernetes-validations";

export function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function childPath(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

/** The JSON type name kube-openapi reports for a value. */
export function jsonType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "string") return "string";
  return "object";
}

function typeMatches(type: string, v: unknown): boolean {
  switch (type) {
    case "object":
      return isObject(v);
    case "array":
      return Array.isArray(v);
    case "string":
      return typeof v === "string";
    case "integer":
      return typeof v === "number" && Number.isInteger(v);
    case "number":
      return typeof v === "number";
    case "boolean":
      return typeof v === "boolean";
    default:
      return true;
  }
}

/** String formats checked as kube-openapi's registry checks them; others are accepted as is. */
const FORMATS: Record<string, (s: string) => boolean> = {
  "date-time": (s) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s.replace(" ", "T"))),
  datetime: (s) => FORMATS["date-time"]!(s),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)),
  uuid: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  uuid3: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  uuid4: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s),
  uuid5: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s),
  ipv4: (s) => /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(s),
  ipv6: (s) => s.includes(":") && /^[0-9a-fA-F:.]+$/.test(s) && isIPv6(s),
  cidr: (s) => {
    const [ip, bits, ...rest] = s.split("/");
    if (rest.length > 0 || bits === undefined || !/^\d+$/.test(bits)) return false;
    if (FORMATS["ipv4"]!(ip!)) return Number(bits) <= 32;
    return FORMATS["ipv6"]!(ip!) && Number(bits) <= 128;
  },
  mac: (s) => /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/.test(s),
  hostname: (s) => s.length <= 255 && /^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$/.test(s),
  email: (s) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(s),
  byte: (s) => /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0,
};

function isIPv6(s: string): boolean {
  const parts = s.split("::");
  if (parts.length > 2) return false;
  const groups = parts.flatMap((p) => (p === "" ? [] : p.split(":")));
  const hasV4 = groups.length > 0 && groups[groups.length - 1]!.includes(".");
  if (hasV4 && !FORMATS["ipv4"]!(groups.pop()!)) return false;
  const max = hasV4 ? 6 : 8;
  if (!groups.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  return parts.length === 2 ? groups.length < max : groups.length === max;
}

/** Is `format` one this server checks (the others are annotations only)? */
export function knownFormat(format: string): boolean {
  return format in FORMATS;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

const regexCache = new Map<string, RegExp | null>();

/** A schema pattern as a JavaScript regular expression (RE2 syntax is mostly a subset); null when it does not compile. */
export function compilePattern(pattern: string): RegExp | null {
  let re = regexCache.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern, "u");
    } catch {
      try {
        re = new RegExp(pattern);
      } catch {
        re = null;
      }
    }
    regexCache.set(pattern, re);
  }
  return re;
}

/**
 * Validate `value` against `schema` (an object's whole body at the root).
 * Errors as upstream's ValidateCustomResource: Required, NotSupported for enums,
 * Invalid with kube-openapi's message otherwise.
 */
export function validateValue(schema: JSONSchemaProps, value: unknown, path = ""): FieldError[] {
  const errs: FieldError[] = [];
  walk(schema, value, path, errs);
  return errs;
}

function name(path: string): string {
  return path === "" ? "." : path;
}

function walk(schema: JSONSchemaProps, value: unknown, path: string, errs: FieldError[]): void {
  const intOrString = schema[INT_OR_STRING] === true;
  if (value === null) {
    if (schema.nullable || (schema.type === undefined && !intOrString)) return;
    const want = intOrString ? "integer,string" : schema.type!;
    errs.push(field.invalid(path, "null", `${name(path)} in body must be of type ${want}: "null"`));
    return;
  }
  if (intOrString) {
    if (!(typeof value === "string" || (typeof value === "number" && Number.isInteger(value)))) {
      errs.push(field.invalid(path, jsonType(value), `${name(path)} in body must be of type integer,string: "${jsonType(value)}"`));
      return;
    }
  } else if (schema.type !== undefined && schema.type !== "" && !typeMatches(schema.type, value)) {
    errs.push(field.invalid(path, jsonType(value), `${name(path)} in body must be of type ${schema.type}: "${jsonType(value)}"`));
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => deepEqual(e, value))) {
    errs.push(field.notSupported(path, value, schema.enum.map((e) => (typeof e === "string" ? e : JSON.stringify(e)))));
  }
  if (typeof value === "string") stringChecks(schema, value, path, errs);
  if (typeof value === "number") numberChecks(schema, value, path, errs);
  if (Array.isArray(value)) arrayChecks(schema, value, path, errs);
  if (isObject(value)) objectChecks(schema, value, path, errs);
  combinators(schema, value, path, errs);
}

function stringChecks(schema: JSONSchemaProps, value: string, path: string, errs: FieldError[]): void {
  const length = [...value].length;
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    errs.push(field.invalid(path, value, `${name(path)} in body should be at most ${schema.maxLength} chars long`));
  }
  if (schema.minLength !== undefined && length < schema.minLength) {
    errs.push(field.invalid(path, value, `${name(path)} in body should be at least ${schema.minLength} chars long`));
  }
  if (schema.pattern !== undefined) {
    const re = compilePattern(schema.pattern);
    if (re !== null && !re.test(value)) errs.push(field.invalid(path, value, `${name(path)} in body should match '${schema.pattern}'`));
  }
  if (schema.format !== undefined && FORMATS[schema.format] !== undefined && !FORMATS[schema.format]!(value)) {
    errs.push(field.invalid(path, value, `${name(path)} in body must be of type ${schema.format}: ${JSON.stringify(value)}`));
  }
}

function numberChecks(schema: JSONSchemaProps, value: number, path: string, errs: FieldError[]): void {
  if (schema.maximum !== undefined) {
    if (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum) {
      errs.push(field.invalid(path, value, `${name(path)} in body should be less than ${schema.exclusiveMaximum ? "" : "or equal to "}${schema.maximum}`));
    }
  }
  if (schema.minimum !== undefined) {
    if (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum) {
      errs.push(field.invalid(path, value, `${name(path)} in body should be greater than ${schema.exclusiveMinimum ? "" : "or equal to "}${schema.minimum}`));
    }
  }
  if (schema.multipleOf !== undefined && schema.multipleOf > 0) {
    const q = value / schema.multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9) errs.push(field.invalid(path, value, `${name(path)} in body should be a multiple of ${schema.multipleOf}`));
  }
}

function arrayChecks(schema: JSONSchemaProps, value: unknown[], path: string, errs: FieldError[]): void {
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    errs.push(field.invalid(path, value.length, `${name(path)} in body should have at most ${schema.maxItems} items`));
  }
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    errs.push(field.invalid(path, value.length, `${name(path)} in body should have at least ${schema.minItems} items`));
  }
  const items = Array.isArray(schema.items) ? undefined : schema.items;
  if (items !== undefined) value.forEach((item, i) => walk(items, item, `${path}[${i}]`, errs));
  // x-kubernetes-list-type: set items and map keys are unique (upstream's listtype validation).
  const listType = schema[LIST_TYPE];
  if (listType === "set") {
    value.forEach((item, i) => {
      if (value.slice(0, i).some((prev) => deepEqual(prev, item))) errs.push(field.duplicate(`${path}[${i}]`, item));
    });
  } else if (listType === "map") {
    const keys = schema[LIST_MAP_KEYS] ?? [];
    const seen: unknown[][] = [];
    value.forEach((item, i) => {
      if (!isObject(item)) return;
      const key = keys.map((k) => item[k]);
      if (seen.some((prev) => deepEqual(prev, key))) errs.push(field.duplicate(`${path}[${i}]`, Object.fromEntries(keys.map((k) => [k, item[k]]))));
      seen.push(key);
    });
  }
}

function objectChecks(schema: JSONSchemaProps, value: Json, path: string, errs: FieldError[]): void {
  for (const req of Array.isArray(schema.required) ? schema.required : []) {
    if (!(req in value)) errs.push(field.required(childPath(path, req), ""));
  }
  const count = Object.keys(value).length;
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    errs.push(field.invalid(path, count, `${name(path)} in body should have at most ${schema.maxProperties} properties`));
  }
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    errs.push(field.invalid(path, count, `${name(path)} in body should have at least ${schema.minProperties} properties`));
  }
  const additional = isObject(schema.additionalProperties) ? (schema.additionalProperties as JSONSchemaProps) : undefined;
  for (const [key, v] of Object.entries(value)) {
    // The root's and an embedded object's metadata is ObjectMeta, checked as metadata; the schema may only restrict name and generateName.
    if (key === "metadata" && (path === "" || schema[EMBEDDED] === true)) {
      const meta = schema.properties?.["metadata"];
      if (isObject(v) && meta !== undefined) {
        for (const sub of ["name", "generateName"]) {
          const restriction = meta.properties?.[sub];
          if (restriction !== undefined && sub in v) walk(restriction, v[sub], childPath(childPath(path, key), sub), errs);
        }
      }
      continue;
    }
    const prop = schema.properties?.[key];
    if (prop !== undefined) walk(prop, v, childPath(path, key), errs);
    else if (additional !== undefined) walk(additional, v, childPath(path, key), errs);
  }
  if (schema[EMBEDDED] === true) {
    if (typeof value["apiVersion"] !== "string" || value["apiVersion"] === "") errs.push(field.required(childPath(path, "apiVersion"), "must not be empty"));
    if (typeof value["kind"] !== "string" || value["kind"] === "") errs.push(field.required(childPath(path, "kind"), "must not be empty"));
  }
}

function combinators(schema: JSONSchemaProps, value: unknown, path: string, errs: FieldError[]): void {
  const passes = (s: JSONSchemaProps) => validateValue(s, value, path).length === 0;
  const quoted = JSON.stringify(name(path));
  if (schema.allOf !== undefined) {
    const before = errs.length;
    for (const s of schema.allOf) walk(s, value, path, errs);
    if (errs.length > before) errs.push(field.invalid(path, "", `${quoted} must validate all the schemas (allOf)`));
  }
  if (schema.anyOf !== undefined && !schema.anyOf.some(passes)) {
    errs.push(field.invalid(path, "", `${quoted} must validate at least one schema (anyOf)`));
  }
  if (schema.oneOf !== undefined) {
    const n = schema.oneOf.filter(passes).length;
    if (n !== 1) errs.push(field.invalid(path, "", `${quoted} must validate one and only one schema (oneOf). ${n > 1 ? `Found ${n} valid alternatives` : ""}`));
  }
  if (schema.not !== undefined && passes(schema.not)) {
    errs.push(field.invalid(path, "", `${quoted} must not validate the schema (not)`));
  }
}

// ---- pruning ----

/**
 * Drop the fields the schema does not name (upstream's pruning), in place.
 * Returns the paths dropped, in document order. At the root (and in embedded
 * resources) apiVersion, kind and metadata are kept.
 */
export function prune(schema: JSONSchemaProps, value: unknown, path = "", root = true): string[] {
  const dropped: string[] = [];
  pruneWalk(schema, value, path, root, dropped);
  return dropped;
}

function pruneWalk(schema: JSONSchemaProps, value: unknown, path: string, root: boolean, dropped: string[]): void {
  if (Array.isArray(value)) {
    const items = Array.isArray(schema.items) ? undefined : schema.items;
    if (items !== undefined) value.forEach((item, i) => pruneWalk(items, item, `${path}[${i}]`, false, dropped));
    return;
  }
  if (!isObject(value)) return;
  const embedded = root || schema[EMBEDDED] === true;
  const preserve = schema[PRESERVE] === true;
  const additional = schema.additionalProperties;
  for (const key of Object.keys(value)) {
    if (embedded && (key === "apiVersion" || key === "kind" || key === "metadata")) {
      if (key === "metadata" && !root && isObject(value[key])) pruneEmbeddedMetadata(value[key] as Json, childPath(path, key), dropped);
      continue;
    }
    const prop = schema.properties?.[key];
    if (prop !== undefined) pruneWalk(prop, value[key], childPath(path, key), false, dropped);
    else if (isObject(additional)) pruneWalk(additional as JSONSchemaProps, value[key], childPath(path, key), false, dropped);
    else if (additional === true || preserve) continue;
    else {
      dropped.push(childPath(path, key));
      delete value[key];
    }
  }
}

const EMBEDDED_META_FIELDS = new Set(["name", "namespace", "generateName", "labels", "annotations", "finalizers", "ownerReferences", "uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"]);

function pruneEmbeddedMetadata(meta: Json, path: string, dropped: string[]): void {
  for (const key of Object.keys(meta)) {
    if (!EMBEDDED_META_FIELDS.has(key)) {
      dropped.push(childPath(path, key));
      delete meta[key];
    }
  }
}

// ---- defaulting ----

/** Apply the schema's `default`s in place (upstream's structural defaulting): absent fields, and null ones that may not be null. */
export function applyDefaults(schema: JSONSchemaProps, value: unknown): void {
  if (Array.isArray(value)) {
    const items = Array.isArray(schema.items) ? undefined : schema.items;
    if (items !== undefined) for (let i = 0; i < value.length; i++) value[i] = defaultedItem(items, value[i]);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, prop] of Object.entries(schema.properties ?? {})) {
    if (prop.default !== undefined && (!(key in value) || (value[key] === null && !prop.nullable))) value[key] = structuredClone(prop.default);
  }
  for (const [key, v] of Object.entries(value)) {
    const prop = schema.properties?.[key] ?? (isObject(schema.additionalProperties) ? (schema.additionalProperties as JSONSchemaProps) : undefined);
    if (prop !== undefined) {
      if (v === null && prop.default !== undefined && !prop.nullable) value[key] = structuredClone(prop.default);
      applyDefaults(prop, value[key]);
    }
  }
}

function defaultedItem(items: JSONSchemaProps, item: unknown): unknown {
  const out = item === null && items.default !== undefined && !items.nullable ? structuredClone(items.default) : item;
  applyDefaults(items, out);
  return out;
}

/** Does any part of the schema carry a default? */
export function hasDefaults(schema: JSONSchemaProps | undefined): boolean {
  return someSchema(schema, (s) => s.default !== undefined);
}

/** Whether `pred` holds for the schema or any schema nested in it. */
export function someSchema(schema: JSONSchemaProps | undefined, pred: (s: JSONSchemaProps) => boolean): boolean {
  if (schema === undefined || !isObject(schema as unknown)) return false;
  if (pred(schema)) return true;
  const nested: (JSONSchemaProps | undefined)[] = [
    ...Object.values(schema.properties ?? {}),
    ...(Array.isArray(schema.items) ? schema.items : [schema.items]),
    isObject(schema.additionalProperties) ? (schema.additionalProperties as JSONSchemaProps) : undefined,
    ...(schema.allOf ?? []),
    ...(schema.anyOf ?? []),
    ...(schema.oneOf ?? []),
    schema.not,
  ];
  return nested.some((s) => someSchema(s, pred));
}
