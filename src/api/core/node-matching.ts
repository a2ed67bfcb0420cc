// Whether a pod may go on a node, as the scheduler, the DaemonSet controller
// and taint eviction all ask it: tolerations against taints (upstream's
// Toleration.ToleratesTaint) and node selector terms (terms ORed,
// requirements within a term ANDed; In, NotIn, Exists, DoesNotExist, Gt, Lt
// on labels; metadata.name in matchFields). Pure functions, one definition.

import type { Taint, Toleration } from "./types.js";

/** Empty key with Exists matches every key; empty effect matches every effect. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (!t.key && t.operator !== "Exists") return false;
  if (t.operator === "Exists") return true;
  return (t.value ?? "") === (taint.value ?? "");
}

/** Some toleration of the list tolerates the taint. */
export function tolerates(tolerations: readonly Toleration[] | null | undefined, taint: Taint): boolean {
  for (const t of tolerations ?? []) if (t && toleratesTaint(t, taint)) return true;
  return false;
}

export interface NodeSelectorRequirement {
  key?: string;
  operator?: string;
  values?: string[] | null;
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[] | null;
  matchFields?: NodeSelectorRequirement[] | null;
}

function requirementMatches(r: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case "In":
      return value !== undefined && values.includes(value);
    case "NotIn":
      return value === undefined || !values.includes(value);
    case "Exists":
      return value !== undefined;
    case "DoesNotExist":
      return value === undefined;
    case "Gt":
    case "Lt": {
      if (value === undefined || values.length !== 1 || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(values[0]!)) return false;
      const [a, b] = [BigInt(value), BigInt(values[0]!)];
      return r.operator === "Gt" ? a > b : a < b;
    }
    default:
      return false;
  }
}

/** A term with neither expressions nor fields matches nothing (upstream). */
export function nodeSelectorTermMatches(term: NodeSelectorTerm, labels: Readonly<Record<string, string>>, nodeName: string | undefined): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  for (const r of exprs) if (!requirementMatches(r, labels[r.key ?? ""])) return false;
  for (const r of fields) if (r.key !== "metadata.name" || !requirementMatches(r, nodeName)) return false;
  return true;
}
