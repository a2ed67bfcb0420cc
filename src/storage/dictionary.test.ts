// A compressed value on etcd names its dictionary by number: the text behind
// a number must never change, or every value compressed with it stops reading.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { VALUE_DICTIONARIES } from "./dictionary.js";

const PINNED = new Map([[1, "945f986e0aeff63c0513238cebee7d02a42d50aa863b51d15b224524920107f7"]]);

test("each numbered dictionary keeps its text (a new text takes the next number)", () => {
  for (const [number, sha256] of PINNED) {
    const dictionary = VALUE_DICTIONARIES.get(number);
    assert.ok(dictionary !== undefined, `dictionary ${number} is gone: values compressed with it would not read`);
    assert.equal(createHash("sha256").update(dictionary).digest("hex"), sha256, `dictionary ${number}'s text changed: give the new text the next number and keep this one`);
  }
  assert.deepEqual([...VALUE_DICTIONARIES.keys()], [...PINNED.keys()], "a new dictionary is pinned here too");
  // deflate reaches back 32 KiB: a longer dictionary's start would never be used.
  for (const [number, dictionary] of VALUE_DICTIONARIES) assert.ok(dictionary.length <= 32 * 1024, `dictionary ${number} is ${dictionary.length} bytes`);
});
