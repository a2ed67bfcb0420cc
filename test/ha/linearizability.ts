// A linearizability checker for the API's per-object semantics: each object
// is a register holding (value, resourceVersion) or nothing; create fails
// with 409 when it exists, update carries a resourceVersion precondition
// (compare-and-set: 409 when it differs, 404 when absent), delete 404s when
// absent, get returns the current value and resourceVersion; every write's
// resourceVersion is greater than the one it replaces.
//
// The search is Wing & Gong's with Lowe's memoization (as Porcupine and
// Knossos do): pick, among the operations not yet linearized, one whose
// invocation precedes every pending completion, apply it to the model, recurse;
// (set of linearized operations, model state) pairs already explored are
// remembered. Objects are independent (P-compositionality), so each key is
// checked alone. Operations of unknown outcome complete at infinity and may
// take effect at any point after their invocation, or never; a write of
// unknown outcome leaves the resourceVersion unknown until a later operation
// observes it.

import type { Op } from "./history.js";

/** The register: absent, or a value with its resourceVersion (undefined: not observed yet). */
type State = { present: false; rv: number } | { present: true; value: string; rv: number | undefined };

const stateKey = (s: State) => (s.present ? `P${s.rv ?? "?"}:${s.value}` : `A${s.rv}`);

/** Every state `op` may lead to from `s`, given its recorded outcome (empty: impossible here). */
function step(s: State, op: Op): State[] {
  const oc = op.outcome!;
  const newer = (rv: number) => s.rv === undefined || rv > s.rv;
  if (oc.status === "unknown") {
    // Either it did not take effect, or it did with whatever result it would have had.
    const out: State[] = [s];
    if (op.kind === "create" && !s.present) out.push({ present: true, value: op.value!, rv: undefined });
    if (op.kind === "update" && s.present && (s.rv === undefined || s.rv === op.precondition)) out.push({ present: true, value: op.value!, rv: undefined });
    if (op.kind === "delete" && s.present) out.push({ present: false, rv: s.rv ?? 0 });
    return out;
  }
  switch (op.kind) {
    case "create":
      if (oc.status === "ok") return !s.present && newer(oc.rv) ? [{ present: true, value: op.value!, rv: oc.rv }] : [];
      if (oc.code === 409) return s.present ? [s] : [];
      return [s];
    case "update":
      if (oc.status === "ok") {
        return s.present && (s.rv === undefined || s.rv === op.precondition) && oc.rv > op.precondition! ? [{ present: true, value: op.value!, rv: oc.rv }] : [];
      }
      if (oc.code === 409) return s.present && s.rv !== op.precondition ? [s] : [];
      if (oc.code === 404) return !s.present ? [s] : [];
      return [s];
    case "delete":
      if (oc.status === "ok") return s.present ? [{ present: false, rv: s.rv ?? 0 }] : [];
      if (oc.code === 404) return !s.present ? [s] : [];
      return [s];
    case "get":
      if (oc.status === "ok") return s.present && s.value === oc.value && (s.rv === undefined || s.rv === oc.rv) ? [{ ...s, rv: oc.rv }] : [];
      if (oc.code === 404) return !s.present ? [s] : [];
      return [s];
  }
}

export interface KeyResult {
  key: string;
  ops: number;
  linearizable: boolean | "unknown";
  /** When not linearizable: the operations of the longest linearizable prefix found, and the first op that could not follow. */
  explanation?: string;
}

export interface CheckResult {
  linearizable: boolean;
  /** Keys whose search ran out of budget (neither proven nor refuted). */
  inconclusive: string[];
  failures: KeyResult[];
  keys: number;
}

