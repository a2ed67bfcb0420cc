// Field paths and sets of them, the currency of server-side apply: what each
// manager owns. A set is a trie of path elements serialized as upstream's
// `fieldsV1` (structured-merge-diff's fieldpath package): `f:`, `k:`, `v:`, `i:`.

import { goJson, goNumber, goQuote } from "../go-format.js";

/** A JSON value as it appears in list keys and set items. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** One step of a path: a struct or map field, a keyed list item, a set item, or an atomic list index. */
export type PathElement =
  | { readonly kind: "field"; readonly name: string }
  /** Key fields sorted by name, as upstream's FieldList. */
  | { readonly kind: "key"; readonly fields: readonly (readonly [string, JsonValue])[] }
  | { readonly kind: "value"; readonly value: JsonValue }
  | { readonly kind: "index"; readonly index: number };

export type FieldPath = readonly PathElement[];

export const fieldElement = (name: string): PathElement => ({ kind: "field", name });
export const indexElement = (index: number): PathElement => ({ kind: "index", index });
export const valueElement = (value: JsonValue): PathElement => ({ kind: "value", value });

/** A key element from name/value pairs in any order; upstream sorts them by name (byte order). */
export function keyElement(fields: Iterable<readonly [string, JsonValue]>): PathElement {
  const sorted = [...fields].sort((a, b) => compareStrings(a[0], b[0]));
  return { kind: "key", fields: sorted };
}

/**
 * Serialized key and value elements, per element object: a walk reuses one
 * element in every path below it, and Go-style JSON of keys was the largest
 * cost of building field sets.
 */
const SERIALIZED = new WeakMap<PathElement, string>();

/** `f:name`, `k:{"name":"main"}`, `v:"x"`, `i:0`: the fieldsV1 key of one element. */
export function serializePathElement(pe: PathElement): string {
  switch (pe.kind) {
    case "field":
      return "f:" + pe.name;
    case "index":
      return "i:" + String(pe.index);
  }
  let s = SERIALIZED.get(pe);
  if (s === undefined) {
    // Key fields are already sorted, and goJson sorts nested objects like Go's encoder.
    s = pe.kind === "key" ? "k:{" + pe.fields.map(([name, value]) => goJson(name) + ":" + goJson(value)).join(",") + "}" : "v:" + goJson(pe.value);
    SERIALIZED.set(pe, s);
  }
  return s;
}

/** Parses one fieldsV1 key; undefined for an unknown prefix (upstream drops those silently). */
export function parsePathElement(s: string): PathElement | undefined {
  if (s.length < 2 || s[1] !== ":") throw new Error(`invalid path element ${JSON.stringify(s)}`);
  const body = s.slice(2);
  switch (s[0]) {
    case "f":
      return { kind: "field", name: body };
    case "v":
      return { kind: "value", value: JSON.parse(body) as JsonValue };
    case "k": {
      const obj: unknown = JSON.parse(body);
      if (typeof obj !== "object" || obj === null || Array.isArray(obj)) throw new Error(`invalid key element ${JSON.stringify(s)}`);
      return keyElement(Object.entries(obj as Record<string, JsonValue>));
    }
    case "i": {
      if (!/^-?\d+$/.test(body)) throw new Error(`invalid index element ${JSON.stringify(s)}`);
      return { kind: "index", index: Number(body) };
    }
    default:
      return undefined;
  }
}

/**
 * Human form used in conflict messages (upstream's Path.String):
 * `.spec.containers[name="main"].image`, `[="x"]` for set items, `[0]` for indexes.
 */
export function formatPath(path: FieldPath): string {
  let out = "";
  for (const pe of path) {
    switch (pe.kind) {
      case "field":
        out += "." + pe.name;
        break;
      case "key":
        out += "[" + pe.fields.map(([name, value]) => `${name}=${valueToString(value)}`).join(",") + "]";
        break;
      case "value":
        out += `[=${valueToString(pe.value)}]`;
        break;
      case "index":
        out += `[${pe.index}]`;
        break;
    }
  }
  return out;
}

/** upstream's value.ToString: %q strings, %v numbers and bools, lists bracketed. */
function valueToString(v: JsonValue): string {
  if (v === null) return "null";
  if (typeof v === "string") return goQuote(v);
  if (typeof v === "number") return goNumber(v);
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return "[" + v.map(valueToString).join(",") + "]";
  return Object.entries(v as Record<string, JsonValue>)
    .map(([k, x]) => `${k}=${valueToString(x)}`)
    .join("");
}

// ---- ordering: upstream's PathElement.Compare (fields < keys < values < indexes) ----

