// The rules a CRD's openAPIV3Schema must meet (upstream's CRD schema
// validation and structural schema rules, with their messages): types
// everywhere, items for arrays, no additionalProperties beside properties,
// only name and generateName under the root's metadata, value validations
// only inside allOf/anyOf/oneOf/not, and the x-kubernetes-* extensions used
// as upstream allows. Defaults must validate against their schema and be pruned.

import { field, type FieldError } from "../../machinery/index.js";
import type { JSONSchemaProps } from "./types.js";
import { compilePattern, EMBEDDED, INT_OR_STRING, isObject as isJsonObject, LIST_MAP_KEYS, LIST_TYPE, MAP_TYPE, PRESERVE, prune, validateValue, VALIDATIONS } from "./json-schema.js";

/** A plain object (without narrowing the schema's type). */
const isObject = (v: unknown): boolean => isJsonObject(v);

const TYPES = ["array", "boolean", "integer", "number", "object", "string"];

type Where = "root" | "items" | "field" | "additional";

export interface SchemaCheckOptions {
  /** The version serves /status: only some fields may sit at the root. */
  readonly statusEnabled: boolean;
}

const ALLOWED_AT_ROOT_WITH_STATUS = new Set(["description", "type", "required", "properties", "x-kubernetes-preserve-unknown-fields", VALIDATIONS, "$schema", "title", "nullable", "x-kubernetes-embedded-resource"]);

/** Every error of one version's openAPIV3Schema, at `path` (`spec.versions[0].schema.openAPIV3Schema`). */
export function validateSchema(schema: unknown, path: string, options: SchemaCheckOptions): FieldError[] {
  if (!isObject(schema)) return [field.invalid(path, schema, "must be an object")];
  const s = schema as JSONSchemaProps;
  const errs: FieldError[] = [];
  if (options.statusEnabled) {
    if (s.type !== undefined && s.type !== "object") {
      errs.push(field.invalid(`${path}.type`, s.type, `only "object" is allowed as the type at the root of the schema if the status subresource is enabled`));
    } else {
      const extra = Object.keys(s).filter((k) => !ALLOWED_AT_ROOT_WITH_STATUS.has(k));
      if (extra.length > 0) {
        errs.push(field.invalid(path, "", `only [description type required properties x-kubernetes-preserve-unknown-fields x-kubernetes-validations] fields are allowed at the root of the schema if the status subresource is enabled`));
      }
    }
  }
  if (s.nullable === true) errs.push(field.forbidden(`${path}.nullable`, "nullable cannot be true at the root"));
  node(s, path, "root", false, errs);
  if (s.type !== undefined && s.type !== "object") errs.push(field.invalid(`${path}.type`, s.type, "must be object at the root"));
  if (s.additionalProperties !== undefined && s.additionalProperties !== false) errs.push(field.forbidden(`${path}.additionalProperties`, "must not be used at the root"));
  rootMeta(s, path, errs);
  if (errs.length === 0) defaults(s, s, path, errs);
  return errs;
}

