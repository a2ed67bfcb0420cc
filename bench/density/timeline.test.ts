// The density timeline: each pod counts once per stage, at the first
// observation that shows it there; rates are per interval, totals cumulative.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Timeline } from "./timeline.js";

describe("density timeline", () => {
  it("counts each pod once per stage and buckets the rates per interval", () => {
    const t = new Timeline(1000);
    t.observePod({ metadata: { uid: "a" } }, 1100); // created at 0.1 s
    t.observePod({ metadata: { uid: "a" } }, 1200); // repeated: no new count
    t.observePod({ metadata: { uid: "b" } }, 1500);
    t.observePod({ metadata: { uid: "a" }, spec: { nodeName: "n1" } }, 2100); // bound at 1.1 s
    t.observePod({ metadata: { uid: "a" }, spec: { nodeName: "n1" }, status: { phase: "Running" } }, 2600);
    t.observePod({ metadata: { uid: "b" }, spec: { nodeName: "n2" }, status: { phase: "Running" } }, 2700); // bound and running at once
    t.observeReady(1, 2800);
    t.observeReady(1, 2900); // unchanged: no new count
    t.observeReady(2, 3100);
    const rows = t.rows(1000, 2500);
    assert.deepEqual(rows.map((r) => r.t), [1, 2, 3]);
    assert.deepEqual(rows.map((r) => r.total), [[2, 0, 0, 0], [2, 2, 2, 1], [2, 2, 2, 2]]);
    assert.deepEqual(rows[0]!.rate, [2, 0, 0, 0]);
    assert.deepEqual(rows[1]!.rate, [0, 2, 2, 1]);
    assert.deepEqual(rows[2]!.rate, [0, 0, 0, 1]);
    const text = t.format(2000, 2500);
    assert.match(text.split("\n")[0]!, /created .*bound .*running .*ready/);
    assert.equal(text.split("\n").length, 3);
  });
});
