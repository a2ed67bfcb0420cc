import { test } from "node:test";
import assert from "node:assert/strict";
import { ApiError } from "../errors.js";
import { applyJsonPatch, MAX_JSON_PATCH_OPERATIONS } from "./json-patch.js";
import { PATCH_REJECTED_MESSAGE } from "./errors.js";

/** Asserts the 422 upstream answers for a patch that does not apply; returns the precise reason (the cause). */
function rejects(doc: unknown, ops: unknown): string {
  try {
    applyJsonPatch(doc, ops);
  } catch (err) {
    assert.ok(err instanceof ApiError, `expected an ApiError, got ${String(err)}`);
    assert.equal(err.code, 422);
    assert.equal(err.reason, "Invalid");
    assert.equal(err.status.message, PATCH_REJECTED_MESSAGE);
    assert.deepEqual(err.status.details, {});
    assert.ok(err.cause instanceof Error);
    return err.cause.message;
  }
  assert.fail(`patch ${JSON.stringify(ops)} applied to ${JSON.stringify(doc)}`);
}

// RFC 6902 appendix A, every example: [title, document, patch, result] (result undefined: an error).
const appendixA: Array<[string, unknown, unknown, unknown]> = [
  ["A.1 adding an object member", { foo: "bar" }, [{ op: "add", path: "/baz", value: "qux" }], { baz: "qux", foo: "bar" }],
  ["A.2 adding an array element", { foo: ["bar", "baz"] }, [{ op: "add", path: "/foo/1", value: "qux" }], { foo: ["bar", "qux", "baz"] }],
  ["A.3 removing an object member", { baz: "qux", foo: "bar" }, [{ op: "remove", path: "/baz" }], { foo: "bar" }],
  ["A.4 removing an array element", { foo: ["bar", "qux", "baz"] }, [{ op: "remove", path: "/foo/1" }], { foo: ["bar", "baz"] }],
  ["A.5 replacing a value", { baz: "qux", foo: "bar" }, [{ op: "replace", path: "/baz", value: "boo" }], { baz: "boo", foo: "bar" }],
  [
    "A.6 moving a value",
    { foo: { bar: "baz", waldo: "fred" }, qux: { corge: "grault" } },
    [{ op: "move", from: "/foo/waldo", path: "/qux/thud" }],
    { foo: { bar: "baz" }, qux: { corge: "grault", thud: "fred" } },
  ],
  [
    "A.7 moving an array element",
    { foo: ["all", "grass", "cows", "eat"] },
    [{ op: "move", from: "/foo/1", path: "/foo/3" }],
    { foo: ["all", "cows", "eat", "grass"] },
  ],
  [
    "A.8 testing a value: success",
    { baz: "qux", foo: ["a", 2, "c"] },
    [
      { op: "test", path: "/baz", value: "qux" },
      { op: "test", path: "/foo/1", value: 2 },
    ],
    { baz: "qux", foo: ["a", 2, "c"] },
  ],
  ["A.9 testing a value: error", { baz: "qux" }, [{ op: "test", path: "/baz", value: "bar" }], undefined],
  ["A.10 adding a nested member object", { foo: "bar" }, [{ op: "add", path: "/child", value: { grandchild: {} } }], { foo: "bar", child: { grandchild: {} } }],
  ["A.11 ignoring unrecognized elements", { foo: "bar" }, [{ op: "add", path: "/baz", value: "qux", xyz: 123 }], { foo: "bar", baz: "qux" }],
  ["A.12 adding to a nonexistent target", { foo: "bar" }, [{ op: "add", path: "/baz/bat", value: "qux" }], undefined],
  // A.13's duplicate "op" member is refused by the decoder; a decoded document keeps the last
  // member, here a remove of a member that does not exist, which fails as well.
  ["A.13 invalid patch document (as decoded)", { foo: "bar" }, [{ op: "remove", path: "/baz", value: "qux" }], undefined],
  ["A.14 ~ escape ordering", { "/": 9, "~1": 10 }, [{ op: "test", path: "/~01", value: 10 }], { "/": 9, "~1": 10 }],
  ["A.15 comparing strings and numbers", { "/": 9, "~1": 10 }, [{ op: "test", path: "/~01", value: "10" }], undefined],
  ["A.16 adding an array value", { foo: ["bar"] }, [{ op: "add", path: "/foo/-", value: ["abc", "def"] }], { foo: ["bar", ["abc", "def"]] }],
];

