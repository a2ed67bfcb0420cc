// A door to the API server for the simulator's writes: a bounded number in
// flight (so N nodes do not open N×M requests at once), first come first
// written, and retries with doubling backoff for what the server may answer
// differently later (429, 5xx, a dropped connection). The simulator keeps two:
// one for its nodes' heartbeats and one for its pods' writes (see simulator.ts).

import { isApiError } from "../machinery/index.js";

interface Task {
  readonly run: () => Promise<unknown>;
  readonly what: string;
  attempt: number;
}

export interface WriteQueueOptions {
  /** Writes in flight at most (default 32). */
  readonly concurrency?: number;
  /** Attempts of one write before it is given up (default 6). */
  readonly maxAttempts?: number;
  /** First retry delay (default 200 ms), doubling up to 5 s. */
  readonly initialBackoffMs?: number;
  readonly log?: (line: string) => void;
}

export interface WriteQueueStats {
  done: number;
  failed: number;
  retried: number;
}

const RETRIABLE = new Set([429, 500, 502, 503, 504]);

/** Whether a failed write may succeed if tried again: a server that is busy or briefly away. */
export function retriable(err: unknown): boolean {
  if (isApiError(err)) return RETRIABLE.has(err.code);
  return err instanceof Error; // a connection reset, a timeout: the request may not have arrived
}

export class WriteQueue {
  readonly #queued: Task[] = [];
  readonly #concurrency: number;
  readonly #maxAttempts: number;
  readonly #initialBackoffMs: number;
  readonly #log: ((line: string) => void) | undefined;
  readonly #idleWaiters: (() => void)[] = [];
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  #inFlight = 0;
  #maxInFlight = 0;
  #closed = false;
  readonly stats: WriteQueueStats = { done: 0, failed: 0, retried: 0 };

  constructor(options: WriteQueueOptions = {}) {
    this.#concurrency = options.concurrency ?? 32;
    if (!Number.isInteger(this.#concurrency) || this.#concurrency < 1) throw new Error(`write concurrency must be a positive integer (got ${this.#concurrency})`);
    this.#maxAttempts = options.maxAttempts ?? 6;
    this.#initialBackoffMs = options.initialBackoffMs ?? 200;
    this.#log = options.log;
  }

  /** Writes queued, not yet started (retries waiting on their backoff not counted). */
  get pending(): number {
    return this.#queued.length;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** The most writes ever in flight at once (never above the concurrency). */
  get maxInFlight(): number {
    return this.#maxInFlight;
  }

  /** Queues `run`; errors it throws are retried when retriable, else logged and counted as failed. */
  push(what: string, run: () => Promise<unknown>): void {
    if (this.#closed) return;
    this.#queued.push({ run, what, attempt: 0 });
    this.#pump();
  }

  /** Resolves once nothing is queued, waiting or in flight. */
  idle(): Promise<void> {
    if (this.#quiet()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Drops what is queued and waiting; writes in flight finish. */
  close(): void {
    this.#closed = true;
    this.#queued.length = 0;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.#settle();
  }

  #quiet(): boolean {
    return this.pending === 0 && this.#inFlight === 0 && this.#timers.size === 0;
  }

  #pump(): void {
    while (this.#inFlight < this.#concurrency && !this.#closed) {
      const task = this.#queued.shift();
      if (task === undefined) break;
      this.#inFlight++;
      this.#maxInFlight = Math.max(this.#maxInFlight, this.#inFlight);
      void this.#execute(task);
    }
    this.#settle();
  }

  async #execute(task: Task): Promise<void> {
    try {
      await task.run();
      this.stats.done++;
    } catch (err) {
      task.attempt++;
      if (!this.#closed && retriable(err) && task.attempt < this.#maxAttempts) {
        this.stats.retried++;
        const delay = Math.min(5_000, this.#initialBackoffMs * 2 ** (task.attempt - 1));
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          if (this.#closed) return this.#settle();
          this.#queued.unshift(task); // it has waited already: first in line
          this.#pump();
        }, delay);
        this.#timers.add(timer);
      } else {
        this.stats.failed++;
        this.#log?.(`${task.what}: ${err instanceof Error ? err.message : String(err)}`);
      }
    } finally {
      this.#inFlight--;
      this.#pump();
    }
  }

  #settle(): void {
    if (!this.#quiet() && !this.#closed) return;
    if (this.#closed && this.#inFlight > 0) return;
    for (const w of this.#idleWaiters.splice(0)) w();
  }
}
