// Server-side apply (seed 000, "Update mechanisms": application/apply-patch+yaml)
// as a pure function: merge an applied configuration into the live object,
// drop what the applier stopped applying, move ownership, report conflicts.

import type { ApiObject } from "../meta.js";
import { formatTimestamp } from "../meta.js";
import { applyConflict, badRequest } from "../errors.js";
import { goQuote } from "../go-format.js";
import type { StatusCause } from "../status.js";
import { FieldSet, formatPath, type FieldPath } from "./field-set.js";
import { compare, fieldSetOf, jsonEqual, merge, removeItems, withNamedFieldsAsMembers, type TypeContext } from "./typed.js";
import {
  STRIPPED_FIELDS,
  capUpdateManagers,
  decodeManagedFields,
  emptyLike,
  encodeManagedFields,
  excludePrefixes,
  managerId,
  withManagedFields,
  withoutManagedFields,
  type ManagedFields,
  type ManagerEntry,
  type WriteResult,
} from "./managed-fields.js";

export interface ApplyOptions {
  /** The stored object; undefined when the apply creates it. */
  readonly live: ApiObject | undefined;
  /** The applied configuration (the PATCH body), already decoded from YAML or JSON. */
  readonly applied: ApiObject;
  /** The fieldManager query parameter (required for apply). */
  readonly manager: string;
  /** The force query parameter: take conflicting fields instead of failing. */
  readonly force?: boolean;
  readonly schema: TypeContext;
  readonly now: Date;
  /** The version of the endpoint (`apps/v1`); the applied configuration must use it. */
  readonly apiVersion: string;
  readonly subresource?: string;
  /** Paths the strategy resets on this endpoint: never merged into ownership. */
  readonly resetFields?: FieldSet;
}

/** One field another manager owns with a different value. */
export interface Conflict {
  readonly manager: ManagerEntry;
  readonly path: FieldPath;
}

/**
 * Applies `applied` as `manager` (upstream's FieldManager.Apply over
 * structured-merge-diff's Updater.Apply). Throws a 409 listing every
 * conflict unless `force`; the result carries the new managedFields.
 */
export function apply<T extends ApiObject>(opts: ApplyOptions & { readonly live: T | undefined }): WriteResult<T> {
  const { live, applied, manager, force = false, schema, now, apiVersion, subresource, resetFields } = opts;
  if (!isObj(applied) || !isObj(applied.metadata)) throw badRequest("apply is only supported on objects with metadata");
  if (live !== undefined && !isObj(live.metadata)) throw badRequest("apply is only supported on objects with metadata");
  if (applied.apiVersion !== apiVersion) {
    throw badRequest(`Incorrect version specified in apply patch. Specified patch version: ${applied.apiVersion ?? ""}, expected: ${apiVersion}`);
  }
  if (applied.metadata.managedFields !== undefined && applied.metadata.managedFields !== null) throw badRequest("metadata.managedFields must be nil");

  const managed = decodeManagedFields(live?.metadata.managedFields);
  const before = live === undefined ? emptyLike(applied, schema) : withoutManagedFields(live);
  const id = managerId({ manager, operation: "Apply", apiVersion, subresource });
  const last = managed.get(id)?.set;
  // Ownership during the merge uses the full applied set (name included), so
  // the applier's own identity fields hold up what it still applies.
  const appliedSet = excludePrefixes(fieldSetOf(applied, schema), resetFields);

  let merged = merge(before, applied, schema) as ApiObject;
  if (last !== undefined && !last.isEmpty()) merged = prune(merged, last, appliedSet, managed, id, schema);

  const c = compare(before, merged, schema);
  const changed = excludePrefixes(c.modified.union(c.added), resetFields);
  const removed = excludePrefixes(c.removed, resetFields);

  const conflicts: Conflict[] = [];
  for (const [key, e] of managed) {
    if (key === id) continue;
    for (const path of e.set.intersection(changed).paths()) conflicts.push({ manager: e, path });
  }
  if (conflicts.length > 0 && !force) throw conflictError(conflicts);

  const out: ManagedFields = new Map();
  for (const [key, e] of managed) {
    if (key === id) continue;
    // With force the conflicting fields move to the applier; without any, this takes nothing.
    const set = e.set.difference(changed).difference(removed);
    if (!set.isEmpty()) out.set(key, { ...e, set });
  }
  const owned = appliedSet.difference(STRIPPED_FIELDS);
  const objectChanged = live === undefined || !jsonEqual(before, merged);
  if (!owned.isEmpty()) {
    const previous = managed.get(id);
    out.set(id, {
      manager,
      operation: "Apply",
      apiVersion,
      // upstream only stamps the time when the object changed.
      time: objectChanged || previous?.time === undefined ? formatTimestamp(now) : previous.time,
      subresource: subresource || undefined,
      set: owned,
    });
  }
  const entries = encodeManagedFields(capUpdateManagers(out));
  return { object: withManagedFields(merged, entries) as T, managedFields: entries };
}

