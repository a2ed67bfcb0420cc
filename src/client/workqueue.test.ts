// Work queue semantics: dedup while queued, never two workers on one key,
// re-queue of a key added while processed, delays, per-key backoff, shutdown.

import { test } from "node:test";
import assert from "node:assert/strict";
import { WorkQueue } from "./workqueue.js";

test("a key is queued once however often it is added, in first-added order", async () => {
  const q = new WorkQueue();
  for (const k of ["a", "b", "a", "c", "b"]) q.add(k);
  assert.equal(q.length, 3);
  assert.deepEqual([await q.get(), await q.get(), await q.get()], ["a", "b", "c"]);
  q.shutDown();
});

test("a key added while processed comes back after done(), not before", async () => {
  const q = new WorkQueue();
  q.add("a");
  const key = await q.get();
  assert.equal(key, "a");
  q.add("a");
  assert.equal(q.length, 0, "not handed to a second worker while the first holds it");
  let second: string | undefined;
  const waiting = q.get().then((k) => (second = k));
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(second, undefined);
  q.done("a");
  await waiting;
  assert.equal(second, "a");
  q.done("a");
  q.shutDown();
});

test("addAfter: delays, the earliest deadline wins; addRateLimited backs off exponentially; forget resets", async () => {
  const q = new WorkQueue({ baseDelayMs: 20, maxDelayMs: 80 });
  const started = Date.now();
  q.addAfter("slow", 200);
  q.addAfter("slow", 30);
  assert.equal(await q.get(), "slow");
  const waited = Date.now() - started;
  assert.ok(waited >= 25 && waited < 190, `waited ${waited} ms`);
  q.done("slow");

  const delays: number[] = [];
  for (let i = 0; i < 4; i++) {
    const t0 = Date.now();
    q.addRateLimited("flaky");
    assert.equal(await q.get(), "flaky");
    delays.push(Date.now() - t0);
    q.done("flaky");
  }
  assert.equal(q.numRequeues("flaky"), 4);
  assert.ok(delays[0]! >= 15 && delays[1]! >= 35 && delays[2]! >= 75 && delays[3]! >= 75, `delays ${delays}`);
  assert.ok(delays[3]! < 400, "capped at maxDelayMs");
  q.forget("flaky");
  assert.equal(q.numRequeues("flaky"), 0);
  q.shutDown();
});

test("shutDown: waiting and later get() calls return undefined, adds are ignored, drain waits for work in hand", async () => {
  const q = new WorkQueue();
  const waiting = q.get();
  q.add("x");
  assert.equal(await waiting, "x");
  const idle = q.get();
  const drained = q.shutDownWithDrain();
  assert.equal(await idle, undefined);
  let done = false;
  void drained.then(() => (done = true));
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(done, false, "x is still being processed");
  q.done("x");
  await drained;
  q.add("y");
  assert.equal(await q.get(), undefined);
});
