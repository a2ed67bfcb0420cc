// Long lists are opened in slices: the event loop runs between them (slices.ts).

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LmdbStorage } from "./lmdb/index.js";
import { forEachInSlices } from "./slices.js";
import { TransformedStorage } from "./transformed-storage.js";

/** Keeps the thread busy for `ms`: the work of opening one value, made slow on purpose. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/**
 * How many turns the event loop took while `work` ran (a chain of setImmediate
 * ticks). Counted rather than timed: a loaded machine stretches the gaps, but a
 * loop that never yields gets no turn however fast it runs.
 */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  running = false;
  return turns;
}

test("forEachInSlices: every item in order, and the event loop turns while a long loop runs", async () => {
  const seen: number[] = [];
  const items = Array.from({ length: 400 }, (_, i) => i);
  const turns = await turnsDuring(() => forEachInSlices(items, (i) => { busy(0.25); seen.push(i); }, 10));
  assert.deepEqual(seen, items);
  assert.ok(turns >= 5, `the loop (100 ms of work in slices of 10 ms) let the event loop turn ${turns} times`);
});

test("a list through a stored form opens its values in slices: 200 ms of opening does not hold the thread at once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-slices-"));
  const inner = await LmdbStorage.open({ dataDir: dir });
  try {
    for (let i = 0; i < 800; i++) await inner.create(`/pods/p${String(i).padStart(4, "0")}`, Buffer.from(`sealed ${i}`));
    const store = new TransformedStorage(inner, () => ({
      seal: (plain) => plain,
      open: (stored) => { busy(0.25); return { value: Buffer.from(Buffer.from(stored).toString().replace("sealed", "plain")), stale: false }; },
    }));
    let listed: Awaited<ReturnType<typeof store.list>> | undefined;
    const turns = await turnsDuring(async () => (listed = await store.list("/pods/")));
    assert.equal(listed!.items.length, 800);
    assert.equal(Buffer.from(listed!.items[7]!.value).toString(), "plain 7", "values opened, in key order");
    // Before slices the opening was one turn: the loop turned only while the backend read (once or twice).
    assert.ok(turns >= 8, `opening 800 values (200 ms) let the event loop turn ${turns} times`);
  } finally {
    await inner.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
