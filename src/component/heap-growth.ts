// How far a thread's heap may grow past its live objects before V8 collects
// it in full. V8's own rule adapts the factor to the collector's speed and
// let the API server's and the control loops' heaps reach two to four times
// what they held live at 30,000 pods (docs/benchmarks.md, session 28). A
// fixed percentage, like Go's GOGC that upstream's components run with
// (100 by default: the heap may double), trades some collector CPU for a
// memory that follows the live set. Process-wide: it holds for every thread,
// including the control loops' thread started after it is set.

import { setFlagsFromString } from "node:v8";

/** Sets the heap growth of every heap of this process (0: V8's adaptive rule). Call before starting threads. */
export function setHeapGrowth(percent: number): void {
  if (!Number.isInteger(percent) || percent < 0) throw new RangeError(`heap growth must be a whole percentage ≥ 0, got ${percent}`);
  // V8 reads the flag whenever it sets a heap's next limit: setting it at run time takes effect from the next full collection.
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}
