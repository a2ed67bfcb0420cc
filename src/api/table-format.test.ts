import { test } from "node:test";
import assert from "node:assert/strict";
import type { ApiObject } from "../machinery/index.js";
import { AGE_COLUMN, NAME_COLUMN, formatAge, formatLabels, humanDuration, nameAgeTable } from "./table-format.js";

test("humanDuration: kubectl's short ages at every boundary", () => {
  const s = 1000;
  const cases: [number, string][] = [
    [-3 * s, "<invalid>"],
    [-1500, "0s"],
    [0, "0s"],
    [5 * s, "5s"],
    [119 * s, "119s"],
    [120 * s, "2m"],
    [182 * s, "3m2s"],
    [600 * s, "10m"],
    [179 * 60 * s, "179m"],
    [3 * 3600 * s, "3h"],
    [5 * 3600 * s + 30 * 60 * s, "5h30m"],
    [8 * 3600 * s, "8h"],
    [47 * 3600 * s, "47h"],
    [3 * 86400 * s, "3d"],
    [2 * 86400 * s + 3 * 3600 * s, "2d3h"],
    [8 * 86400 * s, "8d"],
    [729 * 86400 * s, "729d"],
    [3 * 365 * 86400 * s + 10 * 86400 * s, "3y10d"],
    [9 * 365 * 86400 * s, "9y"],
  ];
  for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `${ms}ms`);
});

test("formatAge and formatLabels", () => {
  const now = new Date("2026-01-02T03:04:05Z");
  assert.equal(formatAge("2026-01-02T03:04:00Z", now), "5s");
  assert.equal(formatAge("2026-01-02T02:59:05Z", now), "5m");
  assert.equal(formatAge(undefined, now), "<unknown>");
  assert.equal(formatAge("garbage", now), "<unknown>");
  assert.equal(formatLabels({ b: "2", a: "1" }), "a=1,b=2");
  assert.equal(formatLabels({}), "<none>");
  assert.equal(formatLabels(null), "<none>");
});

test("nameAgeTable: Name, the kind's own columns, Age, then what follows Age", () => {
  const own = { name: "Own", type: "string", description: "own", priority: 0 } as const;
  const wide = { name: "Wide", type: "string", description: "wide", priority: 1 } as const;
  const obj: ApiObject = { apiVersion: "v1", kind: "Thing", metadata: { name: "a", creationTimestamp: "2026-01-01T00:00:00Z" } };
  const now = new Date("2026-01-01T00:05:00Z");
  const table = nameAgeTable<ApiObject>({ columns: [own], cells: () => ["x"] }, { columns: [wide], cells: (o) => [o.kind] });
  assert.deepEqual(table.columns, [NAME_COLUMN, own, AGE_COLUMN, wide]);
  assert.deepEqual(table.cells(obj, now), ["a", "x", "5m", "Thing"]);
  const plain = nameAgeTable<ApiObject>({ columns: [own], cells: () => ["x"] });
  assert.deepEqual(plain.columns, [NAME_COLUMN, own, AGE_COLUMN]);
  assert.deepEqual(plain.cells({ ...obj, metadata: {} }, now), ["", "x", "<unknown>"]);
});
