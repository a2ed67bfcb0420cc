// Objects walked through their schema, the way structured-merge-diff's `typed`
// package does: the field set an object sets, the comparison of two objects
// (added/removed/modified paths), the merge of an applied configuration into a
// live object, and the removal of paths. Pure: inputs are never mutated.

import { goJson } from "../go-format.js";
import { isWellKnown, type Field, type Schema, type SchemaRegistry, type TypeDef } from "../schema.js";
import {
  FieldSet,
  compareStrings,
  comparePathElements,
  fieldElement,
  keyElement,
  serializePathElement,
  valueElement,
  type FieldPath,
  type JsonValue,
  type PathElement,
} from "./field-set.js";
import { copyJson } from "../patch/json-value.js";

/** Which schema an object is walked with: the registry and the root type name (`io.k8s.api.apps.v1.Deployment`). */
export interface TypeContext {
  readonly registry: SchemaRegistry;
  readonly type: string;
}

/**
 * Struct types upstream marks `+structType=atomic` (x-kubernetes-map-type:
 * atomic): owned and replaced as a whole. Our schema language has no marker
 * for this yet, so the list lives here.
 */
const ATOMIC_STRUCTS = new Set([
  "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
  "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
  "io.k8s.api.core.v1.LocalObjectReference",
  "io.k8s.api.core.v1.ObjectReference",
  "io.k8s.api.core.v1.TypedLocalObjectReference",
  "io.k8s.api.core.v1.ConfigMapKeySelector",
  "io.k8s.api.core.v1.SecretKeySelector",
  "io.k8s.api.core.v1.ObjectFieldSelector",
  "io.k8s.api.core.v1.ResourceFieldSelector",
  "io.k8s.api.core.v1.SecretReference",
  "io.k8s.api.core.v1.NodeSelector",
  "io.k8s.api.core.v1.NodeSelectorTerm",
  "io.k8s.api.core.v1.TopologySelectorTerm",
]);

/** A schema node resolved for walking. */
type Shape =
  | { readonly kind: "leaf" }
  | { readonly kind: "struct"; readonly def: TypeDef }
  | { readonly kind: "map"; readonly values: Shape }
  | { readonly kind: "list"; readonly mode: "atomic" | "set" | "map"; readonly keys: readonly string[]; readonly items: Shape; readonly keyDefaults: ReadonlyMap<string, unknown> };

const LEAF: Shape = { kind: "leaf" };

/** Resolves schemas to shapes once per registry (shapes are reused across every walk). */
class Shapes {
  readonly #registry: SchemaRegistry;
  /** createdFieldsV1's answers by object structure (see createdSignature); dropped with the shapes when types change. */
  readonly created = new Map<string, Record<string, unknown>>();
  readonly #byType = new Map<string, Shape>();
  readonly #byField = new WeakMap<Field | Schema, Shape>();

  constructor(registry: SchemaRegistry) {
    this.#registry = registry;
  }

  ofType(name: string): Shape {
    let shape = this.#byType.get(name);
    if (shape === undefined) {
      const def = isWellKnown(name) || ATOMIC_STRUCTS.has(name) ? undefined : this.#registry.get(name);
      shape = def === undefined ? LEAF : { kind: "struct", def };
      this.#byType.set(name, shape);
    }
    return shape;
  }

  ofField(field: Field): Shape {
    let shape = this.#byField.get(field);
    if (shape === undefined) {
      shape = this.#ofSchema(field.schema, field);
      this.#byField.set(field, shape);
    }
    return shape;
  }

