// Long loops over listed items, in slices. A list read from the backend is
// opened (inflated, decrypted) and decoded on the API server's one thread: at
// 30,000 pods a list of one namespace took 4 s of that work and 2 s of garbage
// collection in one turn, and leader-election renewals waiting on the same
// thread missed their deadline (bench/density on etcd, docs/benchmarks.md).
// Between slices the event loop runs, so other requests and timers go on.

import { setImmediate as nextTurn } from "node:timers/promises";

/** How long one slice may run before the loop yields (ms). */
export const SLICE_MS = 10;

/** Calls `fn` on every item in order, letting the event loop run whenever a slice has taken `sliceMs`. */
export async function forEachInSlices<A>(items: readonly A[], fn: (item: A) => void, sliceMs = SLICE_MS): Promise<void> {
  let sliceStart = performance.now();
  for (let i = 0; i < items.length; i++) {
    fn(items[i]!);
    // The clock is read every 32 items: a pod takes ~100 µs, so a slice overruns by a few ms at most.
    if ((i & 31) === 31 && performance.now() - sliceStart >= sliceMs) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
}