/** Go's strings.Compare: byte order of the UTF-8 encoding, which differs from UTF-16 order above the BMP. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

const TYPE_RANK = { number: 0, string: 1, boolean: 2, list: 3, map: 4, null: 5 } as const;

function rankOf(v: JsonValue): number {
  if (v === null) return TYPE_RANK.null;
  if (Array.isArray(v)) return TYPE_RANK.list;
  switch (typeof v) {
    case "number":
      return TYPE_RANK.number;
    case "string":
      return TYPE_RANK.string;
    case "boolean":
      return TYPE_RANK.boolean;
    default:
      return TYPE_RANK.map;
  }
}

/** upstream's value.Compare: numbers < strings < bools < lists < maps < null, then by content. */
export function compareValues(a: JsonValue, b: JsonValue): number {
  const ra = rankOf(a);
  const rb = rankOf(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if (typeof a === "number" && typeof b === "number") return a === b ? 0 : a < b ? -1 : 1;
  if (typeof a === "string" && typeof b === "string") return compareStrings(a, b);
  if (typeof a === "boolean" && typeof b === "boolean") return a === b ? 0 : a ? 1 : -1;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareValues(a[i] as JsonValue, b[i] as JsonValue);
      if (c !== 0) return c;
    }
    return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  }
  if (a === null || b === null) return 0;
  // Maps: as sorted field lists.
  const fa = Object.entries(a as Record<string, JsonValue>).sort((x, y) => compareStrings(x[0], y[0]));
  const fb = Object.entries(b as Record<string, JsonValue>).sort((x, y) => compareStrings(x[0], y[0]));
  return compareFieldLists(fa, fb);
}

function compareFieldLists(a: readonly (readonly [string, JsonValue])[], b: readonly (readonly [string, JsonValue])[]): number {
  for (let i = 0; ; i++) {
    if (i >= a.length && i >= b.length) return 0;
    if (i >= a.length) return -1;
    if (i >= b.length) return 1;
    const c = compareStrings(a[i]![0], b[i]![0]) || compareValues(a[i]![1], b[i]![1]);
    if (c !== 0) return c;
  }
}

const KIND_RANK = { field: 0, key: 1, value: 2, index: 3 } as const;

export function comparePathElements(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return KIND_RANK[a.kind] < KIND_RANK[b.kind] ? -1 : 1;
  switch (a.kind) {
    case "field":
      return compareStrings(a.name, (b as typeof a).name);
    case "key":
      return compareFieldLists(a.fields, (b as typeof a).fields);
    case "value":
      return compareValues(a.value, (b as typeof a).value);
    case "index": {
      const j = (b as typeof a).index;
      return a.index === j ? 0 : a.index < j ? -1 : 1;
    }
  }
}

// ---- the set ----

/**
 * A set of field paths as a trie: `members` end a path here, `children` lead
 * deeper. Elements are keyed by their serialized form, so equal elements
 * collapse. Operations return new sets; only `insert` changes a set in place
 * (use it while building one).
 */
export class FieldSet {
  readonly #members = new Map<string, PathElement>();
  readonly #children = new Map<string, { readonly pe: PathElement; readonly set: FieldSet }>();

  static of(...paths: FieldPath[]): FieldSet {
    const set = new FieldSet();
    for (const p of paths) set.insert(p);
    return set;
  }

  /** Parses a `fieldsV1` object; unknown element prefixes are dropped, as upstream does. */
  static fromJSON(fieldsV1: unknown): FieldSet {
    const set = new FieldSet();
    if (fieldsV1 === undefined || fieldsV1 === null) return set;
    if (typeof fieldsV1 !== "object" || Array.isArray(fieldsV1)) throw new Error("fieldsV1 must be an object");
    for (const [key, sub] of Object.entries(fieldsV1 as Record<string, unknown>)) {
      if (key === ".") continue; // handled by the parent: "." marks the parent element as a member
      const pe = parsePathElement(key);
      if (pe === undefined) continue;
      const child = FieldSet.fromJSON(sub);
      const subObj = (sub ?? {}) as Record<string, unknown>;
      const keys = Object.keys(subObj);
      // `{}` is a member with no children; `{".":{}, ...}` is both; `{...}` only children.
      if (keys.length === 0 || Object.hasOwn(subObj, ".")) set.#members.set(key, pe);
      if (!child.isEmpty()) set.#children.set(key, { pe, set: child });
    }
    return set;
  }