  #ofSchema(schema: Schema, field?: Field): Shape {
    switch (schema.type) {
      case "ref":
        return this.ofType(schema.name);
      case "map":
        return { kind: "map", values: this.#ofSchema(schema.values) };
      case "array": {
        const items = this.#ofSchema(schema.items);
        // upstream's schema conversion: an explicit list type wins; otherwise a
        // strategic-merge key makes a map list and merge without a key a set.
        let mode: "atomic" | "set" | "map" = schema.listType ?? "atomic";
        let keys: readonly string[] = schema.listMapKeys ?? [];
        if (schema.listType === undefined && field?.patchStrategy?.split(",").includes("merge")) {
          if (field.patchMergeKey !== undefined) {
            mode = "map";
            keys = [field.patchMergeKey];
          } else if (items.kind === "leaf") {
            mode = "set";
          }
        }
        if (mode === "map" && keys.length === 0) mode = "atomic";
        const keyDefaults = new Map<string, unknown>();
        if (mode === "map" && schema.items.type === "ref") {
          const def = this.#registry.get(schema.items.name);
          for (const k of keys) if (def?.fields[k]?.default !== undefined) keyDefaults.set(k, def.fields[k]!.default);
        }
        return { kind: "list", mode, keys, items, keyDefaults };
      }
      default:
        // Scalars, and `any` (RawExtension, JSON): owned as a whole.
        return LEAF;
    }
  }
}

const SHAPES = new WeakMap<SchemaRegistry, { shapes: Shapes; revision: number }>();

/** The registry's shapes, resolved anew when its types were replaced (custom resources). */
function shapesOf(registry: SchemaRegistry): Shapes {
  let entry = SHAPES.get(registry);
  if (entry === undefined || entry.revision !== registry.revision) {
    entry = { shapes: new Shapes(registry), revision: registry.revision };
    SHAPES.set(registry, entry);
  }
  return entry.shapes;
}

function rootShape(ctx: TypeContext): Shape {
  const shape = shapesOf(ctx.registry).ofType(ctx.type);
  if (shape.kind !== "struct") throw new Error(`apply: unknown type ${ctx.type}`);
  return shape;
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The shape of a struct field or map value; fields the schema does not know are owned as a whole. */
function childShape(shapes: Shapes, shape: Shape, name: string): Shape {
  if (shape.kind === "struct") {
    const field = shape.def.fields[name];
    return field === undefined ? LEAF : shapes.ofField(field);
  }
  if (shape.kind === "map") return shape.values;
  return LEAF;
}

/** A value that does not fit its shape (a string where a struct belongs) is treated as a leaf. */
function effective(shape: Shape, value: unknown): Shape {
  if (value === undefined || value === null) return shape;
  if ((shape.kind === "struct" || shape.kind === "map") && !isObject(value)) return LEAF;
  if (shape.kind === "list" && !Array.isArray(value)) return LEAF;
  return shape;
}

/** The path element of a list item: by key fields (defaults filling omitted keys) or by value. */
function itemElement(shape: Extract<Shape, { kind: "list" }>, item: unknown): PathElement {
  if (shape.mode === "set") return valueElement(item as JsonValue);
  const fields: [string, JsonValue][] = [];
  const obj = isObject(item) ? item : {};
  for (const k of shape.keys) {
    const v = obj[k] ?? shape.keyDefaults.get(k);
    // An item missing a key field is keyed by the fields it has (upstream rejects it).
    if (v !== undefined && v !== null) fields.push([k, v as JsonValue]);
  }
  return keyElement(fields);
}

function elementKey(pe: PathElement): string {
  switch (pe.kind) {
    case "field":
      return "f" + pe.name;
    case "index":
      return "i" + pe.index;
    default:
      return JSON.stringify(pe);
  }
}

/** Items of a list by element, first occurrence wins (as upstream's compare ignores repeats). */
function indexItems(shape: Extract<Shape, { kind: "list" }>, list: readonly unknown[] | undefined) {
  const order: { pe: PathElement; key: string }[] = [];
  const byKey = new Map<string, unknown>();
  for (const item of list ?? []) {
    const pe = itemElement(shape, item);
    const key = elementKey(pe);
    if (byKey.has(key)) continue;
    byKey.set(key, item);
    order.push({ pe, key });
  }
  return { order, byKey };
}

// ---------------------------------------------------------------- field sets

/**
 * The set of fields an object (or applied configuration) sets, as upstream's
 * TypedValue.ToFieldSet: scalars and atomic values are members; list items are
 * members too (their "."); struct fields are only members when null or `{}`;
 * map entries always are.
 */
export function fieldSetOf(obj: unknown, ctx: TypeContext): FieldSet {
  const set = new FieldSet();
  const shapes = shapesOf(ctx.registry);
  walkSet(shapes, rootShape(ctx), obj, [], set);
  return set;
}

function walkSet(shapes: Shapes, declared: Shape, value: unknown, path: PathElement[], set: FieldSet): void {
  const shape = effective(declared, value);
  switch (shape.kind) {
    case "leaf":
      set.insert(path);
      return;
    case "list":
      if (shape.mode === "atomic") {
        set.insert(path);
        return;
      }
      const items = indexItems(shape, value as unknown[] | undefined);
      for (const { pe, key } of items.order) {
        const itemPath = [...path, pe];
        walkSet(shapes, shape.items, items.byKey.get(key), itemPath, set);
        set.insert(itemPath);
      }
      return;
    case "struct":
    case "map": {
      if (!isObject(value)) return;
      for (const [name, v] of Object.entries(value)) {
        if (v === undefined) continue;
        const p = [...path, fieldElement(name)];
        walkSet(shapes, childShape(shapes, shape, name), v, p, set);
        const declaredField = shape.kind === "struct" && shape.def.fields[name] !== undefined;
        if (v === null || (isObject(v) && Object.keys(v).length === 0) || !declaredField) set.insert(p);
      }
      return;
    }
  }
}

// ---------------------------------------------------------------- compare

export interface Comparison {
  readonly added: FieldSet;
  readonly removed: FieldSet;
  readonly modified: FieldSet;
}

/**
 * What changed from `lhs` to `rhs`, as upstream's TypedValue.Compare: leaves
 * (scalars, atomic values, empty maps and lists) are added, removed or
 * modified; a map, list or item present on one side only is itself added or
 * removed besides its contents (this gives Update owners their "." entries).
 */
export function compare(lhs: unknown, rhs: unknown, ctx: TypeContext): Comparison {
  const c = { added: new FieldSet(), removed: new FieldSet(), modified: new FieldSet() };
  walkCompare(shapesOf(ctx.registry), rootShape(ctx), lhs, rhs, [], c, true);
  return c;
}

function isEmptyContainer(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObject(v)) return Object.keys(v).length === 0;
  return false;
}

