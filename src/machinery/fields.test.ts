import { test } from "node:test";
import assert from "node:assert/strict";
import { escapeFieldValue, fieldSelectorFromSet, parseFieldSelector, pinnedName, unescapeFieldValue } from "./fields.js";
import { ApiError } from "./errors.js";

// input → canonical string, requirements
const good: Array<[string, string, Array<[string, string, string]>]> = [
  ["", "", []],
  ["metadata.name=x", "metadata.name=x", [["metadata.name", "=", "x"]]],
  ["metadata.name==x", "metadata.name=x", [["metadata.name", "==", "x"]]],
  ["status.phase!=Running", "status.phase!=Running", [["status.phase", "!=", "Running"]]],
  [
    "metadata.namespace=b,metadata.name=a",
    "metadata.name=a,metadata.namespace=b",
    [["metadata.name", "=", "a"], ["metadata.namespace", "=", "b"]],
  ],
  ["a=", "a=", [["a", "=", ""]]],
  ["a=x,,b=y", "a=x,b=y", [["a", "=", "x"], ["b", "=", "y"]]],
  [String.raw`a=x\,y`, String.raw`a=x\,y`, [["a", "=", "x,y"]]],
  [String.raw`a=x\=y`, String.raw`a=x\=y`, [["a", "=", "x=y"]]],
  [String.raw`a=x\\y`, String.raw`a=x\\y`, [["a", "=", String.raw`x\y`]]],
  [
    "involvedObject.name=web,involvedObject.namespace=default,involvedObject.uid=1234",
    "involvedObject.name=web,involvedObject.namespace=default,involvedObject.uid=1234",
    [["involvedObject.name", "=", "web"], ["involvedObject.namespace", "=", "default"], ["involvedObject.uid", "=", "1234"]],
  ],
];

for (const [input, canonical, reqs] of good) {
  test(`field selector ${JSON.stringify(input)}`, () => {
    const sel = parseFieldSelector(input);
    assert.equal(sel.toString(), canonical);
    assert.deepEqual(
      sel.requirements.map((r) => [r.field, r.operator, r.value]),
      reqs,
    );
    assert.equal(sel.empty, reqs.length === 0);
  });
}

const bad: Array<[string, string]> = [
  ["abc", "invalid selector: 'abc'; can't understand 'abc'"],
  ["a=b,abc", "invalid selector: 'a=b,abc'; can't understand 'abc'"],
  ["a=b=c", "invalid field selector: unescaped character in value: 61"],
  [String.raw`a=b\x`, String.raw`invalid field selector: invalid escape sequence: \x`],
  ["a=b\\", "invalid field selector: invalid escape sequence: \\"],
];

for (const [input, message] of bad) {
  test(`reject field selector ${JSON.stringify(input)}`, () => {
    assert.throws(() => parseFieldSelector(input), (e: unknown) => e instanceof ApiError && e.code === 400 && e.message === message);
  });
}

const matching: Array<[string, Record<string, string>, boolean]> = [
  ["", {}, true],
  ["metadata.name=x", { "metadata.name": "x" }, true],
  ["metadata.name=x", { "metadata.name": "y" }, false],
  ["metadata.name=x", {}, false],
  ["spec.nodeName=", {}, true],
  ["spec.nodeName=", { "spec.nodeName": "n1" }, false],
  ["status.phase!=Running", { "status.phase": "Pending" }, true],
  ["status.phase!=Running", {}, true],
  ["status.phase!=Running", { "status.phase": "Running" }, false],
  ["a=1,b!=2", { a: "1", b: "3" }, true],
  ["a=1,b!=2", { a: "1", b: "2" }, false],
  ["constructor=", {}, true],
];

for (const [sel, fields, want] of matching) {
  test(`${JSON.stringify(sel)} matches ${JSON.stringify(fields)}: ${want}`, () => {
    assert.equal(parseFieldSelector(sel).matches(fields), want);
  });
}

test("pinnedName finds kubectl's single-object selector", () => {
  assert.equal(pinnedName(parseFieldSelector("metadata.name=web")), "web");
  assert.equal(pinnedName(parseFieldSelector("metadata.namespace=default,metadata.name==web")), "web");
  assert.equal(pinnedName(parseFieldSelector("metadata.name!=web")), undefined);
  assert.equal(pinnedName(parseFieldSelector("")), undefined);
});

test("escape round trip and sets", () => {
  const v = String.raw`a,b=c\d`;
  assert.equal(escapeFieldValue(v), String.raw`a\,b\=c\\d`);
  assert.equal(unescapeFieldValue(escapeFieldValue(v)), v);
  const sel = fieldSelectorFromSet({ "metadata.name": "x,y" });
  assert.equal(sel.toString(), String.raw`metadata.name=x\,y`);
  assert.equal(parseFieldSelector(sel.toString()).matches({ "metadata.name": "x,y" }), true);
  assert.equal(fieldSelectorFromSet({}).empty, true);
});
