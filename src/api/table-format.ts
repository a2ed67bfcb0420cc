// Cell formatting shared by every group's table columns (seed 000, "Table
// representation"): ages as kubectl prints them, label sets, "<none>"
// placeholders, and the Name ... Age layout most tables share. Pure
// functions; every API group may use them.

import type { ApiObject } from "../machinery/index.js";
import type { TableDefinition } from "./resource.js";

/**
 * A duration in kubectl's short form (upstream's HumanDuration): `5s`, `3m2s`,
 * `10m`, `5h`, `2d3h`, `3y`. Up to two seconds in the future counts as `0s`
 * (clock skew between machines); further is `<invalid>`.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.trunc(hours / 24) % 365;
    const years = Math.trunc(hours / 24 / 365);
    return days === 0 ? `${years}y` : `${years}y${days}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** Time since a timestamp, as the Age column shows it; `<unknown>` when absent or unparsable. */
export function formatAge(from: string | null | undefined, now: Date): string {
  if (!from) return "<unknown>";
  const t = Date.parse(from);
  if (Number.isNaN(t)) return "<unknown>";
  return humanDuration(now.getTime() - t);
}

/** `k1=v1,k2=v2` with keys sorted (upstream's labels.FormatLabels); `<none>` when empty. */
export function formatLabels(labels: Readonly<Record<string, string>> | null | undefined): string {
  const keys = Object.keys(labels ?? {}).sort();
  if (keys.length === 0) return "<none>";
  return keys.map((k) => `${k}=${labels![k]}`).join(",");
}

/** `value`, or `<none>` when empty. */
export function orNone(value: string | null | undefined): string {
  return value ? value : "<none>";
}

/** The Name column every table starts with. */
export const NAME_COLUMN = {
  name: "Name",
  type: "string",
  format: "name",
  description: "Name must be unique within a namespace; see metadata.name.",
  priority: 0,
} as const;

/** The Age column: time since metadata.creationTimestamp. */
export const AGE_COLUMN = {
  name: "Age",
  type: "string",
  description: "Time since the object was created (metadata.creationTimestamp).",
  priority: 0,
} as const;

/**
 * A Table in upstream's usual layout: Name, the kind's own columns, Age, then
 * whatever comes after Age (the `-o wide` columns, mostly). The kind gives only
 * its own cells; the name and the age are filled in here.
 */
export function nameAgeTable<T extends ApiObject>(own: TableDefinition<T>, after?: TableDefinition<T>): TableDefinition<T> {
  return {
    columns: [NAME_COLUMN, ...own.columns, AGE_COLUMN, ...(after?.columns ?? [])],
    cells: (obj, now) => [
      obj.metadata.name ?? "",
      ...own.cells(obj, now),
      formatAge(obj.metadata.creationTimestamp, now),
      ...(after === undefined ? [] : after.cells(obj, now)),
    ],
  };
}
