import { test } from "node:test";
import assert from "node:assert/strict";
import { ApiError, buildStatus } from "../machinery/index.js";
import { WriteQueue, retriable } from "./write-queue.js";

const tick = () => new Promise((r) => setTimeout(r, 1));

test("write queue: never more than `concurrency` writes in flight, started in the order pushed", async () => {
  const q = new WriteQueue({ concurrency: 3 });
  const order: string[] = [];
  let inFlight = 0;
  let most = 0;
  const write = (name: string) => async () => {
    inFlight++;
    most = Math.max(most, inFlight);
    await tick();
    order.push(name);
    inFlight--;
  };
  const started: string[] = [];
  for (let i = 0; i < 10; i++) q.push(`pod ${i}`, () => (started.push(`pod-${i}`), write(`pod-${i}`)()));
  assert.equal(q.inFlight, 3);
  assert.equal(q.pending, 7);
  await q.idle();
  assert.equal(most, 3);
  assert.equal(q.maxInFlight, 3);
  assert.equal(q.stats.done, 10);
  assert.deepEqual(started, Array.from({ length: 10 }, (_, i) => `pod-${i}`));
  assert.equal(order.length, 10);
});

test("write queue: 429 and 5xx are retried with backoff; 4xx and exhausted retries are failures, logged", async () => {
  const logged: string[] = [];
  const q = new WriteQueue({ concurrency: 2, initialBackoffMs: 1, maxAttempts: 3, log: (l) => logged.push(l) });
  let busy = 0;
  q.push("busy then fine", async () => {
    if (busy++ < 2) throw new ApiError(buildStatus({ code: 429, reason: "TooManyRequests", message: "too many requests" }));
  });
  q.push("invalid", async () => {
    throw new ApiError(buildStatus({ code: 422, reason: "Invalid", message: "bad pod" }));
  });
  let down = 0;
  q.push("always down", async () => {
    down++;
    throw new ApiError(buildStatus({ code: 503, reason: "ServiceUnavailable", message: "unavailable" }));
  });
  await q.idle();
  assert.equal(busy, 3, "two 429s then success");
  assert.equal(down, 3, "given up after maxAttempts");
  assert.deepEqual(q.stats, { done: 1, failed: 2, retried: 4 });
  assert.ok(logged.some((l) => l.startsWith("invalid: ")));
  assert.ok(logged.some((l) => l.startsWith("always down: ")));
  assert.equal(retriable(new Error("socket hang up")), true);
});

test("write queue: close drops queued writes and settles idle()", async () => {
  const q = new WriteQueue({ concurrency: 1 });
  let ran = 0;
  let release!: () => void;
  q.push("first", () => new Promise<void>((r) => ((release = r), ran++)));
  q.push("second", async () => void ran++);
  const idle = q.idle();
  q.close();
  release();
  await idle;
  assert.equal(ran, 1);
  assert.throws(() => new WriteQueue({ concurrency: 0 }), /positive integer/);
});
