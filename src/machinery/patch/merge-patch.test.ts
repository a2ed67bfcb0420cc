import { test } from "node:test";
import assert from "node:assert/strict";
import { applyMergePatch } from "./merge-patch.js";

// The examples of RFC 7386, appendix A.
const cases: Array<[unknown, unknown, unknown]> = [
  [{ a: "b" }, { a: "c" }, { a: "c" }],
  [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
  [{ a: "b" }, { a: null }, {}],
  [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
  [{ a: ["b"] }, { a: "c" }, { a: "c" }],
  [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
  [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
  [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
  [["a", "b"], ["c", "d"], ["c", "d"]],
  [{ a: "b" }, ["c"], ["c"]],
  [{ a: "foo" }, null, null],
  [{ a: "foo" }, "bar", "bar"],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: "b", c: null }, { a: "b" }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

test("RFC 7386 appendix A examples", () => {
  for (const [target, patch, expected] of cases) {
    const before = JSON.stringify(target);
    assert.deepEqual(applyMergePatch(target, patch), expected, `${before} + ${JSON.stringify(patch)}`);
    assert.equal(JSON.stringify(target), before, "the target is not mutated");
  }
});

test("a __proto__ key is data, not the prototype", () => {
  const patch = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
  const out = applyMergePatch({}, patch) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.deepEqual(Object.keys(out).sort(), ["__proto__", "a"]);
  assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
});
