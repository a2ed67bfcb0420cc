import { test } from "node:test";
import assert from "node:assert/strict";
import {
  everything,
  newRequirement,
  nothing,
  parseSelector,
  selectorFromLabelSelector,
  selectorFromSet,
} from "./labels.js";
import { ApiError } from "./errors.js";

// input → canonical string (requirements sorted by key, set values sorted)
const good: Array<[string, string]> = [
  ["", ""],
  ["   ", ""],
  ["x=a,y=b,z=c", "x=a,y=b,z=c"],
  ["z=c,x=a", "x=a,z=c"],
  ["x!=a,y=b", "x!=a,y=b"],
  ["x==a", "x==a"],
  ["x=", "x="],
  ["x= ", "x="],
  ["x=,z= ", "x=,z="],
  ["x", "x"],
  ["!x", "!x"],
  ["  x  ,  !y  ", "x,!y"],
  ["x>1", "x>1"],
  ["x>1,z<5", "x>1,z<5"],
  ["env in (prod, qa)", "env in (prod,qa)"],
  ["env in (qa,prod,qa)", "env in (prod,qa)"],
  ["env notin (front)", "env notin (front)"],
  ["x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()"],
  ["x in (,a)", "x in (,a)"],
  ["x in (a,)", "x in (,a)"],
  ["in in (in,notin)", "in in (in,notin)"],
  ["x=in", "x=in"],
  ["example.orch.io/app=web", "example.orch.io/app=web"],
  ["a.b-c_d=E.f-G_h", "a.b-c_d=E.f-G_h"],
  ["x\t=\ty", "x=y"],
];

for (const [input, canonical] of good) {
  test(`parse ${JSON.stringify(input)}`, () => {
    const sel = parseSelector(input);
    assert.equal(sel.toString(), canonical);
    assert.equal(sel.empty, canonical === "");
    // The canonical form parses back to itself.
    assert.equal(parseSelector(sel.toString()).toString(), canonical);
  });
}

const NAME_PART_REGEX =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_REGEX =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

