// Parsers of metadata strings (group/version, RFC 3339 times) that answer
// malformed input with upstream's 400. Apart from meta.ts because they need
// errors.ts, which itself needs meta.ts's types.

import { badRequest } from "./errors.js";
import type { GroupVersion, GroupVersionKind, TypeMeta } from "./meta.js";

/**
 * Parses "group/version" ("apps/v1"), a bare version ("v1", the core group) or
 * "" / "/" (empty). More than one slash is a 400, as upstream's ParseGroupVersion.
 */
export function parseGroupVersion(gv: string): GroupVersion {
  if (gv === "" || gv === "/") return { group: "", version: "" };
  const i = gv.indexOf("/");
  if (i < 0) return { group: "", version: gv };
  if (gv.indexOf("/", i + 1) >= 0) throw badRequest(`unexpected GroupVersion string: ${gv}`);
  return { group: gv.slice(0, i), version: gv.slice(i + 1) };
}

/** Group, version and kind of an object from its apiVersion and kind fields. */
export function groupVersionKindOf(obj: TypeMeta): GroupVersionKind {
  const { group, version } = parseGroupVersion(obj.apiVersion ?? "");
  return { group, version, kind: obj.kind ?? "" };
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Parses an RFC 3339 timestamp (any offset, optional fraction); 400 when malformed. */
export function parseTimestamp(s: string): Date {
  const m = RFC3339.exec(s);
  const ms = m ? Date.parse(s) : NaN;
  if (!m || Number.isNaN(ms)) {
    throw badRequest(`parsing time ${JSON.stringify(s)} as "2006-01-02T15:04:05Z07:00": cannot parse`);
  }
  return new Date(ms);
}