function walkCompare(shapes: Shapes, declared: Shape, lhs: unknown, rhs: unknown, path: PathElement[], c: Comparison, root = false): void {
  const shapeL = effective(declared, lhs);
  const shapeR = effective(declared, rhs);
  // Values of different kinds (a list replaced by a string) are compared as leaves.
  const shape = shapeL.kind === shapeR.kind ? shapeR : LEAF;
  const leaf = () => {
    if (lhs === undefined) c.added.insert(path);
    else if (rhs === undefined) c.removed.insert(path);
    else if (!jsonEqual(lhs, rhs)) c.modified.insert(path);
  };
  if (shape.kind === "leaf" || (shape.kind === "list" && shape.mode === "atomic")) return leaf();
  if (isEmptyContainer(lhs) && isEmptyContainer(rhs)) return leaf();
  if (shape.kind === "list") {
    const l = indexItems(shape, Array.isArray(lhs) ? lhs : undefined);
    const r = indexItems(shape, Array.isArray(rhs) ? rhs : undefined);
    for (const { pe, key } of l.order) walkCompare(shapes, shape.items, l.byKey.get(key), r.byKey.get(key), [...path, pe], c);
    for (const { pe, key } of r.order) if (!l.byKey.has(key)) walkCompare(shapes, shape.items, undefined, r.byKey.get(key), [...path, pe], c);
  } else {
    const l = isObject(lhs) ? lhs : {};
    const r = isObject(rhs) ? rhs : {};
    for (const name of new Set([...Object.keys(l), ...Object.keys(r)])) {
      if (l[name] === undefined && r[name] === undefined) continue;
      walkCompare(shapes, childShape(shapes, shape, name), l[name], r[name], [...path, fieldElement(name)], c);
    }
  }
  if (root) return;
  if (lhs === undefined) c.added.insert(path);
  else if (rhs === undefined) c.removed.insert(path);
}

