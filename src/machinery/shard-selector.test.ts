import { test } from "node:test";
import assert from "node:assert/strict";
import { fnv1a64, fnv1a64Parts, parseShardSelector } from "./shard-selector.js";
import { ApiError } from "./errors.js";

// The textbook definition, with BigInt, to check the limb arithmetic against.
function referenceFnv1a64(bytes: Uint8Array): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h;
}

test("FNV-1a 64 known vectors", () => {
  const vectors: Array<[string, bigint]> = [
    ["", 0xcbf29ce484222325n],
    ["a", 0xaf63dc4c8601ec8cn],
    ["foobar", 0x85944171f73967e8n],
  ];
  for (const [input, want] of vectors) {
    assert.equal(fnv1a64(input), want, JSON.stringify(input));
    assert.equal(fnv1a64(new TextEncoder().encode(input)), want);
  }
});

test("FNV-1a 64 agrees with the BigInt reference on uids, unicode and random bytes", () => {
  const inputs = ["9f1c1a4e-2b7d-4a8e-9d6f-0c1e2f3a4b5c", "default", "kube-system", "héllo wörld ✓ 😀", "x".repeat(1000)];
  for (const s of inputs) assert.equal(fnv1a64(s), referenceFnv1a64(new TextEncoder().encode(s)), s);
  for (let i = 0; i < 200; i++) {
    const bytes = new Uint8Array(i % 50);
    for (let j = 0; j < bytes.length; j++) bytes[j] = Math.floor(Math.random() * 256);
    assert.equal(fnv1a64(bytes), referenceFnv1a64(bytes));
  }
  const [hi, lo] = fnv1a64Parts("a");
  assert.deepEqual([hi, lo], [0xaf63dc4c, 0x8601ec8c]);
});

test("parse, echo and match one range", () => {
  const text = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
  const sel = parseShardSelector(text);
  assert.equal(sel.toString(), text);
  assert.equal(sel.field, "object.metadata.uid");
  // fnv1a64("a") = 0xaf63... (upper half), fnv1a64("foobar") = 0x8594... (upper half), "" = 0xcbf2... (upper)
  assert.equal(sel.matchesValue("a"), false);
  const upper = parseShardSelector("shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')");
  assert.equal(upper.matchesValue("a"), true);
  assert.equal(upper.matches({ metadata: { uid: "a" } }), true);
  assert.equal(sel.matches({ metadata: { uid: "a" } }), false);
});

test("the two halves partition every uid, and bounds are [start, end)", () => {
  const lower = parseShardSelector("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')");
  const upper = parseShardSelector("shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')");
  for (let i = 0; i < 500; i++) {
    const uid = crypto.randomUUID();
    assert.notEqual(lower.matchesValue(uid), upper.matchesValue(uid), uid);
  }
  // Exactly the hash of "a" as start is included; as end it is excluded.
  const h = fnv1a64("a").toString(16).padStart(16, "0");
  assert.equal(parseShardSelector(`shardRange(object.metadata.uid, '0x${h}', '0xffffffffffffffff')`).matchesValue("a"), true);
  assert.equal(parseShardSelector(`shardRange(object.metadata.uid, '0x0000000000000000', '0x${h}')`).matchesValue("a"), false);
});

test("ranges joined with || on namespaces; whitespace and double quotes are accepted", () => {
  const sel = parseShardSelector(
    `  shardRange( object.metadata.namespace , "0x0000000000000000" , "0x1000000000000000" )||shardRange(object.metadata.namespace, '0xa000000000000000', '0xb000000000000000')  `,
  );
  assert.equal(
    sel.toString(),
    "shardRange(object.metadata.namespace, '0x0000000000000000', '0x1000000000000000') || shardRange(object.metadata.namespace, '0xa000000000000000', '0xb000000000000000')",
  );
  assert.equal(sel.ranges.length, 2);
  assert.equal(sel.matches({ metadata: { namespace: "a" } }), true); // 0xaf63... in the second range
  assert.equal(sel.matches({ metadata: {} }), false); // "" hashes to 0xcbf2...
  assert.equal(sel.matches({}), false);
});

const bad: Array<[string, string]> = [
  ["", "invalid shard selector: empty selector"],
  ["shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')", `invalid shard selector: unsupported field path "object.metadata.name": must be one of object.metadata.uid, object.metadata.namespace`],
  [
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
    "invalid shard selector: all ranges must use the same field path: found object.metadata.namespace after object.metadata.uid",
  ],
  ["shardRange(object.metadata.uid, '0x00', '0x8000000000000000')", `invalid shard selector: start "0x00" must be 0x followed by 16 lowercase hex digits`],
  ["shardRange(object.metadata.uid, '0x000000000000000A', '0x8000000000000000')", `invalid shard selector: start "0x000000000000000A" must be 0x followed by 16 lowercase hex digits`],
  ["shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000001')", `invalid shard selector: end "0x10000000000000001" must be 0x followed by 16 lowercase hex digits, or 0x10000000000000000`],
  ["shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')", "invalid shard selector: start 0x8000000000000000 must be less than end 0x8000000000000000"],
  ["shardRange(object.metadata.uid, '0x9000000000000000', '0x8000000000000000')", "invalid shard selector: start 0x9000000000000000 must be less than end 0x8000000000000000"],
  ["shardRange(object.metadata.uid, 0x0000000000000000, '0x8000000000000000')", "invalid shard selector: expected a quoted start at position 32"],
  ["shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000'", "invalid shard selector: expected ')' closing shardRange at position 74"],
  ["shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') &&", `invalid shard selector: unexpected "&&" at position 76; ranges are joined with ||`],
  ["hash(object.metadata.uid)", "invalid shard selector: expected shardRange( at position 0"],
];

for (const [input, message] of bad) {
  test(`reject shard selector ${JSON.stringify(input.slice(0, 60))}`, () => {
    assert.throws(() => parseShardSelector(input), (e: unknown) => e instanceof ApiError && e.code === 400 && e.message === message);
  });
}