/** The structural rules of one schema node (and, recursively, its children). */
function node(s: JSONSchemaProps, path: string, where: Where, insideMeta: boolean, errs: FieldError[]): void {
  if (!isObject(s)) {
    errs.push(field.invalid(path, s, "must be a schema object"));
    return;
  }
  // Free-form fields of the decoder (schemas.ts) get their JSON shapes checked here.
  if (s.enum !== undefined && !Array.isArray(s.enum)) errs.push(field.invalid(`${path}.enum`, s.enum, "must be an array"));
  if (s.items !== undefined && !isObject(s.items) && !Array.isArray(s.items)) errs.push(field.invalid(`${path}.items`, s.items, "must be a schema object"));
  if (s.additionalProperties !== undefined && typeof s.additionalProperties !== "boolean" && !isObject(s.additionalProperties)) {
    errs.push(field.invalid(`${path}.additionalProperties`, s.additionalProperties, "must be a boolean or a schema object"));
  }
  if (typeof s.type !== "string" && s.type !== undefined) {
    errs.push(field.invalid(`${path}.type`, s.type, "must be a string"));
    return;
  }
  if (s.type !== undefined && !TYPES.includes(s.type)) {
    if (s.type === "null") errs.push(field.forbidden(`${path}.type`, "type cannot be set to null, use nullable as an alternative"));
    else errs.push(field.notSupported(`${path}.type`, s.type, TYPES));
  }
  if (s.id !== undefined && s.id !== "") errs.push(field.forbidden(`${path}.id`, "id is not supported"));
  if (s.additionalItems !== undefined) errs.push(field.forbidden(`${path}.additionalItems`, "additionalItems is not supported"));
  if (s.patternProperties !== undefined) errs.push(field.forbidden(`${path}.patternProperties`, "patternProperties is not supported"));
  if (s.definitions !== undefined) errs.push(field.forbidden(`${path}.definitions`, "definitions is not supported"));
  if (s.dependencies !== undefined) errs.push(field.forbidden(`${path}.dependencies`, "dependencies is not supported"));
  if (s.$ref !== undefined && s.$ref !== "") errs.push(field.forbidden(`${path}.$ref`, "$ref is not supported"));
  if (Array.isArray(s.items)) errs.push(field.forbidden(`${path}.items`, "items must be a schema object and not an array"));
  if (s.uniqueItems === true) errs.push(field.forbidden(`${path}.uniqueItems`, "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"));
  if (s.additionalProperties !== undefined && s.properties !== undefined && Object.keys(s.properties).length > 0) {
    errs.push(field.forbidden(`${path}.additionalProperties`, "additionalProperties and properties are mutual exclusive"));
  }
  if (insideMeta && s[EMBEDDED] === true) errs.push(field.forbidden(`${path}.x-kubernetes-embedded-resource`, "must not be used inside of resource meta"));
  if (s.pattern !== undefined && compilePattern(s.pattern) === null) {
    errs.push(field.invalid(`${path}.pattern`, s.pattern, `must be a valid regular expression, but isn't: error parsing regexp: ${s.pattern}`));
  }
  if (s[PRESERVE] === false) errs.push(field.invalid(`${path}.x-kubernetes-preserve-unknown-fields`, false, "must be true or undefined"));
  const intOrString = s[INT_OR_STRING] === true;
  // Structural: a type everywhere, unless int-or-string or preserve-unknown-fields stand for it.
  if ((s.type === undefined || s.type === "") && !intOrString && s[PRESERVE] !== true) {
    const detail = where === "root" ? "must not be empty at the root" : where === "items" ? "must not be empty for specified array items" : "must not be empty for specified object fields";
    errs.push(field.required(`${path}.type`, detail));
  }
  if (intOrString) {
    if (s[PRESERVE] === true) errs.push(field.invalid(`${path}.x-kubernetes-preserve-unknown-fields`, true, "must be false if x-kubernetes-int-or-string is true"));
    if (s[EMBEDDED] === true) errs.push(field.invalid(`${path}.x-kubernetes-embedded-resource`, true, "must be false if x-kubernetes-int-or-string is true"));
  }
  if (s[EMBEDDED] === true) {
    if (s.type !== "object") {
      errs.push(s.type === undefined ? field.required(`${path}.type`, "must be object if x-kubernetes-embedded-resource is true") : field.invalid(`${path}.type`, s.type, "must be object if x-kubernetes-embedded-resource is true"));
    }
    if (s.additionalProperties !== undefined) errs.push(field.forbidden(`${path}.additionalProperties`, "must not be used if x-kubernetes-embedded-resource is set"));
    if (s[PRESERVE] !== true && (s.properties === undefined || Object.keys(s.properties).length === 0)) {
      errs.push(field.required(`${path}.properties`, "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"));
    }
  }
  if (s.type === "array" && s.items === undefined) errs.push(field.required(`${path}.items`, "must be specified"));
  listAndMapTypes(s, path, errs);
  for (const [i, rule] of (s[VALIDATIONS] ?? []).entries()) {
    const p = `${path}.x-kubernetes-validations[${i}]`;
    if (!isObject(rule) || typeof rule.rule !== "string" || rule.rule.trim() === "") errs.push(field.required(`${p}.rule`, "rule is not specified"));
    else if (rule.message !== undefined && rule.message.trim() === "") errs.push(field.invalid(`${p}.message`, rule.message, "message must be non-empty if specified"));
    else if (rule.message !== undefined && /[\r\n]/.test(rule.message)) errs.push(field.invalid(`${p}.message`, rule.message, "message must not contain line breaks"));
    else if (rule.message === undefined && /[\r\n]/.test(rule.rule)) errs.push(field.required(`${p}.message`, "message must be specified if rule contains line breaks"));
  }
  for (const [key, prop] of Object.entries(s.properties ?? {})) {
    const nestedMeta = insideMeta || (s[EMBEDDED] === true && (key === "metadata" || key === "apiVersion" || key === "kind"));
    node(prop, `${path}.properties[${key}]`, "field", nestedMeta, errs);
  }
  if (isObject(s.items)) node(s.items as JSONSchemaProps, `${path}.items`, "items", insideMeta, errs);
  if (isObject(s.additionalProperties)) node(s.additionalProperties as JSONSchemaProps, `${path}.additionalProperties`, "additional", insideMeta, errs);
  junctors(s, path, errs);
}

