import { test } from "node:test";
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { PassThrough } from "node:stream";
import { sleep, untilOr, writeOrWait } from "./until.js";

test("untilOr: resolves on the callback or the signal, and leaves no listener on the signal", async () => {
  const abort = new AbortController();
  for (let i = 0; i < 50; i++) await untilOr(abort.signal, (done) => setImmediate(done));
  assert.equal(getEventListeners(abort.signal, "abort").length, 0);
  const waiting = untilOr(abort.signal, () => {});
  abort.abort();
  await waiting;
  await untilOr(abort.signal, () => assert.fail("not started once aborted"));
});

test("writeOrWait: waits for drain when the sink pushes back, or for the signal", async () => {
  const sink = new PassThrough({ highWaterMark: 4 });
  let drained = false;
  const wrote = writeOrWait(sink, Buffer.from("more than four bytes")).then(() => (drained = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(drained, false, "waits while the buffer is full");
  sink.read();
  await wrote;
  const abort = new AbortController();
  const full = new PassThrough({ highWaterMark: 1 });
  const stuck = writeOrWait(full, Buffer.from("xx"), abort.signal);
  abort.abort();
  await stuck;
});

test("sleep: resolves after the time, or at once on the signal, leaving no listener or timer behind", async () => {
  const abort = new AbortController();
  const started = Date.now();
  await sleep(20, abort.signal);
  assert.ok(Date.now() - started >= 15, "waited");
  assert.equal(getEventListeners(abort.signal, "abort").length, 0);
  const long = sleep(60_000, abort.signal);
  abort.abort();
  await long; // would hold the test for a minute if the signal did not end it
  await sleep(60_000, abort.signal); // already aborted: at once
  await sleep(1); // no signal
});
