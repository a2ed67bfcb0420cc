import { test } from "node:test";
import assert from "node:assert/strict";
import { ownBytes, sameBytes } from "./bytes.js";

test("ownBytes: a view of a much larger buffer (a network frame, Node's pool slab) becomes a copy with a buffer of its own", () => {
  const frame = Buffer.alloc(64 * 1024, 7);
  frame.write("value", 100);
  const view = frame.subarray(100, 105);
  const owned = ownBytes(view);
  assert.notEqual(owned.buffer, frame.buffer);
  assert.equal(owned.buffer.byteLength, 5);
  assert.equal(Buffer.from(owned).toString(), "value");
  frame.write("XXXXX", 100); // the copy does not follow later writes to the frame
  assert.equal(Buffer.from(owned).toString(), "value");

  const pooled = Buffer.from("a small value");
  assert.equal(pooled.buffer.byteLength, Buffer.poolSize, "the fixture is a view of the pool's slab");
  const ownedPooled = ownBytes(pooled);
  assert.equal(ownedPooled.buffer.byteLength, pooled.length, "not a view of another slab of the pool");
  assert.ok(sameBytes(ownedPooled, pooled));
});

test("ownBytes: a buffer that is all or most of its own memory is returned as it is", () => {
  const whole = Buffer.allocUnsafeSlow(100);
  assert.equal(ownBytes(whole), whole);
  const most = Buffer.allocUnsafeSlow(100).subarray(0, 60);
  assert.equal(ownBytes(most), most);
  const plain = new Uint8Array(10);
  assert.equal(ownBytes(plain), plain);
});