/** upstream's two int-or-string exceptions: `anyOf: [{type: integer}, {type: string}]`, directly or as allOf[0]. */
function isIntOrStringAnyOf(anyOf: JSONSchemaProps[] | undefined): boolean {
  return Array.isArray(anyOf) && anyOf.length === 2 && JSON.stringify(anyOf[0]) === '{"type":"integer"}' && JSON.stringify(anyOf[1]) === '{"type":"string"}';
}

/** allOf/anyOf/oneOf/not: value validations only (nested ones too). */
function junctors(s: JSONSchemaProps, path: string, errs: FieldError[], skipAnyOf = isIntOrStringAnyOf(s.anyOf)): void {
  if (!skipAnyOf) (Array.isArray(s.anyOf) ? s.anyOf : []).forEach((sub, i) => valueValidationOnly(sub, `${path}.anyOf[${i}]`, errs));
  (Array.isArray(s.allOf) ? s.allOf : []).forEach((sub, i) => valueValidationOnly(sub, `${path}.allOf[${i}]`, errs, i === 0 && isIntOrStringAnyOf(sub?.anyOf)));
  (Array.isArray(s.oneOf) ? s.oneOf : []).forEach((sub, i) => valueValidationOnly(sub, `${path}.oneOf[${i}]`, errs));
  if (s.not !== undefined) valueValidationOnly(s.not, `${path}.not`, errs);
}

