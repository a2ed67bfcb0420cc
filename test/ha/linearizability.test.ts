// The fault suite's checkers on hand-made histories and watch streams: they
// accept linearizable ones (including writes of unknown outcome that did or
// did not take effect) and refuse lost writes, stale reads after an ack,
// reordered writes, and watch streams that repeat, skip or go backwards.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Op, Outcome } from "./history.js";
import { checkHistory, checkKey, lostWrites } from "./linearizability.js";
import { checkWatcher, type WatchRecord } from "./history-watch.js";

let nextId = 0;
/** An op on key "k" from time `a` to `b` (b = Infinity: unknown outcome). */
function op(kind: Op["kind"], a: number, b: number, outcome: Outcome, fields: { value?: string; precondition?: number; key?: string } = {}): Op {
  return { id: nextId++, client: "c", kind, key: fields.key ?? "k", value: fields.value, precondition: fields.precondition, invoke: a, complete: outcome.status === "unknown" ? Infinity : b, outcome };
}
const ok = (rv: number, value?: string): Outcome => ({ status: "ok", rv, value });
const fail = (code: number): Outcome => ({ status: "fail", code, reason: "" });
const unknown: Outcome = { status: "unknown", error: "timeout" };

describe("linearizability checker", () => {
  test("a sequential history is linearizable", () => {
    const h = [op("create", 0, 1, ok(5), { value: "a" }), op("get", 2, 3, ok(5, "a")), op("update", 4, 5, ok(7), { value: "b", precondition: 5 }), op("get", 6, 7, ok(7, "b")), op("delete", 8, 9, ok(7)), op("get", 10, 11, fail(404))];
    assert.equal(checkKey("k", h).linearizable, true);
  });

  test("concurrent compare-and-set: one wins, the other gets 409, in either real-time order", () => {
    const h = [op("create", 0, 1, ok(5), { value: "a" }), op("update", 2, 10, fail(409), { value: "c", precondition: 5 }), op("update", 3, 9, ok(6), { value: "b", precondition: 5 }), op("get", 11, 12, ok(6, "b"))];
    assert.equal(checkKey("k", h).linearizable, true);
  });

  test("a read concurrent with a write may see the old or the new value", () => {
    const base = [op("create", 0, 1, ok(5), { value: "a" }), op("update", 2, 10, ok(6), { value: "b", precondition: 5 })];
    assert.equal(checkKey("k", [...base, op("get", 3, 4, ok(5, "a"))]).linearizable, true);
    assert.equal(checkKey("k", [...base, op("get", 3, 4, ok(6, "b"))]).linearizable, true);
  });

  test("a write of unknown outcome may have taken effect, or not", () => {
    const took = [op("create", 0, 1, ok(5), { value: "a" }), op("update", 2, Infinity, unknown, { value: "b", precondition: 5 }), op("get", 20, 21, ok(9, "b")), op("update", 22, 23, ok(10), { value: "c", precondition: 9 })];
    assert.equal(checkKey("k", took).linearizable, true);
    const didNot = [op("create", 0, 1, ok(5), { value: "a" }), op("update", 2, Infinity, unknown, { value: "b", precondition: 5 }), op("get", 20, 21, ok(5, "a"))];
    assert.equal(checkKey("k", didNot).linearizable, true);
  });

  test("a stale read after an acknowledged write is refused", () => {
    const h = [op("create", 0, 1, ok(5), { value: "a" }), op("update", 2, 3, ok(6), { value: "b", precondition: 5 }), op("get", 4, 5, ok(5, "a"))];
    const r = checkKey("k", h);
    assert.equal(r.linearizable, false);
    assert.match(r.explanation!, /get/);
  });

  test("a lost write (acknowledged, then a read without it) is refused", () => {
    const h = [op("create", 0, 1, ok(5), { value: "a" }), op("update", 2, 3, ok(6), { value: "b", precondition: 5 }), op("get", 10, 11, fail(404))];
    assert.equal(checkKey("k", h).linearizable, false);
  });

  test("reordered writes (the later write got the lower resourceVersion) are refused", () => {
    const h = [op("create", 0, 1, ok(8), { value: "a" }), op("update", 2, 3, ok(7), { value: "b", precondition: 8 })];
    assert.equal(checkKey("k", h).linearizable, false);
  });

  test("two compare-and-set writes on the same precondition may not both succeed", () => {
    const h = [op("create", 0, 1, ok(5), { value: "a" }), op("update", 2, 4, ok(6), { value: "b", precondition: 5 }), op("update", 3, 5, ok(7), { value: "c", precondition: 5 })];
    assert.equal(checkKey("k", h).linearizable, false);
  });

  test("a create conflict on an absent object is refused; keys are checked apart", () => {
    const h = [op("create", 0, 1, fail(409), { value: "a", key: "x" }), op("create", 0, 1, ok(3), { value: "a", key: "y" })];
    const r = checkHistory(h);
    assert.equal(r.linearizable, false);
    assert.deepEqual(r.failures.map((f) => f.key), ["x"]);
    assert.equal(r.keys, 2);
  });

  test("a larger concurrent history is checked within the budget", () => {
    const h: Op[] = [op("create", 0, 1, ok(1), { value: "v1" })];
    let rv = 1;
    for (let i = 0; i < 60; i++) {
      const t = 10 + i * 3;
      const won = i % 3 === 0; // the losers carry a stale precondition
      h.push(op("update", t, t + 5, won ? ok(rv + 1) : fail(409), { value: `v${i}-x`, precondition: won ? rv : rv - 1 }));
      if (won) rv++;
    }
    assert.equal(checkKey("k", h).linearizable, true);
  });

  test("lostWrites: the final read must hold the last acknowledged write or later", () => {
    const h = [op("create", 0, 1, ok(5), { value: "a" }), op("update", 2, 3, ok(6), { value: "b", precondition: 5 })];
    assert.deepEqual(lostWrites(h, new Map([["k", { value: "b", rv: 6 }]])), []);
    assert.equal(lostWrites(h, new Map([["k", { value: "a", rv: 5 }]])).length, 1);
    assert.equal(lostWrites(h, new Map([["k", undefined]])).length, 1);
    const deleted = [...h, op("delete", 4, Infinity, unknown)];
    assert.deepEqual(lostWrites(deleted, new Map([["k", undefined]])), []);
  });
});