for (const [title, doc, ops, expected] of appendixA) {
  test(`RFC 6902 ${title}`, () => {
    const before = JSON.stringify(doc);
    if (expected === undefined) rejects(doc, ops);
    else assert.deepEqual(applyJsonPatch(doc, ops), expected);
    assert.equal(JSON.stringify(doc), before, "the document is not mutated");
  });
}

test("failure reasons read like upstream's json-patch library", () => {
  assert.equal(rejects({ baz: "qux" }, [{ op: "test", path: "/baz", value: "bar" }]), "testing value /baz failed: test failed");
  assert.equal(rejects({ foo: "bar" }, [{ op: "add", path: "/baz/bat", value: 1 }]), 'add operation does not apply: doc is missing path: "/baz/bat": missing value');
  assert.equal(rejects({ a: 1 }, [{ op: "remove", path: "/b" }]), "error in remove for path: '/b': Unable to remove nonexistent key: b: missing value");
  assert.equal(rejects({ a: [1] }, [{ op: "add", path: "/a/5", value: 1 }]), "error in add for path: '/a/5': Unable to access invalid index: 5: invalid index referenced");
  assert.equal(rejects({}, [{ op: "frobnicate", path: "/a" }]), "Unexpected kind: frobnicate");
  assert.equal(rejects({}, [{ path: "/a" }]), "Unexpected kind: unknown");
  assert.equal(rejects({}, [null]), "Unexpected kind: unknown");
});

test("a patch applies entirely or not at all, and never aliases its input", () => {
  const doc = { metadata: { labels: { a: "1" } }, list: [1, 2] };
  const before = JSON.stringify(doc);
  rejects(doc, [
    { op: "add", path: "/metadata/labels/b", value: "2" },
    { op: "remove", path: "/list/0" },
    { op: "test", path: "/metadata/labels/a", value: "nope" },
  ]);
  assert.equal(JSON.stringify(doc), before);

  const value = { nested: ["x"] };
  const out = applyJsonPatch(doc, [{ op: "add", path: "/v", value }]) as { v: { nested: string[] }; list: number[] };
  out.v.nested.push("y");
  out.list.push(3);
  assert.deepEqual(value, { nested: ["x"] });
  assert.deepEqual(doc.list, [1, 2]);
});

test("operation count limit: 413 past upstream's 10,000", () => {
  const ops = Array.from({ length: MAX_JSON_PATCH_OPERATIONS + 1 }, () => ({ op: "test", path: "/a", value: 1 }));
  assert.throws(
    () => applyJsonPatch({ a: 1 }, ops),
    (err: unknown) =>
      err instanceof ApiError &&
      err.code === 413 &&
      err.reason === "RequestEntityTooLarge" &&
      err.message === "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
  );
  assert.deepEqual(applyJsonPatch({ a: 1 }, ops.slice(1)), { a: 1 });
  assert.throws(() => applyJsonPatch({}, [{ op: "add", path: "/a", value: 1 }, { op: "add", path: "/b", value: 2 }], { maxOperations: 1 }), /got 2/);
});

test("copy limit: the bytes all copies add are capped", () => {
  const doc = { a: "x".repeat(100) }; // 102 bytes as JSON
  const ops = [
    { op: "copy", from: "/a", path: "/b" },
    { op: "copy", from: "/a", path: "/c" },
  ];
  assert.deepEqual(Object.keys(applyJsonPatch(doc, ops, { maxCopyBytes: 204 }) as object), ["a", "b", "c"]);
  try {
    applyJsonPatch(doc, ops, { maxCopyBytes: 203 });
    assert.fail("copy limit not enforced");
  } catch (err) {
    assert.ok(err instanceof ApiError && err.code === 422);
    assert.equal(
      (err.cause as Error).message,
      "Unable to complete the copy, the accumulated size increase of copy is 204, exceeding the limit 203",
    );
  }
  // Doubling a document repeatedly hits the default 3 MiB cap long before memory does.
  const doubling = Array.from({ length: 40 }, (_, i) => ({ op: "copy", from: "/d", path: `/d${i}` }));
  rejects({ d: "y".repeat(200_000) }, doubling);
});