function listAndMapTypes(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  const mapType = s[MAP_TYPE];
  if (mapType !== undefined) {
    if (s.type !== "object") errs.push(s.type === undefined ? field.required(`${path}.type`, "must be object if x-kubernetes-map-type is specified") : field.invalid(`${path}.type`, s.type, "must be object if x-kubernetes-map-type is specified"));
    if (mapType !== "atomic" && mapType !== "granular") errs.push(field.notSupported(`${path}.x-kubernetes-map-type`, mapType, ["atomic", "granular"]));
  }
  const listType = s[LIST_TYPE];
  const keys = s[LIST_MAP_KEYS] ?? [];
  if (listType !== undefined) {
    if (s.type !== "array") errs.push(s.type === undefined ? field.required(`${path}.type`, "must be array if x-kubernetes-list-type is specified") : field.invalid(`${path}.type`, s.type, "must be array if x-kubernetes-list-type is specified"));
    if (!["atomic", "set", "map"].includes(listType)) errs.push(field.notSupported(`${path}.x-kubernetes-list-type`, listType, ["atomic", "set", "map"]));
    const items = isObject(s.items) ? (s.items as JSONSchemaProps) : undefined;
    if (listType === "set" && items !== undefined && (items.type === "object" || items.type === "array") && items[LIST_TYPE] !== undefined && items[LIST_TYPE] !== "atomic") {
      errs.push(field.invalid(`${path}.items.x-kubernetes-list-type`, items[LIST_TYPE], "must be atomic as item of a list with x-kubernetes-list-type=set"));
    }
  }
  if (keys.length > 0 && listType !== "map") {
    errs.push(listType === undefined ? field.required(`${path}.x-kubernetes-list-type`, "must be map if x-kubernetes-list-map-keys is non-empty") : field.invalid(`${path}.x-kubernetes-list-type`, listType, "must be map if x-kubernetes-list-map-keys is non-empty"));
  }
  if (listType === "map") {
    if (keys.length === 0) errs.push(field.required(`${path}.x-kubernetes-list-map-keys`, "must not be empty if x-kubernetes-list-type is map"));
    const items = s.items;
    if (items === undefined) errs.push(field.required(`${path}.items`, "must have a schema if x-kubernetes-list-type is map"));
    else if (isObject(items)) {
      const it = items as JSONSchemaProps;
      if (it.type !== "object") errs.push(field.invalid(`${path}.items.type`, it.type ?? "", "must be object if parent array's x-kubernetes-list-type is map"));
      else {
        for (const k of keys) {
          const p = it.properties?.[k];
          if (p === undefined) {
            errs.push(field.invalid(`${path}.x-kubernetes-list-map-keys`, keys, "entries must all be names of item properties"));
            break;
          }
          if (p.type === "object" || p.type === "array") errs.push(field.invalid(`${path}.items.properties[${k}].type`, p.type, "must be a scalar type if parent array's x-kubernetes-list-type is map"));
          if (p.default === undefined && !(it.required ?? []).includes(k)) {
            errs.push(field.required(`${path}.items.properties[${k}].default`, "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"));
          }
          if (p.nullable === true) errs.push(field.forbidden(`${path}.items.properties[${k}].nullable`, "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"));
        }
        if (new Set(keys).size !== keys.length) errs.push(field.invalid(`${path}.x-kubernetes-list-map-keys`, keys, "must not contain duplicate entries"));
      }
    }
  }
  if ((listType === "map" || listType === "set") && isObject(s.items) && (s.items as JSONSchemaProps).nullable === true) {
    errs.push(field.forbidden(`${path}.items.nullable`, `cannot be nullable when x-kubernetes-list-type is ${listType}`));
  }
}

/** Inside allOf/anyOf/oneOf/not: value validations only (upstream's "must be empty to be structural"). */
function valueValidationOnly(s: JSONSchemaProps, path: string, errs: FieldError[], skipAnyOf = false): void {
  if (!isObject(s)) return;
  junctors(s, path, errs, skipAnyOf);
  if (s.properties?.["metadata"] !== undefined) errs.push(field.forbidden(`${path}.properties[metadata]`, "must not be specified in a nested context"));
  if (s.type !== undefined) errs.push(field.forbidden(`${path}.type`, "must be empty to be structural"));
  if (s.additionalProperties !== undefined) errs.push(field.forbidden(`${path}.additionalProperties`, "must be undefined to be structural"));
  if (s.default !== undefined) errs.push(field.forbidden(`${path}.default`, "must be undefined to be structural"));
  if (s.title !== undefined && s.title !== "") errs.push(field.forbidden(`${path}.title`, "must be empty to be structural"));
  if (s.description !== undefined && s.description !== "") errs.push(field.forbidden(`${path}.description`, "must be empty to be structural"));
  if (s.nullable === true) errs.push(field.forbidden(`${path}.nullable`, "must be false to be structural"));
  if (s[PRESERVE] === true) errs.push(field.forbidden(`${path}.x-kubernetes-preserve-unknown-fields`, "must be false to be structural"));
  if (s[EMBEDDED] === true) errs.push(field.forbidden(`${path}.x-kubernetes-embedded-resource`, "must be false to be structural"));
  if (s[INT_OR_STRING] === true) errs.push(field.forbidden(`${path}.x-kubernetes-int-or-string`, "must be false to be structural"));
  if (s[LIST_MAP_KEYS] !== undefined) errs.push(field.forbidden(`${path}.x-kubernetes-list-map-keys`, "must be empty to be structural"));
  if (s[LIST_TYPE] !== undefined) errs.push(field.forbidden(`${path}.x-kubernetes-list-type`, "must be undefined to be structural"));
  if (s[MAP_TYPE] !== undefined) errs.push(field.forbidden(`${path}.x-kubernetes-map-type`, "must be undefined to be structural"));
  if (s[VALIDATIONS] !== undefined) errs.push(field.forbidden(`${path}.x-kubernetes-validations`, "must be empty to be structural"));
  for (const [k, p] of Object.entries(s.properties ?? {})) valueValidationOnly(p, `${path}.properties[${k}]`, errs);
  if (isObject(s.items)) valueValidationOnly(s.items as JSONSchemaProps, `${path}.items`, errs);
}