/** JSON equality; numbers compare numerically (1 and 1.0 are one value, as upstream). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}

// ---------------------------------------------------------------- fields of a create

/**
 * What compare(empty, obj) reports as modified or added, less `prefixes`
 * (each with everything below it) and less the exact paths of `exact`, as
 * the fieldsV1 object FieldSet.toJSON would give: the Update entry of a
 * create. `empty` is what a create is compared against (emptyLike: the
 * object's own apiVersion and kind, `{}` for the structs Go always has).
 * One walk builds the sorted fieldsV1 object directly: a created object has
 * no old side, so every node below the root is added, and the field sets,
 * their union, exclusion and sorting of the general path are not needed.
 * Undefined when two list items serialize to one element (the general path
 * merges those; they never occur in valid objects).
 */
export function createdFieldsV1(obj: Obj, empty: Obj, ctx: TypeContext, prefixes: FieldSet | undefined, exact: FieldSet | undefined): Obj | undefined {
  const shapes = shapesOf(ctx.registry);
  const root = rootShape(ctx);
  const signature = createdSignature(shapes, root, obj, empty);
  if (signature === undefined) return buildCreated(shapes, root, obj, empty, prefixes, exact);
  const key = `${setId(prefixes)}\u0000${setId(exact)}\u0000${ctx.type}\u0000${signature}`;
  let out = shapes.created.get(key);
  if (out === undefined) {
    out = buildCreated(shapes, root, obj, empty, prefixes, exact);
    if (out === undefined) return undefined;
    deepFreeze(out);
    if (shapes.created.size >= MAX_CREATED) shapes.created.clear();
    shapes.created.set(key, out);
  }
  return out;
}

/** How many created-object structures keep their fieldsV1 (per schema registry). */
const MAX_CREATED = 256;

/** Field sets by identity, for memo keys (the exclusions are a few long-lived sets). */
const SET_IDS = new WeakMap<FieldSet, number>();
let nextSetId = 1;

function setId(set: FieldSet | undefined): number {
  if (set === undefined) return 0;
  let id = SET_IDS.get(set);
  if (id === undefined) SET_IDS.set(set, (id = nextSetId++));
  return id;
}

function deepFreeze(obj: Obj): void {
  for (const k in obj) deepFreeze(obj[k] as Obj);
  Object.freeze(obj);
}

/**
 * What createdFieldsV1's answer depends on, as a string: the names present
 * at every level (length-prefixed), whether each value has children (struct,
 * map or list with content) or is a leaf, the elements of list items, and at
 * the root which fields the empty object has. Objects that differ only in
 * their leaves' values (names, images, labels' values: most creates) share
 * one answer. Undefined where the root is not what emptyLike makes.
 */
function createdSignature(shapes: Shapes, root: Shape, obj: Obj, empty: Obj): string | undefined {
  let sig = "";
  for (const name of Object.keys(obj)) {
    const r = obj[name];
    if (r === undefined) continue;
    const l = empty[name];
    const declared = root.kind === "struct" ? (declaredField(shapes, root, name)?.shape ?? LEAF) : LEAF;
    sig += name.length + ":" + name;
    if (l === undefined) sig += "A" + nodeSignature(shapes, declared, r);
    else if (isObject(l) && Object.keys(l).length === 0) {
      const shapeR = effective(declared, r);
      const shape = effective(declared, {}).kind === shapeR.kind ? shapeR : LEAF;
      if ((shape.kind === "struct" || shape.kind === "map") && !isEmptyContainer(r)) sig += "E" + nodeSignature(shapes, shape, r);
      else sig += jsonEqual({}, r) ? "=" : "!";
    } else if (l === r) sig += "S";
    else return undefined;
  }
  return sig;
}

