// Periodic compaction (--compaction-interval, default 5m: seed 000 "Watch
// behavior" 2 keeps 5 minutes of history). Each tick compacts to the revision
// seen at the previous tick, so at least one full interval of history stays
// readable and watchable.

import type { Storage } from "./storage.js";

export interface CompactorOptions {
  intervalMs: number;
  log?: (message: string) => void;
  /** Told after each successful compaction (watch caches drop their snapshots older than it). */
  onCompacted?: (revision: number) => void;
}

export interface Compactor {
  stop(): void;
  /** Run one tick now (tests, shutdown). */
  tick(): Promise<void>;
}

export function startCompactor(store: Storage, options: CompactorOptions): Compactor {
  let previous = 0;
  let running: Promise<void> | undefined;
  const tick = async () => {
    if (running !== undefined) return running;
    running = (async () => {
      try {
        const current = await store.currentRevision();
        if (previous > 0) {
          await store.compact(previous);
          options.onCompacted?.(previous);
        }
        previous = current;
      } catch (err) {
        // A failed tick is retried at the next one; another replica may have compacted further already.
        options.log?.(`compaction failed: ${(err as Error).message}`);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  const timer = options.intervalMs > 0 ? setInterval(() => void tick(), options.intervalMs) : undefined;
  timer?.unref();
  return {
    stop: () => clearInterval(timer),
    tick,
  };
}
