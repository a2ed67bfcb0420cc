// metadata.managedFields: decoding entries into per-manager field sets,
// encoding them back in upstream's shape and order, and the bookkeeping of
// non-apply writes (POST/PUT/PATCH), where a manager takes what it changed.

import type { ApiObject, ManagedFieldsEntry } from "../meta.js";
import { formatTimestamp } from "../meta.js";
import { badRequest } from "../errors.js";
import { FieldSet, fieldElement, type FieldPath } from "./field-set.js";
import { compare, createdFieldsV1, type TypeContext } from "./typed.js";

/** One manager's entry while we work on it; `set` is what it owns. */
export interface ManagerEntry {
  readonly manager: string;
  readonly operation: "Apply" | "Update";
  readonly apiVersion: string;
  readonly time: string | undefined;
  readonly subresource: string | undefined;
  readonly set: FieldSet;
}

/** Entries by manager identity (see managerId). */
export type ManagedFields = Map<string, ManagerEntry>;

/**
 * Upstream's BuildManagerIdentifier: the entry without its fields and time,
 * and without apiVersion for appliers (an applier keeps one entry whatever
 * version it applies with). JSON with Go's field order; it also sorts
 * managers in conflict messages.
 */
export function managerId(e: Pick<ManagerEntry, "manager" | "operation" | "apiVersion" | "subresource">): string {
  const id: Record<string, string> = {};
  if (e.manager) id["manager"] = e.manager;
  id["operation"] = e.operation;
  if (e.operation === "Update" && e.apiVersion) id["apiVersion"] = e.apiVersion;
  if (e.subresource) id["subresource"] = e.subresource;
  return JSON.stringify(id);
}

/**
 * Paths upstream never records (its stripMetaManager): identity and
 * server-set metadata. Exact paths: `.metadata` itself is dropped, its other
 * fields (labels, annotations, finalizers, ...) are not.
 */
export const STRIPPED_FIELDS: FieldSet = FieldSet.of(
  [fieldElement("apiVersion")],
  [fieldElement("kind")],
  ...["", "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation", "managedFields", "resourceVersion"].map(
    (name): FieldPath => (name === "" ? [fieldElement("metadata")] : [fieldElement("metadata"), fieldElement(name)]),
  ),
);

/** How many Update entries an object keeps before the oldest merge into one (upstream's DefaultMaxUpdateManagers). */
export const MAX_UPDATE_MANAGERS = 10;
/** The manager the oldest Update entries merge into. */
export const ANCIENT_CHANGES_MANAGER = "ancient-changes";

/** Decodes metadata.managedFields; a malformed entry is a 400 (upstream rejects such writes). */
export function decodeManagedFields(entries: readonly ManagedFieldsEntry[] | undefined): ManagedFields {
  const out: ManagedFields = new Map();
  for (const [i, e] of (entries ?? []).entries()) {
    if (e.operation !== "Apply" && e.operation !== "Update") throw badRequest(`metadata.managedFields[${i}]: operation must be Apply or Update`);
    if (e.fieldsType !== "FieldsV1") throw badRequest(`metadata.managedFields[${i}]: invalid fieldsType ${JSON.stringify(e.fieldsType ?? "")}`);
    let set: FieldSet;
    try {
      set = FieldSet.fromJSON(e.fieldsV1 ?? {});
    } catch (err) {
      throw badRequest(`metadata.managedFields[${i}]: ${err instanceof Error ? err.message : String(err)}`);
    }
    const entry: ManagerEntry = {
      manager: e.manager ?? "",
      operation: e.operation,
      apiVersion: e.apiVersion ?? "",
      time: e.time,
      subresource: e.subresource || undefined,
      set,
    };
    const id = managerId(entry);
    if (out.has(id)) throw badRequest(`metadata.managedFields[${i}]: duplicate entry for manager ${JSON.stringify(entry.manager)}`);
    out.set(id, entry);
  }
  return out;
}

/**
 * Entries in upstream's shape (manager, operation, apiVersion, time,
 * fieldsType, fieldsV1, subresource) and order: Apply before Update, then by
 * time, manager, apiVersion, subresource. Empty sets are dropped.
 */