/** Checks one object's operations; `budget` caps the states explored. */
export function checkKey(key: string, ops: Op[], budget = 2_000_000): KeyResult {
  const list = ops.filter((o) => o.outcome !== undefined).sort((a, b) => a.invoke - b.invoke);
  const n = list.length;
  const known = list.map((o) => o.outcome!.status !== "unknown");
  const remainingKnown = known.filter(Boolean).length;
  const done = new Uint8Array(n);
  const seen = new Set<string>();
  let explored = 0;
  let best = -1;
  let bestBlocked = "";

  const maskKey = () => {
    let s = "";
    for (let i = 0; i < n; i += 16) {
      let w = 0;
      for (let j = i; j < Math.min(n, i + 16); j++) if (done[j]) w |= 1 << (j - i);
      s += w.toString(36) + ".";
    }
    return s;
  };

  const search = (state: State, left: number, depth: number): boolean | "budget" => {
    if (left === 0) return true;
    if (++explored > budget) return "budget";
    const memo = maskKey() + stateKey(state);
    if (seen.has(memo)) return false;
    seen.add(memo);
    // The earliest completion among pending known ops bounds which op may go next.
    let bound = Infinity;
    for (let i = 0; i < n; i++) if (!done[i] && known[i] && list[i]!.complete < bound) bound = list[i]!.complete;
    for (let i = 0; i < n; i++) {
      if (done[i]) continue;
      const op = list[i]!;
      if (op.invoke > bound) break; // sorted by invocation
      for (const next of step(state, op)) {
        done[i] = 1;
        const r = search(next, left - (known[i] ? 1 : 0), depth + 1);
        done[i] = 0;
        if (r !== false) return r;
      }
    }
    if (depth > best) {
      best = depth;
      const pending = list.filter((_, i) => !done[i] && known[i] && list[i]!.invoke <= bound);
      bestBlocked = `after ${depth} ops in state ${stateKey(state)}, none of these can follow: ${pending.map(describe).join("; ")}`;
    }
    return false;
  };

  const r = search({ present: false, rv: 0 }, remainingKnown, 0);
  if (r === "budget") return { key, ops: n, linearizable: "unknown" };
  return r ? { key, ops: n, linearizable: true } : { key, ops: n, linearizable: false, explanation: bestBlocked };
}

export function describe(op: Op): string {
  const oc = op.outcome;
  const res = oc === undefined ? "pending" : oc.status === "ok" ? `ok rv=${oc.rv}${oc.value !== undefined ? ` v=${oc.value}` : ""}` : oc.status === "fail" ? `${oc.code}` : `unknown(${oc.error})`;
  const args = op.kind === "update" ? `${op.value}@${op.precondition}` : op.kind === "create" ? `${op.value}` : "";
  return `#${op.id} ${op.client} ${op.kind}(${args}) -> ${res}`;
}

/** Checks a whole history, key by key. */
export function checkHistory(ops: Op[], budgetPerKey?: number): CheckResult {
  const byKey = new Map<string, Op[]>();
  for (const op of ops) {
    let l = byKey.get(op.key);
    if (l === undefined) byKey.set(op.key, (l = []));
    l.push(op);
  }
  const failures: KeyResult[] = [];
  const inconclusive: string[] = [];
  for (const [key, list] of byKey) {
    const r = checkKey(key, list, budgetPerKey);
    if (r.linearizable === false) failures.push(r);
    if (r.linearizable === "unknown") inconclusive.push(key);
  }
  return { linearizable: failures.length === 0, inconclusive, failures, keys: byKey.size };
}

/**
 * Acknowledged writes that are lost: for each key, the last acknowledged write
 * (by resourceVersion) must be what a final read returns, unless a later
 * write of unknown outcome or a delete may have replaced it. `final` maps
 * key → the value and rv read after the fault (undefined: 404).
 */
export function lostWrites(ops: Op[], final: Map<string, { value: string; rv: number } | undefined>): Op[] {
  const lost: Op[] = [];
  const byKey = new Map<string, Op[]>();
  for (const op of ops) {
    if (op.kind === "get") continue;
    let l = byKey.get(op.key);
    if (l === undefined) byKey.set(op.key, (l = []));
    l.push(op);
  }
  for (const [key, list] of byKey) {
    const acked = list.filter((o) => o.kind !== "delete" && o.outcome?.status === "ok");
    if (acked.length === 0) continue;
    const last = acked.reduce((a, b) => ((a.outcome as { rv: number }).rv > (b.outcome as { rv: number }).rv ? a : b));
    const lastRv = (last.outcome as { rv: number }).rv;
    const seen = final.get(key);
    if (seen !== undefined && seen.rv >= lastRv) continue; // it or a later write is there
    // Something that may legitimately have replaced it: a delete, or a write whose outcome is unknown.
    const replaced = list.some((o) => o !== last && (o.kind === "delete" ? o.outcome?.status !== "fail" : o.outcome?.status === "unknown"));
    if (!replaced) lost.push(last);
  }
  return lost;
}