function nodeSignature(shapes: Shapes, declared: Shape, value: unknown): string {
  if (isEmptyContainer(value)) return ".";
  const shape = effective(declared, value);
  if (shape.kind === "struct" || shape.kind === "map") {
    const obj = value as Obj;
    let sig = "{";
    for (const name of Object.keys(obj)) {
      const v = obj[name];
      if (v === undefined) continue;
      const child = shape.kind === "struct" ? (declaredField(shapes, shape, name)?.shape ?? LEAF) : shape.values;
      sig += name.length + ":" + name + nodeSignature(shapes, child, v);
    }
    return sig + "}";
  }
  if (shape.kind === "list" && shape.mode !== "atomic") {
    let sig = "[";
    for (const item of value as unknown[]) {
      const pe = elementKey(itemElement(shape, item));
      sig += pe.length + ":" + pe + nodeSignature(shapes, shape.items, item);
    }
    return sig + "]";
  }
  return ".";
}

function buildCreated(shapes: Shapes, root: Shape, obj: Obj, empty: Obj, prefixes: FieldSet | undefined, exact: FieldSet | undefined): Obj | undefined {
  try {
    let out: Obj | undefined;
    for (const name of sortedNames(obj)) {
      const key = "f:" + name;
      if (prefixes?.hasMemberKey(key)) continue;
      const l = empty[name];
      const r = obj[name];
      const declared = childShape(shapes, root, name);
      let sub: Obj | undefined;
      if (l === undefined) sub = addedNode(shapes, declared, r, !exact?.hasMemberKey(key), prefixes?.childAt(key), exact?.childAt(key));
      else if (isObject(l) && Object.keys(l).length === 0) sub = fromEmpty(shapes, declared, r, !exact?.hasMemberKey(key), prefixes?.childAt(key), exact?.childAt(key));
      else if (l !== r) return undefined; // apiVersion and kind are the object's own: never reached
      if (sub !== undefined) (out ??= {})[key] = sub;
    }
    return out ?? {};
  } catch (err) {
    if (err === COLLAPSED) return undefined;
    throw err;
  }
}

const COLLAPSED = new Error("two list items serialize to one path element");

/** Field names with a value, in upstream's order (Go's byte order). */
function sortedNames(obj: Obj): string[] {
  const names = Object.keys(obj);
  for (let i = 0; i < names.length; i++) {
    if (obj[names[i]!] === undefined) {
      names.splice(i, 1);
      i--;
    }
  }
  return names.length > 1 ? names.sort(compareStrings) : names;
}

/**
 * A node with nothing on the old side (walkCompare with lhs undefined): the
 * node itself is added, and so is everything below it. Returns its fieldsV1
 * value, undefined when the path and all below it are excluded.
 */
function addedNode(shapes: Shapes, declared: Shape, value: unknown, member: boolean, prefixes: FieldSet | undefined, exact: FieldSet | undefined): Obj | undefined {
  const shape = effective(declared, value);
  let children: Obj | undefined;
  if (!isEmptyContainer(value)) {
    if (shape.kind === "struct" || shape.kind === "map") children = addedFields(shapes, shape, value as Obj, prefixes, exact);
    else if (shape.kind === "list" && shape.mode !== "atomic") children = addedItems(shapes, shape, value as unknown[], prefixes, exact);
  }
  if (children === undefined) return member ? {} : undefined;
  if (member) children["."] = {};
  return children;
}

/** A struct's declared fields: element key and shape, resolved once per shape. */
const DECLARED = new WeakMap<Shape, Map<string, { readonly key: string; readonly shape: Shape }>>();

function declaredField(shapes: Shapes, shape: Extract<Shape, { kind: "struct" }>, name: string): { readonly key: string; readonly shape: Shape } | undefined {
  let fields = DECLARED.get(shape);
  if (fields === undefined) DECLARED.set(shape, (fields = new Map()));
  let f = fields.get(name);
  if (f === undefined && shape.def.fields[name] !== undefined) fields.set(name, (f = { key: "f:" + name, shape: childShape(shapes, shape, name) }));
  return f;
}

function addedFields(shapes: Shapes, shape: Shape, obj: Obj, prefixes: FieldSet | undefined, exact: FieldSet | undefined): Obj | undefined {
  let out: Obj | undefined;
  for (const name of sortedNames(obj)) {
    const declared = shape.kind === "struct" ? declaredField(shapes, shape, name) : undefined;
    const key = declared?.key ?? "f:" + name;
    if (prefixes?.hasMemberKey(key)) continue;
    const sub = addedNode(shapes, declared?.shape ?? childShape(shapes, shape, name), obj[name], !exact?.hasMemberKey(key), prefixes?.childAt(key), exact?.childAt(key));
    if (sub !== undefined) (out ??= {})[key] = sub;
  }
  return out;
}