/** The root's metadata may only restrict name and generateName (as strings). */
function rootMeta(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  const meta = s.properties?.["metadata"];
  if (meta === undefined || !isObject(meta)) return;
  const p = `${path}.properties[metadata]`;
  if (meta.type !== undefined && meta.type !== "object") {
    errs.push(field.invalid(`${p}.type`, meta.type, "must be object"));
    return;
  }
  const allowedKeys = new Set(["type", "properties", "description"]);
  const extraKeys = Object.keys(meta).filter((k) => !allowedKeys.has(k));
  const extraProps = Object.keys(meta.properties ?? {}).filter((k) => k !== "name" && k !== "generateName");
  const badProps = ["name", "generateName"].some((k) => {
    const q = meta.properties?.[k];
    return q !== undefined && (q.type !== "string" || Object.keys(q).some((key) => !["type", "description", "pattern", "maxLength", "minLength", "format", "enum"].includes(key)));
  });
  if (extraKeys.length > 0 || extraProps.length > 0 || badProps) {
    errs.push(field.forbidden(p, "must not specify anything other than name and generateName, but metadata is implicitly specified"));
  }
  if (s.properties?.["kind"] !== undefined && s.properties["kind"].type !== "string") errs.push(field.invalid(`${path}.properties[kind].type`, s.properties["kind"].type ?? "", "must be string"));
  if (s.properties?.["apiVersion"] !== undefined && s.properties["apiVersion"].type !== "string") {
    errs.push(field.invalid(`${path}.properties[apiVersion].type`, s.properties["apiVersion"].type ?? "", "must be string"));
  }
}

/** Each default validates against its own schema and survives pruning (upstream's structural defaulting rules). */
function defaults(s: JSONSchemaProps, _root: JSONSchemaProps, path: string, errs: FieldError[]): void {
  const visit = (node: JSONSchemaProps, p: string, metaContext: boolean) => {
    if (!isObject(node)) return;
    if (node.default !== undefined) {
      if (metaContext) errs.push(field.forbidden(`${p}.default`, "must not be set inside metadata"));
      else {
        const copy = structuredClone(node.default);
        const dropped = prune(node, copy, "", false);
        if (dropped.length > 0) errs.push(field.invalid(`${p}.default`, node.default, `must not have unknown fields`));
        for (const e of validateValue(node, node.default, "")) {
          errs.push(field.invalid(`${p}.default${e.field === "" ? "" : "." + e.field}`, e.badValue, e.detail || (e.type === "FieldValueRequired" ? "Required value" : "Unsupported value")));
        }
      }
    }
    for (const [k, prop] of Object.entries(node.properties ?? {})) visit(prop, `${p}.properties[${k}]`, metaContext || (p === path && k === "metadata"));
    if (isObject(node.items)) visit(node.items as JSONSchemaProps, `${p}.items`, metaContext);
    if (isObject(node.additionalProperties)) visit(node.additionalProperties as JSONSchemaProps, `${p}.additionalProperties`, metaContext);
  };
  visit(s, path, false);
}
