// Small rules the write pipeline applies to whole objects: the omitempty
// trim of metadata, the no-op test and the spec-change test that bumps
// metadata.generation.

import type { ApiObject } from "../../machinery/index.js";
import { jsonEqual } from "../../machinery/apply/index.js";

/**
 * Empty labels, annotations, finalizers and ownerReferences are dropped, as
 * upstream's `omitempty` encoding drops them (a patch that empties a map
 * must not leave `{}` behind, or diffs and no-op checks see a change).
 */
export function omitEmptyMetadata(meta: ApiObject["metadata"]): void {
  for (const k of ["labels", "annotations"] as const) {
    const v = meta[k];
    if (v !== undefined && (v === null || (typeof v === "object" && Object.keys(v).length === 0))) delete meta[k];
  }
  for (const k of ["finalizers", "ownerReferences"] as const) {
    const v = meta[k];
    if (v !== undefined && (v === null || (Array.isArray(v) && v.length === 0))) delete meta[k];
  }
}

/** The prepared object equals the stored one (which carries a resourceVersion the new one lacks). */
export function sameObject(next: ApiObject, current: ApiObject): boolean {
  const { resourceVersion: _rv, ...meta } = current.metadata;
  return jsonEqual({ ...current, metadata: meta }, next);
}

/** Everything but metadata and status: a change there bumps metadata.generation. */
export function specChanged(next: ApiObject, current: ApiObject): boolean {
  const strip = ({ metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest }: ApiObject) => rest;
  return JSON.stringify(strip(next)) !== JSON.stringify(strip(current));
}