/**
 * Removes what the applier owned last time and no longer applies, unless
 * another manager (or the new configuration) still owns it (upstream's
 * Updater.prune with addBackOwnedItems and addBackDanglingItems, which come
 * to: remove last ∩ present, minus everything owned, named fields counted).
 */
function prune(merged: ApiObject, last: FieldSet, appliedSet: FieldSet, managed: ManagedFields, id: string, schema: TypeContext): ApiObject {
  // The usual re-apply drops nothing: what it owned last time it applies again (the walk below is most of apply's cost).
  if (last.difference(appliedSet).isEmpty()) return merged;
  let owned = appliedSet;
  for (const [key, e] of managed) if (key !== id) owned = owned.union(e.set);
  const present = withNamedFieldsAsMembers(fieldSetOf(merged, schema), schema);
  const toRemove = withNamedFieldsAsMembers(last, schema).intersection(present).difference(withNamedFieldsAsMembers(owned, schema));
  if (toRemove.isEmpty()) return merged;
  return removeItems(merged, toRemove, schema) as ApiObject;
}

/** upstream's printManager: `"kubectl"` for appliers, `"m" using apps/v1` for updaters. */
function printManager(e: ManagerEntry): string {
  let s = goQuote(e.manager);
  if (e.subresource) s += ` with subresource ${goQuote(e.subresource)}`;
  if (e.operation === "Update") s += ` using ${e.apiVersion}`;
  return s;
}

/**
 * The 409 (upstream's NewConflictError): one FieldManagerConflict cause per
 * field, and `Apply failed with N conflicts: conflicts with "m" using v1:\n- .path`
 * grouped by manager in identity order.
 */
export function conflictError(conflicts: readonly Conflict[]) {
  const byManager = new Map<string, Conflict[]>();
  for (const c of conflicts) {
    const key = managerId(c.manager);
    const list = byManager.get(key) ?? [];
    list.push(c);
    byManager.set(key, list);
  }
  const managers = [...byManager.keys()].sort();
  const ordered = managers.flatMap((m) => byManager.get(m)!);
  const causes: StatusCause[] = ordered.map((c) => ({
    reason: "FieldManagerConflict",
    message: `conflict with ${printManager(c.manager)}`,
    field: formatPath(c.path),
  }));
  let message: string;
  if (ordered.length === 1) {
    const only = ordered[0]!;
    message = `Apply failed with 1 conflict: conflict with ${printManager(only.manager)}: ${formatPath(only.path)}`;
  } else {
    const lines: string[] = [];
    for (const m of managers) {
      const group = byManager.get(m)!;
      lines.push(`conflicts with ${printManager(group[0]!.manager)}:`);
      for (const c of group) lines.push(`- ${formatPath(c.path)}`);
    }
    message = `Apply failed with ${ordered.length} conflicts: ${lines.join("\n")}`;
  }
  return applyConflict(causes, message);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