function addedItems(shapes: Shapes, shape: Extract<Shape, { kind: "list" }>, list: unknown[], prefixes: FieldSet | undefined, exact: FieldSet | undefined): Obj | undefined {
  // indexItems' rule (first occurrence wins), keyed by the serialized element
  // instead: items equal by element are repeats; different items that
  // serialize alike would merge in a field set, which only the general path does.
  const items: { pe: PathElement; s: string; value: unknown }[] = [];
  let seen: Map<string, PathElement> | undefined;
  for (const value of list) {
    const pe = itemElement(shape, value);
    const s = pe.kind === "key" ? "k:{" + pe.fields.map(([name, v]) => goJson(name) + ":" + goJson(v)).join(",") + "}" : serializePathElement(pe);
    if (items.length > 0) {
      seen ??= new Map(items.map((i) => [i.s, i.pe]));
      const first = seen.get(s);
      if (first !== undefined) {
        if (elementKey(first) === elementKey(pe)) continue;
        throw COLLAPSED;
      }
      seen.set(s, pe);
    }
    items.push({ pe, s, value });
  }
  if (items.length > 1) items.sort((a, b) => comparePathElements(a.pe, b.pe));
  let out: Obj | undefined;
  for (const { s, value } of items) {
    if (prefixes?.hasMemberKey(s)) continue;
    const sub = addedNode(shapes, shape.items, value, !exact?.hasMemberKey(s), prefixes?.childAt(s), exact?.childAt(s));
    if (sub !== undefined) (out ??= {})[s] = sub;
  }
  return out;
}

/**
 * A node that is `{}` on the old side (metadata, spec, status of the empty
 * object), as walkCompare treats it: an object's fields are added, the node
 * itself is not; any other value is the node modified.
 */
function fromEmpty(shapes: Shapes, declared: Shape, value: unknown, member: boolean, prefixes: FieldSet | undefined, exact: FieldSet | undefined): Obj | undefined {
  const shapeL = effective(declared, {});
  const shapeR = effective(declared, value);
  const shape = shapeL.kind === shapeR.kind ? shapeR : LEAF;
  if ((shape.kind === "struct" || shape.kind === "map") && !isEmptyContainer(value)) return addedFields(shapes, shape, value as Obj, prefixes, exact);
  return member && !jsonEqual({}, value) ? {} : undefined;
}

// ---------------------------------------------------------------- merge

/**
 * The applied configuration merged into the live object (upstream's
 * TypedValue.Merge): struct fields and maps merge key by key, map and set
 * lists merge item by item in the applied order (live-only items keep their
 * place), everything atomic takes the applied value.
 */
export function merge(live: unknown, applied: unknown, ctx: TypeContext): unknown {
  return mergeValue(shapesOf(ctx.registry), rootShape(ctx), live, applied);
}

