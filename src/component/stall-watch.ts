// Logs when the process's event loop was blocked for long: one turn of
// JavaScript (a large response serialized at once, a long synchronous
// loop) or a garbage collection pause holds up every timer and socket, and a
// leader's lease renewals with them. Renewals failing for both of `orch
// server`'s leases at the same moment (bench/density at 30,000 pods) pointed
// at such stalls, with nothing in the log to say how long or why; this line
// says how long, and how much of it the garbage collector took (the first
// one logged there: 10.7 s, 2.3 s of it the collector).

import { PerformanceObserver } from "node:perf_hooks";

export interface StallWatchOptions {
  readonly log: (line: string) => void;
  /** A stall at least this long is logged (ms; default 2,000). */
  readonly thresholdMs?: number;
  /** How often the watch looks (ms; default 250): a stall shows as that tick being late. */
  readonly intervalMs?: number;
  readonly signal?: AbortSignal;
}

/** One watch per process: components in one process (`orch server`) share it. */
let running = false;

/** Starts the watch unless one runs already; it stops with the signal. Keeps no process alive. */
export function watchStalls(options: StallWatchOptions): void {
  if (running || options.signal?.aborted) return;
  running = true;
  const threshold = options.thresholdMs ?? 2000;
  const interval = options.intervalMs ?? 250;
  /** Garbage collection pauses, by end time, kept for a minute (a stall's window is what matters). */
  const pauses: { end: number; ms: number }[] = [];
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push({ end: e.startTime + e.duration, ms: e.duration });
  });
  gc.observe({ entryTypes: ["gc"] });
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const stalled = now - last - interval;
    if (stalled >= threshold) {
      const from = last;
      // The collector's entries of the stall are delivered after this tick: count them a little later.
      setTimeout(() => {
        const gcMs = pauses.filter((p) => p.end >= from && p.end <= now).reduce((sum, p) => sum + p.ms, 0);
        const heap = Math.round(process.memoryUsage().heapUsed / 2 ** 20);
        options.log(`the event loop was blocked for ${(stalled / 1000).toFixed(1)} s (garbage collection ${(gcMs / 1000).toFixed(1)} s of it; heap ${heap} MiB)`);
      }, 50).unref();
    }
    last = now;
    // Only the window a stall could cover is kept.
    while (pauses.length > 0 && pauses[0]!.end < now - 60_000) pauses.shift();
  }, interval);
  timer.unref();
  options.signal?.addEventListener("abort", () => {
    clearInterval(timer);
    gc.disconnect();
    running = false;
  }, { once: true });
}