  insert(path: FieldPath): this {
    if (path.length === 0) return this;
    let node: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) {
      const pe = path[i]!;
      const key = serializePathElement(pe);
      let next = node.#children.get(key);
      if (next === undefined) {
        next = { pe, set: new FieldSet() };
        node.#children.set(key, next);
      }
      node = next.set;
    }
    const last = path[path.length - 1]!;
    node.#members.set(serializePathElement(last), last);
    return this;
  }

  has(path: FieldPath): boolean {
    if (path.length === 0) return false;
    let node: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && node; i++) node = node.#children.get(serializePathElement(path[i]!))?.set;
    return node !== undefined && node.#members.has(serializePathElement(path[path.length - 1]!));
  }

  /** The subset under one element (its children), empty when none. */
  child(pe: PathElement): FieldSet {
    return this.#children.get(serializePathElement(pe))?.set ?? new FieldSet();
  }

  /** Whether pe is a member at this level. */
  hasMember(pe: PathElement): boolean {
    return this.#members.has(serializePathElement(pe));
  }

  /** hasMember by the element's serialized form (`f:name`), for walks that already have it. */
  hasMemberKey(key: string): boolean {
    return this.#members.size !== 0 && this.#members.has(key);
  }

  /** The subset under the element serialized as `key`, undefined when there is none (child() without allocating). */
  childAt(key: string): FieldSet | undefined {
    return this.#children.size === 0 ? undefined : this.#children.get(key)?.set;
  }

  isEmpty(): boolean {
    return this.#members.size === 0 && this.#children.size === 0;
  }

  /** Number of member paths. */
  size(): number {
    let n = this.#members.size;
    for (const { set } of this.#children.values()) n += set.size();
    return n;
  }

  union(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.#members) out.#members.set(k, pe);
    for (const [k, pe] of other.#members) out.#members.set(k, pe);
    for (const [k, c] of this.#children) {
      const o = other.#children.get(k);
      out.#children.set(k, { pe: c.pe, set: o ? c.set.union(o.set) : c.set.union(new FieldSet()) });
    }
    for (const [k, o] of other.#children) if (!this.#children.has(k)) out.#children.set(k, { pe: o.pe, set: o.set.union(new FieldSet()) });
    return out;
  }

  /** Paths in this set but not in other; exact paths, so removing a parent keeps its children (as upstream). */
  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.#members) if (!other.#members.has(k)) out.#members.set(k, pe);
    for (const [k, c] of this.#children) {
      const o = other.#children.get(k);
      const sub = o ? c.set.difference(o.set) : c.set.union(new FieldSet());
      if (!sub.isEmpty()) out.#children.set(k, { pe: c.pe, set: sub });
    }
    return out;
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.#members) if (other.#members.has(k)) out.#members.set(k, pe);
    for (const [k, c] of this.#children) {
      const o = other.#children.get(k);
      if (!o) continue;
      const sub = c.set.intersection(o.set);
      if (!sub.isEmpty()) out.#children.set(k, { pe: c.pe, set: sub });
    }
    return out;
  }

  equals(other: FieldSet): boolean {
    return this.difference(other).isEmpty() && other.difference(this).isEmpty();
  }

  /** Every member path, in upstream's order (children before deeper paths, sorted by element). */
  paths(): FieldPath[] {
    const out: FieldPath[] = [];
    this.#walk([], out);
    return out;
  }

  #walk(prefix: PathElement[], out: FieldPath[]): void {
    // upstream's Set.Iterate: members at this level first, then each child subtree.
    for (const pe of sortedElements([...this.#members.values()])) out.push([...prefix, pe]);
    for (const { pe, set } of sortedChildren(this.#children)) set.#walk([...prefix, pe], out);
  }

  /**
   * The `fieldsV1` object. Key order is upstream's byte order: elements
   * sorted, a member that also has children written as `{...children, ".":{}}`
   * ("." last, as upstream's emitContentsV1), so JSON.stringify of it is
   * exactly the bytes upstream stores.
   */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const entries: { pe: PathElement; key: string }[] = [];
    const seen = new Set<string>();
    for (const [key, pe] of this.#members) {
      entries.push({ pe, key });
      seen.add(key);
    }
    for (const [key, { pe }] of this.#children) if (!seen.has(key)) entries.push({ pe, key });
    entries.sort((a, b) => comparePathElements(a.pe, b.pe));
    for (const { key } of entries) {
      const child = this.#children.get(key);
      if (child === undefined) {
        out[key] = {};
      } else {
        const sub = child.set.toJSON();
        if (this.#members.has(key)) sub["."] = {};
        out[key] = sub;
      }
    }
    return out;
  }

  toString(): string {
    return JSON.stringify(this.toJSON());
  }
}

function sortedElements(pes: PathElement[]): PathElement[] {
  return pes.sort(comparePathElements);
}

function sortedChildren(children: Map<string, { readonly pe: PathElement; readonly set: FieldSet }>) {
  return [...children.values()].sort((a, b) => comparePathElements(a.pe, b.pe));
}
