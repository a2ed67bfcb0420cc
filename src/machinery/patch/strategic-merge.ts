// Strategic merge patch for built-in types (seed 000, "Update mechanisms":
// application/strategic-merge-patch+json): JSON merge patch, except that lists
// declared `patchStrategy: merge` merge by their `patchMergeKey` (or as sets of
// primitives), and the `$patch`, `$retainKeys`, `$deleteFromPrimitiveList/<f>`
// and `$setElementOrder/<f>` directives steer the merge. Semantics and error
// texts follow upstream's apply side (k8s.io/apimachinery strategicpatch); where
// upstream would store a directive or a null verbatim (it relies on decoding
// into Go structs to drop them), we consume it instead. Pure: inputs are copied.

import { badRequest, internalError } from "../errors.js";
import type { Schema, SchemaRegistry, TypeDef } from "../schema.js";
import { isWellKnown } from "../schema.js";
import { badArgType, goValue, patchRejected, patchUnclassified } from "./errors.js";
import { cloneJson, hasOwn, isJsonObject, setOwn, type JsonObject } from "./json-value.js";
import type { Json } from "./merge-patch.js";

export interface StrategicMergeContext {
  readonly registry: SchemaRegistry;
  /** The OpenAPI definition name of the document's type, e.g. `io.k8s.api.core.v1.Pod`. */
  readonly type: string;
}

const DIRECTIVE = "$patch";
const RETAIN_KEYS = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER = "$setElementOrder";

// mergepatch's sentinel errors that upstream's handler turns into 400 BadRequest.
const BAD_PRIMITIVE_LIST = "invalid patch format of primitive list";
const BAD_RETAIN_KEYS = "invalid patch format of retainKeys";
const BAD_SET_ELEMENT_ORDER = "invalid patch format of setElementOrder list";

/**
 * Applies `patch` to `original` (an object of type `ctx.type`) and returns the
 * result. Errors carry upstream's status: malformed directives → 400, lists of
 * lists → 422, other inconsistencies (a merge-list item without its merge key,
 * an unknown `$patch` value) → 500 with upstream's message, as upstream answers.
 * `$patch: merge` is refused as upstream does: the merge strategy lives in the
 * schema, never in a patch.
 */
export function applyStrategicMergePatch(original: unknown, patch: unknown, ctx: StrategicMergeContext): Json {
  // Upstream decodes the body into a Go map: `null` leaves it empty, anything else but an object fails.
  if (patch === null || patch === undefined) return cloneJson(original ?? {});
  if (!isJsonObject(patch)) {
    const kind = Array.isArray(patch) ? "array" : typeof patch === "boolean" ? "bool" : typeof patch;
    throw badRequest(`json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`);
  }
  if (original !== null && original !== undefined && !isJsonObject(original)) {
    throw internalError(new Error("strategic merge patch: the original document is not an object"));
  }
  const def = ctx.registry.get(ctx.type);
  if (def === undefined) throw internalError(new Error(`strategic merge patch: no schema for ${ctx.type}`));
  // Work on private copies: the merge below edits them in place, and a thrown
  // error simply abandons them, so the patch applies entirely or not at all.
  const base = cloneJson(original ?? {}) as JsonObject;
  const result = new StrategicMerge(ctx.registry).mergeObject(base, cloneJson(patch) as JsonObject, { kind: "type", def });
  // `$patch: delete` at the top clears the document (upstream answers an empty map).
  return result === DELETE ? {} : result;
}

/** Returned by mergeObject for `$patch: delete`: the caller removes the value. */
const DELETE = Symbol("delete");

/** What the schema says about an object: a named type, a map of one value schema, or nothing. */
type Shape = { kind: "type"; def: TypeDef } | { kind: "map"; values: Schema } | { kind: "unknown" };

const UNKNOWN: Shape = { kind: "unknown" };

interface FieldMeta {
  readonly schema: Schema | undefined;
  /** "merge" (lists merge), "replace" (maps are taken whole) or "" (the default). */
  readonly strategy: "merge" | "replace" | "";
  readonly mergeKey: string;
}

const NO_META: FieldMeta = { schema: undefined, strategy: "", mergeKey: "" };

/** Go's `==` on decoded JSON: equal primitives match; maps and lists never do. */
function sameKey(a: unknown, b: unknown): boolean {
  return a === b && (a === null || typeof a !== "object");
}

/** `$prefix/<field>` → field, or undefined when the key is malformed. */
function directiveField(key: string, prefix: string): string | undefined {
  const slash = key.indexOf("/");
  if (slash < 0 || key.slice(0, slash) !== prefix) return undefined;
  return key.slice(slash + 1);
}

function noMergeKey(item: unknown, mergeKey: string): Error {
  return patchUnclassified(`map: ${goValue(item)} does not contain declared merge key: ${mergeKey}`);
}

