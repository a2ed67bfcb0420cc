import assert from "node:assert/strict";
import { test } from "node:test";
import { StartLimit } from "./start-limit.js";

test("StartLimit runs at most `limit` at once, in arrival order, and frees its place on failure", async () => {
  const limit = new StartLimit(2);
  let running = 0;
  let peak = 0;
  const order: number[] = [];
  const gates: (() => void)[] = [];
  const jobs = Array.from({ length: 5 }, (_, i) =>
    limit.run(async () => {
      running++;
      peak = Math.max(peak, running);
      order.push(i);
      await new Promise<void>((r) => gates.push(r));
      running--;
      if (i === 0) throw new Error("boom");
      return i;
    }).catch((err: Error) => err.message),
  );
  while (order.length < 5) {
    await new Promise((r) => setImmediate(r));
    gates.shift()?.();
  }
  gates.forEach((g) => g());
  assert.deepEqual(await Promise.all(jobs), ["boom", 1, 2, 3, 4]);
  assert.equal(peak, 2);
  assert.deepEqual(order, [0, 1, 2, 3, 4]);
});

test("StartLimit: work marked first goes ahead of waiting work that is not", async () => {
  const limit = new StartLimit(1);
  const order: string[] = [];
  let release!: () => void;
  const busy = limit.run(() => new Promise<void>((r) => (release = r)));
  const jobs = [
    limit.run(async () => void order.push("sandbox 2")),
    limit.run(async () => void order.push("sandbox 3")),
    limit.run(async () => void order.push("container 1"), { first: true }),
    limit.run(async () => void order.push("container 0"), { first: true }),
  ];
  release();
  await Promise.all([busy, ...jobs]);
  assert.deepEqual(order, ["container 1", "container 0", "sandbox 2", "sandbox 3"]);
});
