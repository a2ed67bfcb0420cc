import { test } from "node:test";
import assert from "node:assert/strict";
import { EventBuffer } from "./event-buffer.js";

test("EventBuffer: first in, first out, across the trims of a long drain", () => {
  const buffer = new EventBuffer<number>();
  const taken: number[] = [];
  for (let i = 0; i < 5000; i++) {
    buffer.push(i);
    if (i % 3 === 0) taken.push(buffer.take()!);
  }
  assert.equal(buffer.size, 5000 - taken.length);
  for (let v = buffer.take(); v !== undefined; v = buffer.take()) taken.push(v);
  assert.deepEqual(taken, Array.from({ length: 5000 }, (_, i) => i));
  assert.equal(buffer.size, 0);
  assert.equal(buffer.take(), undefined);
});

test("EventBuffer: clear drops what waits; next resolves on a push or a wake", async () => {
  const buffer = new EventBuffer<string>();
  buffer.push("a");
  buffer.clear();
  assert.equal(buffer.size, 0);
  const pushed = buffer.next();
  buffer.push("b");
  await pushed;
  assert.equal(buffer.take(), "b");
  const woken = buffer.next();
  buffer.wake();
  await woken;
  assert.equal(buffer.take(), undefined);
});
