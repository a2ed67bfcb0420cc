import { test } from "node:test";
import assert from "node:assert/strict";
import { cachedRecord } from "../../storage/cacher/cached.js";
import { EncodingMemo } from "./encoding-memo.js";

const record = (name: string, revision = 5) => cachedRecord({ key: `/widgets/${name}`, object: { name }, revision });
const bytes = (n: number, fill = 1) => new Uint8Array(n).fill(fill);

test("encoding memo: holds at most its limit in bytes, letting the oldest memos go first", () => {
  const memo = new EncodingMemo(1000);
  const records = Array.from({ length: 5 }, (_, i) => record(`w${i}`));
  for (const r of records) memo.set(r, "frame:json", bytes(300));
  assert.equal(memo.bytes, 900, "the oldest two went to make room");
  assert.deepEqual(records.map((r) => memo.get(r, "frame:json") !== undefined), [false, false, true, true, true]);
  assert.deepEqual(records.map((r) => r.encoded.size), [0, 0, 1, 1, 1], "nothing left on the records let go");
  // Thousands more: the bound holds and the queue does not grow without end.
  for (let i = 0; i < 5000; i++) memo.set(record(`x${i}`), "pb:v1", bytes(10));
  assert.ok(memo.bytes <= 1000);
});

test("encoding memo: a newer memo under the same key stays when the older one is let go; objects not stored are not memoized", () => {
  const memo = new EncodingMemo(100);
  const r = record("same");
  memo.set(r, "json:v1", bytes(60, 1));
  const newer = bytes(60, 2);
  memo.set(r, "json:v1", newer); // evicts the first memo, whose bytes are no longer the record's
  assert.equal(memo.get(r, "json:v1"), newer);
  const dryRun = record("dry", 0);
  memo.set(dryRun, "json:v1", bytes(10));
  assert.equal(memo.get(dryRun, "json:v1"), undefined);
  assert.equal(memo.bytes, 60);
});

test("encoding memo: a small Buffer from Node's pool is kept as a copy of its own, not as a view that holds the pool's slab", () => {
  const memo = new EncodingMemo(1 << 20);
  const r = record("pooled");
  const pooled = Buffer.from('{"kind":"Pod"}'); // under 4 KiB: a view of an 8 KiB slab
  assert.ok(pooled.buffer.byteLength > 2 * pooled.length, "the fixture is a pool view");
  memo.set(r, "json:v1", pooled);
  const kept = memo.get(r, "json:v1")!;
  assert.equal(Buffer.from(kept).toString(), '{"kind":"Pod"}');
  assert.equal(kept.buffer.byteLength, pooled.length, "its buffer is exactly its bytes");
  assert.equal(memo.bytes, pooled.length);
});
