// Slow-start batches: sizes 1, 2, 4, …; the first failing batch ends it; once the
// controller's run ends (a lost lease), no further batch starts.

import { test } from "node:test";
import assert from "node:assert/strict";
import { slowStartBatch } from "./slow-start.js";

test("batches double; a batch with a failure is the last", async () => {
  // A batch's calls all start before any of them resumes: the first to resume records how many started.
  const sizes: number[] = [];
  let started = 0;
  const all = await slowStartBatch(10, async () => {
    started++;
    await Promise.resolve();
    if (started > 0) {
      sizes.push(started);
      started = 0;
    }
  });
  assert.deepEqual(all, { succeeded: 10 });
  assert.deepEqual(sizes, [1, 2, 4, 3]);
  let calls = 0;
  const failing = await slowStartBatch(10, async (i) => {
    calls++;
    if (i === 2) throw new Error("quota");
  });
  assert.equal(calls, 3, "batches of 1 and 2, then stop");
  assert.equal(failing.succeeded, 2);
  assert.equal((failing.error as Error).message, "quota");
});

test("once the signal fires, no further batch starts; the batch under way finishes", async () => {
  const run = new AbortController();
  const made: number[] = [];
  const out = await slowStartBatch(100, async (i) => {
    made.push(i);
    if (i === 2) run.abort(); // the lease is lost during the second batch
  }, { signal: run.signal });
  assert.deepEqual(made, [0, 1, 2], "the first batch and the whole second one, nothing after");
  assert.deepEqual(out, { succeeded: 3, stopped: true });
  const none = await slowStartBatch(5, async () => assert.fail("called after the run ended"), { signal: run.signal });
  assert.deepEqual(none, { succeeded: 0, stopped: true });
});