// input → upstream's exact error text
const bad: Array<[string, string]> = [
  // `|` is no operator: "a||y" lexes as one value, which is not a valid label value.
  ["x=a||y=b", `unable to parse requirement: values[0][x]: Invalid value: "a||y": ${LABEL_VALUE_REGEX}`],
  // Gt/Lt values are label values too, so negative bounds are rejected, as upstream.
  ["x<-10", `unable to parse requirement: values[0][x]: Invalid value: "-10": ${LABEL_VALUE_REGEX}`],
  ["x==a==b", "found '==', expected: ',' or 'end of string'"],
  ["!x=a", "found '=', expected: ',' or 'end of string'"],
  ["x=a,", "found '', expected: identifier after ','"],
  [",x=a", "found ',', expected: !, identifier, or 'end of string'"],
  ["(a)", "found '(', expected: !, identifier, or 'end of string'"],
  ["x in (a", "unable to parse requirement: found '', expected: ',' or ')'"],
  ["x in a", "unable to parse requirement: found 'a' expected: '('"],
  ["x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"],
  ["x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
  ["x in (a,=)", "unable to parse requirement: found '=', expected: ',', or identifier"],
  ["x a", "unable to parse requirement: found 'a', expected: in, notin, =, ==, !=, gt, lt"],
  ["x=(", "unable to parse requirement: found '(', expected: identifier"],
  ["!", "unable to parse requirement: found '', expected: identifier"],
  ["x<a", "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer"],
  ["-x=a", `unable to parse requirement: <nil>: Invalid value: "-x": ${NAME_PART_REGEX}`],
  ["/x=a", `unable to parse requirement: <nil>: Invalid value: "/x": prefix part must be non-empty`],
  [
    "x/y/z=a",
    `unable to parse requirement: <nil>: Invalid value: "x/y/z": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
  ],
  [`x=${"a".repeat(64)}`, `unable to parse requirement: values[0][x]: Invalid value: "${"a".repeat(64)}": must be no more than 63 characters`],
  ["x=-a", `unable to parse requirement: values[0][x]: Invalid value: "-a": ${LABEL_VALUE_REGEX}`],
];

for (const [input, message] of bad) {
  test(`reject ${JSON.stringify(input)}`, () => {
    assert.throws(
      () => parseSelector(input),
      (e: unknown) => e instanceof ApiError && e.code === 400 && e.reason === "BadRequest" && e.message === message,
    );
  });
}

// selector × labels → matches?
const matching: Array<[string, Record<string, string> | undefined, boolean]> = [
  ["", {}, true],
  ["", undefined, true],
  ["x=a", { x: "a" }, true],
  ["x=a", { x: "b" }, false],
  ["x=a", {}, false],
  ["x==a", { x: "a", y: "b" }, true],
  ["x!=a", { x: "b" }, true],
  ["x!=a", {}, true],
  ["x!=a", { x: "a" }, false],
  ["x=", { x: "" }, true],
  ["x=", {}, false],
  ["x", { x: "" }, true],
  ["x", { y: "" }, false],
  ["!x", { y: "" }, true],
  ["!x", { x: "1" }, false],
  ["x in (a,b)", { x: "b" }, true],
  ["x in (a,b)", { x: "c" }, false],
  ["x in (a,b)", {}, false],
  ["x notin (a,b)", { x: "c" }, true],
  ["x notin (a,b)", {}, true],
  ["x notin (a,b)", { x: "a" }, false],
  ["x>5", { x: "6" }, true],
  ["x>5", { x: "5" }, false],
  ["x>5", { x: "abc" }, false],
  ["x>5", {}, false],
  ["x<5", { x: "-7" }, true],
  ["x>9007199254740993", { x: "9007199254740994" }, true],
  ["x=a,y=b", { x: "a", y: "b" }, true],
  ["x=a,y=b", { x: "a" }, false],
  ["constructor", {}, false],
  ["!constructor", {}, true],
  ["constructor=x", { constructor: "x" }, true],
];

for (const [sel, labels, want] of matching) {
  test(`${JSON.stringify(sel)} matches ${JSON.stringify(labels)}: ${want}`, () => {
    assert.equal(parseSelector(sel).matches(labels), want);
  });
}

test("requiresExactMatch", () => {
  const sel = parseSelector("a=1,b in (2),c in (3,4),d!=5");
  assert.equal(sel.requiresExactMatch("a"), "1");
  assert.equal(sel.requiresExactMatch("b"), "2");
  assert.equal(sel.requiresExactMatch("c"), undefined);
  assert.equal(sel.requiresExactMatch("d"), undefined);
  assert.equal(sel.requiresExactMatch("e"), undefined);
});

test("selectorFromLabelSelector: null is nothing, empty is everything", () => {
  assert.equal(selectorFromLabelSelector(null), nothing());
  assert.equal(nothing().matches({}), false);
  assert.equal(nothing().empty, false);
  assert.equal(selectorFromLabelSelector({}), everything());
  assert.equal(selectorFromLabelSelector({ matchLabels: {}, matchExpressions: [] }).empty, true);
});

test("selectorFromLabelSelector: matchLabels and every expression operator", () => {
  const sel = selectorFromLabelSelector({
    matchLabels: { app: "web", tier: "front" },
    matchExpressions: [
      { key: "env", operator: "In", values: ["qa", "prod"] },
      { key: "track", operator: "NotIn", values: ["canary"] },
      { key: "owner", operator: "Exists" },
      { key: "legacy", operator: "DoesNotExist" },
    ],
  });
  assert.equal(sel.toString(), "app=web,env in (prod,qa),!legacy,owner,tier=front,track notin (canary)");
  assert.equal(sel.matches({ app: "web", tier: "front", env: "qa", owner: "me" }), true);
  assert.equal(sel.matches({ app: "web", tier: "front", env: "qa", owner: "me", legacy: "1" }), false);
  assert.equal(sel.matches({ app: "web", tier: "front", env: "dev", owner: "me" }), false);
  assert.equal(sel.matches({ app: "web", tier: "front", env: "qa", owner: "me", track: "canary" }), false);
});

test("selectorFromLabelSelector: invalid requirements are upstream's errors", () => {
  const cases: Array<[Parameters<typeof selectorFromLabelSelector>[0], string]> = [
    [{ matchExpressions: [{ key: "a", operator: "Gt", values: ["1"] }] }, `"Gt" is not a valid label selector operator`],
    [{ matchExpressions: [{ key: "a", operator: "In", values: [] }] }, "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"],
    [
      { matchExpressions: [{ key: "a", operator: "Exists", values: ["x"] }] },
      `values: Invalid value: ["x"]: values set must be empty for exists and does not exist`,
    ],
    [{ matchLabels: { "bad key": "v" } }, `key: Invalid value: "bad key": ${NAME_PART_REGEX}`],
  ];
  for (const [ls, message] of cases) {
    assert.throws(() => selectorFromLabelSelector(ls), (e: unknown) => e instanceof ApiError && e.code === 400 && e.message === message);
  }
});

test("newRequirement aggregates several errors in brackets", () => {
  assert.throws(
    () => newRequirement("-", "=", ["a", "b"]),
    (e: unknown) =>
      e instanceof ApiError &&
      e.message === `[key: Invalid value: "-": ${NAME_PART_REGEX}, values: Invalid value: ["a","b"]: exact-match compatibility requires one single value]`,
  );
});

test("selectorFromSet", () => {
  const sel = selectorFromSet({ b: "2", a: "1" });
  assert.equal(sel.toString(), "a=1,b=2");
  assert.equal(sel.matches({ a: "1", b: "2", c: "3" }), true);
  assert.equal(selectorFromSet({}).empty, true);
});