function mergeValue(shapes: Shapes, declared: Shape, lhs: unknown, rhs: unknown): unknown {
  if (rhs === undefined) return copyJson(lhs);
  if (lhs === undefined) return copyJson(rhs);
  const shapeL = effective(declared, lhs);
  const shapeR = effective(declared, rhs);
  const shape = shapeL.kind === shapeR.kind ? shapeR : LEAF;
  if (shape.kind === "leaf" || (shape.kind === "list" && shape.mode === "atomic")) return copyJson(rhs);
  // Empty or null on both sides: a leaf, so the applied null/empty distinction survives.
  if (isEmptyContainer(lhs) && isEmptyContainer(rhs)) return copyJson(rhs);
  if (shape.kind === "list") {
    const l = indexItems(shape, Array.isArray(lhs) ? lhs : undefined);
    const r = indexItems(shape, Array.isArray(rhs) ? rhs : undefined);
    return mergeOrder(l.order, r.order, (key) => l.byKey.has(key), (key) => r.byKey.has(key)).map((key) =>
      mergeValue(shapes, shape.items, l.byKey.get(key), r.byKey.get(key)),
    );
  }
  const l = isObject(lhs) ? lhs : {};
  const r = isObject(rhs) ? rhs : {};
  const out: Obj = {};
  for (const name of new Set([...Object.keys(l), ...Object.keys(r)])) {
    const v = mergeValue(shapes, childShape(shapes, shape, name), l[name], r[name]);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/**
 * The item order of a merged list, upstream's interleaving: shared items
 * follow the applied order, live-only items stay where they were relative to
 * the shared ones, applied-only items come where the applied list has them.
 */
function mergeOrder(
  lhs: readonly { key: string }[],
  rhs: readonly { key: string }[],
  inL: (key: string) => boolean,
  inR: (key: string) => boolean,
): string[] {
  const out: string[] = [];
  const shared = rhs.filter((x) => inL(x.key)).map((x) => x.key);
  let s = 0;
  let li = 0;
  let ri = 0;
  while (li < lhs.length || ri < rhs.length) {
    if (li < lhs.length && ri < rhs.length) {
      const lk = lhs[li]!.key;
      if (lk === rhs[ri]!.key) {
        out.push(lk);
        li++;
        ri++;
        s++;
        continue;
      }
      if (inR(lk) && s < shared.length && shared[s] !== lk) {
        li++; // a shared item the applied order places later
        continue;
      }
    }
    if (li < lhs.length && !inR(lhs[li]!.key)) {
      out.push(lhs[li]!.key);
      li++;
      continue;
    }
    if (ri < rhs.length) {
      const rk = rhs[ri]!.key;
      out.push(rk);
      ri++;
      if (s < shared.length && shared[s] === rk) s++;
      continue;
    }
    li++; // only shared live items left, all already placed
  }
  return out;
}

// ---------------------------------------------------------------- removal

/**
 * The object without the members of `set` (each with everything below it),
 * as upstream's TypedValue.RemoveItems. A struct left empty stays `{}`.
 */
export function removeItems(obj: unknown, set: FieldSet, ctx: TypeContext): unknown {
  return removeFrom(shapesOf(ctx.registry), rootShape(ctx), obj, set);
}

function removeFrom(shapes: Shapes, declared: Shape, value: unknown, set: FieldSet): unknown {
  if (set.isEmpty()) return value;
  const shape = effective(declared, value);
  if (shape.kind === "list" && shape.mode !== "atomic" && Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const pe = itemElement(shape, item);
      if (set.hasMember(pe)) continue;
      out.push(removeFrom(shapes, shape.items, item, set.child(pe)));
    }
    return out;
  }
  if ((shape.kind === "struct" || shape.kind === "map") && isObject(value)) {
    const out: Obj = {};
    for (const [name, v] of Object.entries(value)) {
      const pe = fieldElement(name);
      if (set.hasMember(pe)) continue;
      out[name] = removeFrom(shapes, childShape(shapes, shape, name), v, set.child(pe));
    }
    return out;
  }
  return value;
}

/**
 * The set plus every struct field it passes through (upstream's
 * EnsureNamedFieldsAreMembers): owning `.spec.strategy.type` counts as owning
 * `.spec.strategy`, but owning a label does not own another map key.
 */
export function withNamedFieldsAsMembers(set: FieldSet, ctx: TypeContext): FieldSet {
  const out = set.union(new FieldSet());
  const shapes = shapesOf(ctx.registry);
  for (const p of set.paths()) {
    let shape: Shape = rootShape(ctx);
    for (let i = 0; i < p.length - 1; i++) {
      const pe = p[i]!;
      if (pe.kind === "field") {
        if (shape.kind === "struct" && shape.def.fields[pe.name] !== undefined) out.insert(p.slice(0, i + 1) as FieldPath);
        shape = childShape(shapes, shape, pe.name);
      } else {
        shape = shape.kind === "list" ? shape.items : LEAF;
      }
    }
  }
  return out;
}
