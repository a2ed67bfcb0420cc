import { test } from "node:test";
import assert from "node:assert/strict";
import { CborError, decodeCbor, decodeCborSequence, encodeCbor } from "./index.js";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const bytes = (h: string) => Buffer.from(h.replace(/\s+/g, ""), "hex");
/** The item without the self-described prefix. */
const item = (v: unknown) => hex(encodeCbor(v)).slice(6);

test("encodes with the self-described tag and the shortest heads (RFC 8949 appendix A)", () => {
  assert.equal(hex(encodeCbor(0)).slice(0, 6), "d9d9f7");
  const cases: Array<[unknown, string]> = [
    [0, "00"], [23, "17"], [24, "1818"], [100, "1864"], [1000, "1903e8"], [1000000, "1a000f4240"],
    [1000000000000, "1b000000e8d4a51000"], [-1, "20"], [-1000, "3903e7"],
    [1.5, "f93e00"], [100000.5, "fa47c35040"], [1.1, "fb3ff199999999999a"], [-4.1, "fbc010666666666666"], [5.960464477539063e-8, "f90001"],
    [false, "f4"], [true, "f5"], [null, "f6"],
    ["", "60"], ["a", "6161"], ["ü", "62c3bc"], ["水", "63e6b0b4"],
    [[1, [2, 3]], "8201820203"], [{ a: 1, b: [2, 3] }, "a26161016162820203"],
  ];
  for (const [v, h] of cases) assert.equal(item(v), h, JSON.stringify(v));
  assert.equal(item("x".repeat(30)), "781e" + "78".repeat(30));
});

test("round-trips JSON values, __proto__ as a plain key, undefined members left out", () => {
  const v = JSON.parse('{"__proto__":{"x":1},"s":"héllo 🚀","n":[0,-1,2.5,9007199254740991,-9007199254740991,1e300],"o":{"t":true,"f":false,"z":null}}');
  const back = decodeCbor(encodeCbor(v)) as Record<string, unknown>;
  assert.deepEqual(back, v);
  assert.equal(Object.getPrototypeOf(back), Object.prototype);
  assert.deepEqual(Object.keys(back), ["__proto__", "s", "n", "o"]);
  assert.deepEqual(decodeCbor(encodeCbor({ a: undefined, b: 1 })), { b: 1 });
});

test("decodes indefinite lengths, byte strings (as base64) and sequences", () => {
  assert.deepEqual(decodeCbor(bytes("bf 6161 01 6162 9f 02 03 ff ff")), { a: 1, b: [2, 3] });
  assert.equal(decodeCbor(bytes("7f 6161 6162 ff")), "ab");
  assert.equal(decodeCbor(bytes("43 010203")), "AQID");
  assert.deepEqual(decodeCborSequence(Buffer.concat([encodeCbor({ type: "ADDED" }), encodeCbor(1)])), [{ type: "ADDED" }, 1]);
});

test("rejects what upstream's strict decoder rejects", () => {
  const bad: Array<[string, RegExp]> = [
    ["a2 6161 01 6161 02", /duplicate map key "a"/],
    ["a1 01 01", /map keys must be text strings/],
    ["c1 00", /unsupported tag 1/],
    ["f97c00", /infinity/],
    ["62 c328", /invalid UTF-8/],
    ["82 01", /longer than the data/],
    ["a1 6161", /unexpected end/],
    ["01 02", /extraneous/],
    ["9b 00ffffffffffffff", /2\^53|longer than the data/],
    ["", /empty/],
  ];
  for (const [h, re] of bad) assert.throws(() => decodeCbor(bytes(h)), (e: unknown) => e instanceof CborError && re.test(e.message), h);
  assert.throws(() => decodeCbor(Buffer.from("81".repeat(2000) + "00", "hex")), /nesting/);
  assert.throws(() => encodeCbor({ x: NaN }), /NaN/);
});