class StrategicMerge {
  readonly #registry: SchemaRegistry;

  constructor(registry: SchemaRegistry) {
    this.#registry = registry;
  }

  #shapeOf(schema: Schema | undefined): Shape {
    if (schema === undefined) return UNKNOWN;
    if (schema.type === "map") return { kind: "map", values: schema.values };
    if (schema.type === "ref" && !isWellKnown(schema.name)) {
      const def = this.#registry.get(schema.name);
      if (def !== undefined) return { kind: "type", def };
    }
    return UNKNOWN;
  }

  #fieldOf(shape: Shape, key: string): FieldMeta {
    if (shape.kind === "map") return { schema: shape.values, strategy: "", mergeKey: "" };
    if (shape.kind === "unknown" || !Object.prototype.hasOwnProperty.call(shape.def.fields, key)) return NO_META;
    const field = shape.def.fields[key]!;
    // retainKeys only tells clients to send `$retainKeys`; applying never depends on it.
    const strategies = (field.patchStrategy ?? "").split(",");
    const strategy = strategies.includes("merge") ? "merge" : strategies.includes("replace") ? "replace" : "";
    return { schema: field.schema, strategy, mergeKey: field.patchMergeKey ?? "" };
  }

  #elementShape(field: FieldMeta): Shape {
    return field.schema?.type === "array" ? this.#shapeOf(field.schema.items) : UNKNOWN;
  }

  /** Merges `patch` into `original` (edited in place and returned), or DELETE. */
  mergeObject(original: JsonObject, patch: JsonObject, shape: Shape): JsonObject | typeof DELETE {
    if (hasOwn(patch, DIRECTIVE)) {
      const directive = patch[DIRECTIVE];
      if (directive === "delete") return DELETE;
      if (directive !== "replace") throw patchUnclassified(`unknown patch type: ${goValue(directive)} in map: ${goValue(patch)}`);
      // Replace: the patch, taken literally, is the new map (its own nested directives still apply).
      delete patch[DIRECTIVE];
      return this.mergeObject({}, patch, shape);
    }

    this.#retainKeys(original, patch);
    this.#setElementOrders(original, patch, shape);

    const deletions: Array<[string, Json]> = [];
    for (const key of Object.keys(patch)) {
      const value = patch[key]!;
      if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
        const field = directiveField(key, DELETE_FROM_PRIMITIVE_LIST);
        if (field === undefined) throw badRequest(BAD_PRIMITIVE_LIST);
        deletions.push([field, value]);
        continue;
      }
      this.#mergeField(original, key, value, this.#fieldOf(shape, key));
    }
    // Deletions run after the merge, so a patch that adds some entries and removes others
    // (what kubectl apply sends for finalizers) does not depend on key order.
    for (const [field, values] of deletions) {
      if (values === null) continue;
      if (!Array.isArray(values)) throw badRequest(BAD_PRIMITIVE_LIST);
      const current = hasOwn(original, field) ? original[field] : undefined;
      // Deleting from a list that is absent deletes nothing (upstream would store the deletion list).
      if (!Array.isArray(current)) continue;
      const doomed = new Set(values.filter(isPrimitive));
      setOwn(original, field, current.filter((item) => !(isPrimitive(item) && doomed.has(item))));
    }
    return original;
  }

  /** `$retainKeys`: keys of the original not listed are cleared; the patch may only set listed keys. */
  #retainKeys(original: JsonObject, patch: JsonObject): void {
    if (!hasOwn(patch, RETAIN_KEYS)) return;
    const listed = patch[RETAIN_KEYS];
    delete patch[RETAIN_KEYS];
    if (!Array.isArray(listed)) throw badRequest(BAD_RETAIN_KEYS);
    const keep = new Set(listed.filter((k): k is string => typeof k === "string"));
    for (const key of Object.keys(patch)) {
      if (patch[key] === null || key.startsWith(DELETE_FROM_PRIMITIVE_LIST) || key.startsWith(SET_ELEMENT_ORDER)) continue;
      if (!keep.has(key)) throw badRequest(BAD_RETAIN_KEYS);
    }
    for (const key of Object.keys(original)) if (!keep.has(key)) delete original[key];
  }

  /**
   * `$setElementOrder/<field>`: merges the field's patch list now (removing it from
   * the patch) and orders the result: listed items in the directive's order,
   * items only the server has kept where they were relative to them.
   */
  #setElementOrders(original: JsonObject, patch: JsonObject, shape: Shape): void {
    for (const key of Object.keys(patch)) {
      if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
      const order = patch[key];
      delete patch[key];
      if (!Array.isArray(order)) throw badArgType("[]interface {}", order);
      const field = directiveField(key, SET_ELEMENT_ORDER);
      if (field === undefined) throw badRequest(BAD_SET_ELEMENT_ORDER);
      const meta = this.#fieldOf(shape, field);

      const inOriginal = hasOwn(original, field);
      const inPatch = hasOwn(patch, field);
      const originalList = inOriginal ? original[field] : [];
      const patchList = inPatch ? patch[field] : [];
      if (!Array.isArray(originalList)) throw badArgType("[]interface {}", originalList);
      if (!Array.isArray(patchList)) throw badArgType("[]interface {}", patchList);
      this.#checkOrder(patchList, order, meta.mergeKey);
      if (!inOriginal && !inPatch) continue;

      let merged = originalList;
      if (inPatch) {
        merged = meta.strategy === "merge" ? this.#mergeList(originalList, patchList, meta) : patchList;
        delete patch[field];
      }
      const objects = merged.some(isJsonObject);
      // A list of objects without a merge key has no identity to order by; it stays as merged.
      if (merged.length > 0 && (meta.mergeKey !== "" || !objects)) {
        merged = this.#ordered(merged, order, originalList, objects ? meta.mergeKey : "");
      }
      setOwn(original, field, merged);
    }
  }

  /** The patch list must list its items in the directive's relative order, and only items the directive lists. */
  #checkOrder(patchList: readonly Json[], order: readonly Json[], mergeKey: string): void {
    if (order.length === 0 || patchList.length === 0) return;
    let items = patchList;
    if (mergeKey !== "") {
      for (const item of patchList) if (!isJsonObject(item)) throw badArgType("map[string]interface {}", item);
      items = patchList.filter((item) => (item as JsonObject)[DIRECTIVE] !== "delete");
    }
    const key = (item: Json): Json | undefined => {
      if (mergeKey === "") return item;
      if (!isJsonObject(item)) throw badArgType("map[string]interface {}", item);
      if (!hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
      return item[mergeKey];
    };
    let p = 0;
    let s = 0;
    while (p < items.length && s < order.length) {
      const item = items[p]!;
      if (isJsonObject(item) && hasOwn(item, DIRECTIVE)) {
        p++;
        continue;
      }
      if (sameKey(key(item), key(order[s]!))) p++;
      s++;
    }
    if (p < items.length) {
      throw patchUnclassified(
        `The order in patch list:\n${goValue(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goValue(order)}\n`,
      );
    }
  }

  #mergeField(target: JsonObject, key: string, value: Json, field: FieldMeta): void {
    if (value === null) {
      delete target[key];
      return;
    }
    const current = hasOwn(target, key) ? target[key] : undefined;
    let result: Json | typeof DELETE = value;
    if (isJsonObject(value)) {
      // A missing or non-map original, or a `replace` field, merges into an empty map so directives are consumed.
      const base = isJsonObject(current) && field.strategy !== "replace" ? current : {};
      result = this.mergeObject(base, value, this.#shapeOf(field.schema));
    } else if (Array.isArray(value) && field.strategy === "merge") {
      result = this.#mergeList(Array.isArray(current) ? current : [], value, field);
    }
    // Other lists and scalars replace, as in JSON merge patch.
    if (result === DELETE) delete target[key];
    else setOwn(target, key, result);
  }

  /** A list with the merge strategy: maps by merge key, primitives as a set. */
  #mergeList(original: Json[], patch: Json[], field: FieldMeta): Json[] {
    if (original.length === 0 && patch.length === 0) return original;
    const kind = elementKind(original, patch);
    if (kind !== "map") {
      // A set of primitives: the union, in patch order, server-only entries kept in place.
      const merged = [...new Set([...original, ...patch])];
      return this.#ordered(merged, patch, original, "");
    }

    const mergeKey = field.mergeKey;
    if (mergeKey === "") {
      const elem = this.#elementShape(field);
      throw patchUnclassified(`cannot merge lists without merge key for type ${elem.kind === "type" ? "struct" : elem.kind === "map" ? "map" : "interface"}`);
    }
    const elementShape = this.#elementShape(field);

    // Directive items first: `$patch: delete` removes every match, `$patch: replace` drops the server's list.
    let base = original;
    let items: JsonObject[] = [];
    let replace = false;
    for (const item of patch as JsonObject[]) {
      if (!hasOwn(item, DIRECTIVE)) {
        items.push(item);
        continue;
      }
      const directive = item[DIRECTIVE];
      if (directive === "delete") {
        if (!hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
        base = base.filter((o) => !(isJsonObject(o) && hasOwn(o, mergeKey) && sameKey(o[mergeKey], item[mergeKey])));
      } else if (directive === "replace") {
        replace = true;
      } else if (directive === "merge") {
        throw patchUnclassified("merging lists cannot yet be specified in the patch");
      } else {
        throw patchUnclassified(`unknown patch type: ${goValue(directive)} in map: ${goValue(item)}`);
      }
    }
    if (replace) {
      base = items.map((item) => this.#fresh(item, elementShape));
      items = [];
    }

    // Patch items merge into the first entry with the same key, or are appended.
    const merged = base.slice();
    const position = new Map<unknown, number>();
    merged.forEach((o, i) => {
      if (!isJsonObject(o)) throw patchUnclassified(`value for key ${i} is not a map.`);
      if (hasOwn(o, mergeKey) && isPrimitive(o[mergeKey]) && !position.has(o[mergeKey])) position.set(o[mergeKey], i);
    });
    for (const item of items) {
      if (!hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
      const keyValue = item[mergeKey];
      const at = isPrimitive(keyValue) ? position.get(keyValue) : undefined;
      if (at !== undefined) {
        const result = this.mergeObject(merged[at] as JsonObject, item, elementShape);
        if (result !== DELETE) merged[at] = result;
      } else {
        if (isPrimitive(keyValue) && !position.has(keyValue)) position.set(keyValue, merged.length);
        merged.push(this.#fresh(item, elementShape));
      }
    }
    return this.#ordered(merged, items, base, mergeKey);
  }

  /** A patch map that has no counterpart: applied to an empty map, so its directives and nulls are consumed. */
  #fresh(item: JsonObject, shape: Shape): JsonObject {
    const result = this.mergeObject({}, item, shape);
    return result === DELETE ? {} : result;
  }

  /**
   * Upstream's ordering rule (normalizeElementOrder): entries named in `patchOrder`
   * come in that order; entries only the server has keep their order from
   * `serverOrder`, and one goes before a patch entry only if the server already
   * had it before that entry. Keys are the merge key's value, or the item itself.
   */
  #ordered(merged: Json[], patchOrder: readonly Json[], serverOrder: readonly Json[], mergeKey: string): Json[] {
    const keyOf = (item: Json): unknown => (mergeKey === "" ? item : isJsonObject(item) ? item[mergeKey] : undefined);
    if (mergeKey !== "") {
      for (const list of [merged, patchOrder, serverOrder]) {
        for (const item of list) {
          if (!isJsonObject(item)) throw badArgType("map[string]interface {}", item);
          if (!hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
        }
      }
    }
    const patchIndex = firstIndexes(patchOrder, keyOf);
    const serverIndex = firstIndexes(serverOrder, keyOf);
    const indexIn = (index: Map<unknown, number>, item: Json): number => {
      const k = keyOf(item);
      return isPrimitive(k) ? (index.get(k) ?? -1) : -1;
    };

    const fromPatch: Json[] = [];
    const serverOnly: Json[] = [];
    for (const item of merged) (indexIn(patchIndex, item) >= 0 ? fromPatch : serverOnly).push(item);
    const byIndex = (items: Json[], index: Map<unknown, number>): Json[] =>
      items
        .map((item, pos) => ({ item, pos, at: indexIn(index, item) }))
        // Items the order does not mention go last, keeping their relative order.
        .sort((a, b) => (a.at < 0 ? Infinity : a.at) - (b.at < 0 ? Infinity : b.at) || a.pos - b.pos)
        .map((e) => e.item);
    const left = byIndex(serverOnly, serverIndex);
    const right = byIndex(fromPatch, patchIndex);

    const out: Json[] = [];
    let i = 0;
    let j = 0;
    while (i < left.length || j < right.length) {
      if (i >= left.length) out.push(right[j++]!);
      else if (j >= right.length) out.push(left[i++]!);
      else {
        const l = indexIn(serverIndex, left[i]!);
        const r = indexIn(serverIndex, right[j]!);
        out.push(l >= 0 && r >= 0 && l < r ? left[i++]! : right[j++]!);
      }
    }
    return out;
  }
}

function isPrimitive(value: unknown): boolean {
  return value === null || typeof value !== "object";
}

function firstIndexes(list: readonly Json[], keyOf: (item: Json) => unknown): Map<unknown, number> {
  const index = new Map<unknown, number>();
  list.forEach((item, i) => {
    const k = keyOf(item);
    if (isPrimitive(k) && !index.has(k)) index.set(k, i);
  });
  return index;
}

/** The common kind of the elements: maps, or one primitive type. Mixed kinds and nested lists are refused, as upstream. */
function elementKind(...lists: Json[][]): "map" | "string" | "number" | "bool" | "nil" {
  let kind: "map" | "string" | "number" | "bool" | "nil" | undefined;
  for (const list of lists) {
    for (const item of list) {
      if (Array.isArray(item)) throw patchRejected("lists of lists are not supported");
      const k = isJsonObject(item) ? "map" : item === null ? "nil" : typeof item === "boolean" ? "bool" : typeof item === "number" ? "number" : "string";
      if (kind === undefined) kind = k;
      else if (kind !== k) throw patchUnclassified(`list element types are not identical: ${goValue(lists)}`);
    }
  }
  return kind ?? "nil";
}