export function encodeManagedFields(managed: ManagedFields): ManagedFieldsEntry[] {
  const entries = [...managed.values()].filter((e) => !e.set.isEmpty());
  entries.sort(
    (p, q) =>
      cmp(p.operation, q.operation) ||
      cmp(seconds(p.time), seconds(q.time)) ||
      cmp(p.manager, q.manager) ||
      cmp(p.apiVersion, q.apiVersion) ||
      cmp(p.subresource ?? "", q.subresource ?? ""),
  );
  return entries.map((e) => encodeEntry(e, e.set.toJSON()));
}

/** One entry in upstream's shape and key order. */
function encodeEntry(e: Omit<ManagerEntry, "set">, fieldsV1: Record<string, unknown>): ManagedFieldsEntry {
  const out: ManagedFieldsEntry = { manager: e.manager, operation: e.operation, apiVersion: e.apiVersion };
  if (!e.manager) delete out.manager;
  if (e.time !== undefined) out.time = e.time;
  out.fieldsType = "FieldsV1";
  out.fieldsV1 = fieldsV1;
  if (e.subresource) out.subresource = e.subresource;
  return out;
}

function cmp<T extends string | number>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function seconds(time: string | undefined): number {
  const ms = time === undefined ? NaN : Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/** The set without any path at or under one of `prefixes` (upstream's exclude filter for reset fields). */
export function excludePrefixes(set: FieldSet, prefixes: FieldSet | undefined): FieldSet {
  if (prefixes === undefined || prefixes.isEmpty()) return set;
  const out = new FieldSet();
  for (const p of set.paths()) {
    let excluded = false;
    for (let n = 1; n <= p.length && !excluded; n++) excluded = prefixes.has(p.slice(0, n));
    if (!excluded) out.insert(p);
  }
  return out;
}

/**
 * Upstream's capManagersManager: past MAX_UPDATE_MANAGERS Update entries,
 * the oldest merge into one `ancient-changes` entry per apiVersion.
 */
export function capUpdateManagers(managed: ManagedFields, max = MAX_UPDATE_MANAGERS): ManagedFields {
  const updaters = [...managed.entries()].filter(([, e]) => e.operation === "Update");
  if (updaters.length <= max) return managed;
  const out: ManagedFields = new Map(managed);
  updaters.sort(([ia, a], [ib, b]) => cmp(seconds(a.time), seconds(b.time)) || cmp(ia, ib));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (const [id, e] of updaters) {
    if (length <= max) break;
    const bucket = managerId({ manager: ANCIENT_CHANGES_MANAGER, operation: "Update", apiVersion: e.apiVersion, subresource: undefined });
    const first = firstOfVersion.get(e.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(e.apiVersion, id);
      continue;
    }
    let into = out.get(bucket);
    if (into === undefined) {
      // The first entry of this version becomes the bucket.
      const f = out.get(first)!;
      out.delete(first);
      into = { ...f, manager: ANCIENT_CHANGES_MANAGER, subresource: undefined };
    }
    out.set(bucket, { ...into, set: e.set.union(into.set), time: e.time });
    out.delete(id);
    length--;
  }
  return out;
}

/** The object without metadata.managedFields, copied only as deep as needed. */
export function withoutManagedFields<T extends ApiObject>(obj: T): T {
  if (obj.metadata?.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  void _dropped;
  return { ...obj, metadata };
}

/** A copy of the object with these entries as its managedFields (the field omitted when there are none). */
export function withManagedFields<T extends ApiObject>(obj: T, entries: ManagedFieldsEntry[]): T {
  const metadata = { ...obj.metadata };
  if (entries.length === 0) delete metadata.managedFields;
  else metadata.managedFields = entries;
  return { ...obj, metadata };
}

/** upstream's isResetManagedFields: `managedFields: [{}]` asks to clear every entry. */
function isResetRequest(entries: readonly ManagedFieldsEntry[] | undefined): boolean {
  return entries !== undefined && entries.length === 1 && Object.values(entries[0] ?? {}).every((v) => v === undefined);
}

export interface UpdateManagedFieldsOptions {
  /** The stored object; undefined on create. */
  readonly live: ApiObject | undefined;
  /** The object about to be stored (after the patch or the PUT/POST body, before managedFields are set). */
  readonly updated: ApiObject;
  /** The fieldManager query parameter, or what the server derives from the user agent. */
  readonly manager: string;
  readonly operation: "Update";
  /** "status", "scale", ... when the write goes through a subresource. */
  readonly subresource?: string;
  readonly now: Date;
  /** The version the request was made in (`apps/v1`). */
  readonly apiVersion: string;
  readonly schema: TypeContext;
  /** Paths the strategy resets on this endpoint (status on the main resource, spec on /status): never owned. */
  readonly resetFields?: FieldSet;
}

export interface WriteResult<T extends ApiObject = ApiObject> {
  /** The object to store, with its managedFields set. */
  readonly object: T;
  readonly managedFields: ManagedFieldsEntry[];
}

/**
 * Managed fields after a non-apply write (upstream's FieldManager.Update):
 * the manager takes ownership of every field it added or changed, other
 * managers lose those and whatever was removed. A body that carries
 * managedFields rewrites them (on the main resource); `[{}]` clears them.
 */
export function updateManagedFields<T extends ApiObject>(opts: UpdateManagedFieldsOptions & { readonly updated: T }): WriteResult<T> {
  const { live, updated, manager, subresource, now, apiVersion, schema, resetFields } = opts;
  if (!hasMetadata(updated) || (live !== undefined && !hasMetadata(live))) throw badRequest("managed fields are only tracked on objects with metadata");
  const sent = Array.isArray(updated.metadata.managedFields) ? updated.metadata.managedFields : undefined;
  let managed: ManagedFields;
  if (isResetRequest(sent)) {
    managed = new Map();
  } else {
    let fromBody: ManagedFields | undefined;
    if (sent !== undefined && sent.length > 0 && !subresource) {
      try {
        fromBody = decodeManagedFields(sent);
      } catch {
        fromBody = undefined; // as upstream: an unreadable body falls back to the stored entries
      }
    }
    managed = fromBody !== undefined && fromBody.size > 0 ? fromBody : decodeManagedFields(live?.metadata.managedFields);
  }

  const after = withoutManagedFields(updated);
  if (live === undefined && managed.size === 0) {
    // A create with no entries to keep: the manager takes every field set, computed in one walk.
    const fieldsV1 = createdFieldsV1(after, emptyLike(after, schema), schema, resetFields, STRIPPED_FIELDS);
    if (fieldsV1 !== undefined) {
      const entry = { manager, operation: "Update" as const, apiVersion, time: formatTimestamp(now), subresource: subresource || undefined };
      const entries = Object.keys(fieldsV1).length === 0 ? [] : [encodeEntry(entry, fieldsV1)];
      return { object: withManagedFields(after, entries), managedFields: entries };
    }
  }
  const before = live === undefined ? emptyLike(updated, schema) : withoutManagedFields(live);
  const c = compare(before, after, schema);
  const changed = excludePrefixes(c.modified.union(c.added), resetFields);
  const removed = excludePrefixes(c.removed, resetFields);

  // Every manager (this one included, as upstream's "current-operation" trick)
  // loses what changed or went away; this one then takes what changed.
  const id = managerId({ manager, operation: "Update", apiVersion, subresource });
  const out: ManagedFields = new Map();
  for (const [key, e] of managed) {
    const set = e.set.difference(changed).difference(removed);
    if (!set.isEmpty()) out.set(key, { ...e, set });
  }
  const taken = changed.difference(STRIPPED_FIELDS);
  if (!taken.isEmpty()) {
    const previous = out.get(id);
    out.set(id, {
      manager,
      operation: "Update",
      apiVersion,
      time: formatTimestamp(now),
      subresource: subresource || undefined,
      set: previous ? taken.union(previous.set) : taken,
    });
  }
  const entries = encodeManagedFields(capUpdateManagers(out));
  return { object: withManagedFields(after, entries), managedFields: entries };
}

function hasMetadata(obj: ApiObject): boolean {
  const m: unknown = obj.metadata;
  return typeof m === "object" && m !== null && !Array.isArray(m);
}

/**
 * What a create is compared against: upstream compares with the kind's
 * empty Go object, whose non-pointer structs (metadata, spec, status) are
 * present and empty, so they never come out as newly added ("." entries).
 */
export function emptyLike(obj: ApiObject, schema: TypeContext): ApiObject {
  const def = schema.registry.get(schema.type);
  const out: Record<string, unknown> = { apiVersion: obj.apiVersion, kind: obj.kind, metadata: {} };
  for (const name of ["spec", "status"]) if (def?.fields[name]?.schema.type === "ref") out[name] = {};
  return out as ApiObject;
}
