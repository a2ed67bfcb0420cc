// A rate-limited work queue of string keys, as controllers use it: a key is
// queued once however often it is added, is never handed to two workers at
// once (an add while it is processed re-queues it after done()), and failing
// keys come back later with per-key exponential backoff.

import type { MetricsRegistry } from "../component/metrics/index.js";
import { WorkQueueMetrics } from "./metrics.js";

export interface WorkQueueOptions {
  /** For log lines. */
  name?: string;
  /** First retry delay of addRateLimited (default 5 ms, as upstream). */
  baseDelayMs?: number;
  /** Longest retry delay (default 1000 s, as upstream). */
  maxDelayMs?: number;
  /** The component's registry: the queue reports the workqueue_* family under its name. */
  metrics?: MetricsRegistry;
}

export class WorkQueue {
  readonly name: string;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  /** Keys waiting, in order; each at most once. */
  #queue: string[] = [];
  /** Keys that need processing (queued, or added again while processing). */
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #failures = new Map<string, number>();
  /** Delayed adds: the earliest pending deadline per key. */
  readonly #timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  #waiters: ((key: string | undefined) => void)[] = [];
  #idle: (() => void)[] = [];
  #shuttingDown = false;
  #metrics: WorkQueueMetrics | undefined;

  constructor(options: WorkQueueOptions = {}) {
    this.name = options.name ?? "queue";
    this.#baseDelayMs = options.baseDelayMs ?? 5;
    this.#maxDelayMs = options.maxDelayMs ?? 1_000_000;
    if (options.metrics !== undefined) this.instrument(options.metrics);
  }

  /**
   * Reports the workqueue_* metrics into `registry` from now on (for queues
   * made before the registry was known). Keys already waiting count as added
   * now, so the depth stays right when they are taken.
   */
  instrument(registry: MetricsRegistry | undefined): void {
    if (registry === undefined || this.#metrics !== undefined) return;
    this.#metrics = new WorkQueueMetrics(registry, this.name);
    for (const key of this.#queue) this.#metrics.added(key);
  }

  get length(): number {
    return this.#queue.length;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (this.#processing.has(key)) return; // done() queues it again
    this.#metrics?.added(key);
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      this.#take(key);
      waiter(key);
    } else {
      this.#queue.push(key);
    }
  }

  /** Adds the key after `delayMs`; of several pending delays for one key the earliest wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const at = Date.now() + delayMs;
    const pending = this.#timers.get(key);
    if (pending !== undefined) {
      if (pending.at <= at) return;
      clearTimeout(pending.timer);
    }
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, delayMs);
    // Not unref'd: a pending retry is work to do. shutDown() clears the timers.
    this.#timers.set(key, { at, timer });
  }

  /** Adds the key after its backoff: base × 2^failures, capped. */
  addRateLimited(key: string): void {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    this.#metrics?.retried();
    this.addAfter(key, Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** Math.min(failures, 40)));
  }

  /** The key succeeded: its next failure starts the backoff over. */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** The next key to process; undefined once the queue is shut down. Call done(key) after processing. */
  get(): Promise<string | undefined> {
    if (this.#shuttingDown) return Promise.resolve(undefined);
    const key = this.#queue.shift();
    if (key !== undefined) {
      this.#take(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  done(key: string): void {
    this.#metrics?.done(key);
    this.#processing.delete(key);
    if (this.#dirty.has(key) && !this.#shuttingDown) {
      this.#dirty.delete(key);
      this.add(key);
    }
    if (this.#processing.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** Stops handing out keys (waiting get() calls resolve undefined) and drops pending delays. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#queue = [];
    this.#metrics?.drained();
    this.#metrics?.close();
    for (const waiter of this.#waiters.splice(0)) waiter(undefined);
  }

  /** shutDown(), then wait until the keys being processed are done. */
  async shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.#processing.size > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  #take(key: string): void {
    this.#metrics?.taken(key);
    this.#dirty.delete(key);
    this.#processing.add(key);
  }
}

/**
 * What a handler may ask for besides the default (forget on success, backoff
 * on a throw). The loop that runs handlers over a queue is
 * controllers/run-queue.ts.
 */
export interface ProcessResult {
  /** Look at the key again after this long (waiting on something that has no event). */
  requeueAfterMs?: number;
  /** Not done yet, but nothing failed: look again after the key's backoff (no error is reported). */
  requeueWithBackoff?: boolean;
}