test("a body that is not a list of operation objects is a 400", () => {
  for (const [ops, message] of [
    [{ op: "add" }, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"],
    ["add", "json: cannot unmarshal string into Go value of type jsonpatch.Patch"],
    [[1], "json: cannot unmarshal number into Go value of type jsonpatch.Operation"],
    [[[]], "json: cannot unmarshal array into Go value of type jsonpatch.Operation"],
  ] as const) {
    assert.throws(
      () => applyJsonPatch({}, ops),
      (err: unknown) => err instanceof ApiError && err.code === 400 && err.reason === "BadRequest" && err.message === message,
    );
  }
  assert.deepEqual(applyJsonPatch({ a: 1 }, null), { a: 1 });
  assert.deepEqual(applyJsonPatch({ a: 1 }, []), { a: 1 });
});

test("pointers: escapes, append, indices, the whole document", () => {
  assert.deepEqual(applyJsonPatch({ "a/b": 1, "m~n": 2 }, [{ op: "replace", path: "/a~1b", value: 3 }, { op: "remove", path: "/m~0n" }]), { "a/b": 3 });
  assert.deepEqual(applyJsonPatch({ "": { "": 1 } }, [{ op: "replace", path: "//", value: 2 }]), { "": { "": 2 } });
  assert.deepEqual(applyJsonPatch({ l: [1] }, [{ op: "add", path: "/l/-", value: 2 }, { op: "add", path: "/l/2", value: 3 }]), { l: [1, 2, 3] });
  assert.deepEqual(applyJsonPatch({ a: 1 }, [{ op: "replace", path: "", value: { b: 2 } }]), { b: 2 });
  assert.deepEqual(applyJsonPatch({ a: 1 }, [{ op: "add", path: "", value: { c: 3 } }]), { c: 3 });
  assert.deepEqual(applyJsonPatch({ a: 1 }, [{ op: "test", path: "", value: { a: 1 } }]), { a: 1 });
  assert.deepEqual(applyJsonPatch({ a: { b: 1 } }, [{ op: "copy", from: "", path: "/a/self" }]), { a: { b: 1, self: { a: { b: 1 } } } });

  rejects({ l: [1, 2] }, [{ op: "remove", path: "/l/-1" }]); // no negative indices (RFC 6901)
  rejects({ l: [1, 2] }, [{ op: "remove", path: "/l/01" }]); // no leading zeros
  rejects({ l: [1, 2] }, [{ op: "replace", path: "/l/-", value: 0 }]); // "-" names no element
  rejects({ l: [1, 2] }, [{ op: "add", path: "/l/x", value: 0 }]);
  rejects({ a: "s" }, [{ op: "add", path: "/a/b", value: 0 }]); // scalars have no members
  rejects({ a: 1 }, [{ op: "add", path: "a", value: 0 }]); // not a pointer
  rejects({ a: 1 }, [{ op: "test", path: "/a~2", value: 1 }]); // bad escape
  rejects({ a: 1 }, [{ op: "remove", path: "" }]);
  rejects({ a: 1 }, [{ op: "replace", path: "", value: 5 }]);
});

test("operation details: required members, missing targets, moves", () => {
  rejects({}, [{ op: "add", path: "/a" }]); // value is required
  rejects({ a: 1 }, [{ op: "test", path: "/a" }]);
  rejects({}, [{ op: "add", value: 1 }]); // path is required
  rejects({ a: 1 }, [{ op: "move", path: "/b" }]); // from is required
  rejects({}, [{ op: "test", path: "/missing", value: null }]); // a missing member never tests equal
  assert.deepEqual(applyJsonPatch({ a: null }, [{ op: "test", path: "/a", value: null }]), { a: null });
  rejects({ a: { b: 1 } }, [{ op: "move", from: "/a", path: "/a/b/c" }]); // into its own child
  assert.deepEqual(applyJsonPatch({ a: { b: 1 } }, [{ op: "move", from: "/a", path: "/a" }]), { a: { b: 1 } });
  rejects({ a: 1 }, [{ op: "copy", from: "/nope", path: "/b" }]);
  // Object equality ignores member order; arrays do not.
  assert.deepEqual(applyJsonPatch({ o: { x: 1, y: [1, 2] } }, [{ op: "test", path: "/o", value: { y: [1, 2], x: 1 } }]), { o: { x: 1, y: [1, 2] } });
  rejects({ o: { y: [1, 2] } }, [{ op: "test", path: "/o/y", value: [2, 1] }]);
});

test("replace of a missing object member adds it, as upstream (kubectl users rely on it)", () => {
  assert.deepEqual(applyJsonPatch({ metadata: {} }, [{ op: "replace", path: "/metadata/labels", value: { a: "b" } }]), { metadata: { labels: { a: "b" } } });
  rejects({ l: [1] }, [{ op: "replace", path: "/l/1", value: 2 }]); // arrays stay strict
});

test("__proto__ is an ordinary member", () => {
  const out = applyJsonPatch({}, [{ op: "add", path: "/__proto__", value: { polluted: true } }]) as Record<string, unknown>;
  assert.deepEqual(Object.keys(out), ["__proto__"]);
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
  rejects({}, [{ op: "test", path: "/toString", value: null }]); // inherited names are not members
});
