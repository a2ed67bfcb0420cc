// The controllers' one run loop without a server: waiting for the caches,
// conflict fast-retry against backoff, log lines, metrics, shutdown.

import { test } from "node:test";
import assert from "node:assert/strict";
import { WorkQueue } from "../client/index.js";
import { MetricsRegistry } from "../component/metrics/index.js";
import { conflict } from "../machinery/index.js";
import { CONFLICT_RETRY_MS, runQueue, type RunQueueContext, type Syncable } from "./run-queue.js";
import { metricValue } from "./testing.js";

const synced: Syncable = { waitForSync: async () => true };

function loopContext(extra: Partial<RunQueueContext> = {}): RunQueueContext & { lines: string[]; stop(): void } {
  const abort = new AbortController();
  const lines: string[] = [];
  return { signal: abort.signal, log: (l) => lines.push(l), informers: synced, lines, stop: () => abort.abort(), ...extra };
}

/** Resolves with the value once `resolve` is called, or rejects after `ms`. */
function deadline<T>(ms: number, what: string): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`timed out: ${what}`)), ms);
    resolve = (value) => {
      clearTimeout(timer);
      res(value);
    };
  });
  return { promise, resolve };
}

test("a Conflict is looked at again shortly: not logged, not backed off", async () => {
  const ctx = loopContext();
  // A backoff of a minute: a conflict treated as a failure would not come back within the test.
  const queue = new WorkQueue({ name: "conflicts", baseDelayMs: 60_000 });
  const second = deadline<number>(5_000, "the conflicting key processed again");
  const calls: number[] = [];
  const running = runQueue(ctx, {
    name: "test-controller",
    queue,
    workers: 1,
    process: async (key) => {
      calls.push(Date.now());
      if (calls.length === 1) throw conflict({ group: "apps", resource: "replicasets" }, key);
      second.resolve(calls[1]! - calls[0]!);
    },
  });
  queue.add("default/web");
  const gap = await second.promise;
  assert.ok(gap >= CONFLICT_RETRY_MS - 5, `looked at again after ${gap} ms`);
  assert.equal(queue.numRequeues("default/web"), 0, "the key's backoff did not grow");
  assert.deepEqual(ctx.lines, [], "a conflict is routine, not an error to log");
  ctx.stop();
  await running;
});

test("other errors are logged with the key as described, and retried with backoff", async () => {
  const registry = new MetricsRegistry();
  const ctx = loopContext({ metrics: registry });
  const queue = new WorkQueue({ name: "failing", baseDelayMs: 5 });
  const done = deadline<void>(5_000, "the failing key retried");
  let calls = 0;
  const running = runQueue(ctx, {
    name: "test-controller",
    queue,
    workers: 2,
    describe: (key) => `widget ${key}`,
    process: async () => {
      if (++calls === 1) throw new Error("boom");
      done.resolve();
    },
  });
  queue.add("a");
  await done.promise;
  assert.deepEqual(ctx.lines, ["test-controller: widget a: boom (will retry)"]);
  assert.equal(metricValue(registry, "workqueue_retries_total", { name: "failing" }), 1);
  assert.equal(metricValue(registry, "workqueue_adds_total", { name: "failing" }), 2);
  ctx.stop();
  await running;
  assert.equal(queue.shuttingDown, true, "the loop shuts its queue down when the signal fires");
});

test("the workers start once every cache named has synced; a signal first ends the loop unprocessed", async () => {
  let release!: (synced: boolean) => void;
  const slow: Syncable = { waitForSync: () => new Promise((resolve) => (release = resolve)) };
  const ctx = loopContext();
  const queue = new WorkQueue({ name: "waiting" });
  const seen: string[] = [];
  const running = runQueue(ctx, { name: "test-controller", queue, workers: 1, informers: [synced, slow], process: async (key) => void seen.push(key) });
  queue.add("early");
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(seen, [], "nothing is processed from unsynced caches");
  release(true);
  const processed = deadline<void>(5_000, "the key processed after the sync");
  const poll = setInterval(() => seen.length > 0 && processed.resolve(), 5);
  await processed.promise.finally(() => clearInterval(poll));
  assert.deepEqual(seen, ["early"]);
  ctx.stop();
  await running;

  const never: Syncable = { waitForSync: async () => false }; // what an informer answers when the signal fired first
  const other = loopContext();
  const idle = new WorkQueue({ name: "never" });
  await runQueue(other, { name: "test-controller", queue: idle, workers: 1, informers: [never], process: async () => assert.fail("not processed") });
  assert.equal(idle.shuttingDown, true);
});

test("parallel workers, no key processed twice at once, backoff on a throw or on request, requeueAfter", async () => {
  const ctx = loopContext();
  const q = new WorkQueue({ name: "parallel", baseDelayMs: 1 });
  const active = new Set<string>();
  let overlap = false;
  const counts = new Map<string, number>();
  const run = runQueue(ctx, {
    name: "test-controller",
    queue: q,
    workers: 3,
    async process(key) {
      if (active.has(key)) overlap = true;
      active.add(key);
      await new Promise((r) => setTimeout(r, 5));
      active.delete(key);
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      if (key === "fails-twice" && n <= 2) throw new Error("not yet");
      if (key === "again" && n === 1) return { requeueAfterMs: 10 };
      if (key === "waits" && n <= 2) return { requeueWithBackoff: true };
      return undefined;
    },
  });
  for (const k of ["a", "b", "c", "fails-twice", "again", "waits"]) q.add(k);
  q.add("a");
  q.add("a");
  const deadline = Date.now() + 5000;
  while ((counts.get("fails-twice") ?? 0) < 3 || (counts.get("again") ?? 0) < 2 || (counts.get("waits") ?? 0) < 3) {
    assert.ok(Date.now() < deadline, `not done: ${JSON.stringify([...counts])}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, 20));
  ctx.stop();
  await run;
  assert.equal(overlap, false);
  assert.equal(counts.get("fails-twice"), 3);
  assert.equal(counts.get("again"), 2);
  assert.equal(counts.get("waits"), 3, "requeueWithBackoff comes back without an error");
  assert.deepEqual(ctx.lines, ["test-controller: fails-twice: not yet (will retry)", "test-controller: fails-twice: not yet (will retry)"]);
  assert.ok(counts.get("a")! <= 2);
  assert.equal(q.numRequeues("fails-twice"), 0, "forgotten after success");
});
