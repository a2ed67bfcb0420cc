// The stored form of an object and the check that lets a create keep its own
// object as the decoded one (isJsonData): what it accepts must round-trip
// through JSON to an equal value with members in the same order; what could
// come back different is refused.

import { test } from "node:test";
import assert from "node:assert/strict";
import { isJsonData, storedForm } from "./codec.js";

test("storedForm puts apiVersion, kind, metadata first and leaves resourceVersion out", () => {
  const obj = { spec: { a: 1 }, kind: "Pod", metadata: { resourceVersion: "9", name: "p" }, apiVersion: "v1", status: {} };
  const form = storedForm(obj);
  assert.deepEqual(Object.keys(form), ["apiVersion", "kind", "metadata", "spec", "status"]);
  assert.deepEqual(form.metadata, { name: "p" });
  assert.equal(form["spec"], obj.spec, "a shallow copy");
  assert.equal(obj.metadata.resourceVersion, "9", "the object itself is unchanged");
});

test("isJsonData accepts what JSON gives back equal and in order", () => {
  const frozen = Object.freeze({ "f:a": Object.freeze({}) });
  const values: unknown[] = [
    null, true, false, "", "x", "\ud800 lone surrogate", 0, 1.5, -3, 1e300,
    [], [1, "a", null, [{}]], {}, { b: 1, a: 2, "2": "integer keys first", "1": 0 }, { nested: { deep: [{ k: "v" }] }, frozen },
  ];
  for (const v of values) {
    assert.equal(isJsonData(v), true, JSON.stringify(v));
    const back = JSON.parse(JSON.stringify(v)) as unknown;
    assert.deepEqual(back, v);
    assert.equal(JSON.stringify(back), JSON.stringify(v));
  }
});

test("isJsonData refuses whatever a JSON round trip would change", () => {
  class Box {
    a = 1;
  }
  const sparse: unknown[] = [1];
  sparse[2] = 3;
  const refused: [string, unknown][] = [
    ["undefined member", { a: undefined }],
    ["undefined in an array", [undefined]],
    ["a hole", sparse],
    ["NaN", { n: NaN }],
    ["Infinity", [Infinity]],
    ["-0", { z: -0 }],
    ["a Date", { d: new Date(0) }],
    ["a class instance", { b: new Box() }],
    ["a typed array", { u: new Uint8Array(2) }],
    ["a function", { f: () => 1 }],
    ["a bigint", { n: 1n }],
    ["a symbol value", { s: Symbol("s") }],
    ["a null-prototype object", Object.assign(Object.create(null) as object, { a: 1 })],
    ["an inherited enumerable member", Object.create({ inherited: 1 }) as object],
    ["deep down", { a: [{ b: { c: [1, undefined] } }] }],
  ];
  for (const [what, v] of refused) assert.equal(isJsonData(v), false, what);
});