describe("watch invariants checker", () => {
  const acked = [
    { key: "a", rv: 10 },
    { key: "b", rv: 11 },
    { key: "a", rv: 12 },
  ];
  const ev = (key: string, rv: number): WatchRecord => ({ kind: "event", type: "MODIFIED", key, rv });

  test("a complete in-order stream, and a resume from the last rv, pass", () => {
    assert.deepEqual(checkWatcher("w", [{ kind: "connect", fromRv: 9 }, ev("a", 10), ev("b", 11), ev("a", 12)], acked), []);
    assert.deepEqual(checkWatcher("w", [{ kind: "connect", fromRv: 9 }, ev("a", 10), { kind: "connect", fromRv: 10 }, ev("b", 11), ev("a", 12)], acked), []);
  });

  test("410 then relist skips the gap without a violation", () => {
    assert.deepEqual(checkWatcher("w", [{ kind: "connect", fromRv: 9 }, ev("a", 10), { kind: "gone" }, { kind: "relist", rv: 12 }, { kind: "connect", fromRv: 12 }], acked), []);
  });

  test("a missing write inside a covered span is a violation", () => {
    const v = checkWatcher("w", [{ kind: "connect", fromRv: 9 }, ev("a", 10), ev("a", 12)], acked);
    assert.equal(v.length, 1);
    assert.match(v[0]!.what, /b@11 seen 0 times/);
  });

  test("a repeated event after a reconnect is a violation", () => {
    const v = checkWatcher("w", [{ kind: "connect", fromRv: 9 }, ev("a", 10), ev("b", 11), { kind: "connect", fromRv: 11 }, ev("b", 11), ev("a", 12)], acked);
    assert.ok(v.some((x) => /not after rv 11/.test(x.what)), JSON.stringify(v));
    assert.ok(v.some((x) => /b@11 seen 2 times/.test(x.what)), JSON.stringify(v));
  });

  test("events out of order, and a resume from an older rv, are violations", () => {
    assert.ok(checkWatcher("w", [{ kind: "connect", fromRv: 9 }, ev("b", 11), ev("a", 10), ev("a", 12)], acked).some((x) => /out of order/.test(x.what)));
    assert.ok(checkWatcher("w", [{ kind: "connect", fromRv: 9 }, ev("a", 10), ev("b", 11), { kind: "connect", fromRv: 10 }], acked).some((x) => /below rv 11/.test(x.what)));
  });

  test("an event naming the wrong object for an acknowledged rv is a violation", () => {
    assert.ok(checkWatcher("w", [{ kind: "connect", fromRv: 9 }, ev("b", 10), ev("b", 11), ev("a", 12)], acked).some((x) => /names b/.test(x.what)));
  });
});
