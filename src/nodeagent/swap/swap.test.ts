import { test } from "node:test";
import assert from "node:assert/strict";
import { SwapError, checkSwap, containerSwap, limitedSwapBytes } from "./swap.js";

const GiB = 1024 ** 3;
const base = { behavior: "LimitedSwap" as const, qosClass: "Burstable", memoryRequestBytes: GiB, memoryLimitBytes: 0, nodeMemoryBytes: 8 * GiB, nodeSwapBytes: 4 * GiB, critical: false, cgroupV2: true };

test("swap: swap on with failSwapOn refuses to start with a clear message; off or allowed passes", () => {
  assert.throws(() => checkSwap({ failSwapOn: true, swapTotalBytes: 1024 }), (e: unknown) => e instanceof SwapError && /please disable swap or set failSwapOn to false/.test((e as Error).message));
  checkSwap({ failSwapOn: true, swapTotalBytes: 0 });
  checkSwap({ failSwapOn: false, swapTotalBytes: 1024 });
});

test("swap: LimitedSwap is request / node memory × node swap, Burstable only", () => {
  assert.equal(limitedSwapBytes(base), 512 * 1024 ** 2);
  assert.equal(limitedSwapBytes({ ...base, qosClass: "Guaranteed" }), 0);
  assert.equal(limitedSwapBytes({ ...base, qosClass: "BestEffort", memoryRequestBytes: 0 }), 0);
  assert.equal(limitedSwapBytes({ ...base, critical: true }), 0);
  assert.equal(limitedSwapBytes({ ...base, memoryLimitBytes: GiB }), 0);
});

test("swap: NoSwap gives no swap; the decision reaches the CRI fields", () => {
  assert.deepEqual(containerSwap({ ...base, behavior: "NoSwap", memoryLimitBytes: 2 * GiB }), { memorySwapLimitInBytes: 2 * GiB, unified: { "memory.swap.max": "0" } });
  assert.deepEqual(containerSwap({ ...base, memoryLimitBytes: 2 * GiB, cgroupV2: false }), { memorySwapLimitInBytes: 2 * GiB + 512 * 1024 ** 2, unified: {} });
});
