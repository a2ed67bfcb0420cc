// The watch caches' memory budget (issue 18, point 2): every cacher of a
// process draws its event window from one budget of bytes. Above it, the
// oldest event of all the windows goes first, whichever cacher holds it; a
// watch that asks for history shed this way is answered 410 Expired (seed 000:
// too old a version is 410) instead of being replayed from the backend, which
// would load the same bytes again. docs/reliability.md, "Watch cache".

import { getHeapStatistics } from "node:v8";

/** What a window needs from the budget: the age of its oldest event, and dropping it. */
export interface BudgetedWindow {
  /** When the oldest event still held was added (ms), or undefined when none is. */
  oldestAt(): number | undefined;
  /** Drop the oldest event; returns the bytes it was charged. */
  shedOldest(): number;
}

/** The share of V8's heap limit the windows may hold by default. */
export const DEFAULT_BUDGET_FRACTION = 0.25;

export function defaultBudgetBytes(): number {
  return Math.floor(getHeapStatistics().heap_size_limit * DEFAULT_BUDGET_FRACTION);
}

/**
 * An event's cost: its stored bytes three times over (the bytes as stored, the
 * decoded object, and one serialized copy memoized for responses), plus a
 * fixed overhead for the records themselves.
 */
export function eventCost(storedBytes: number): number {
  return 3 * storedBytes + 512;
}

export class WindowBudget {
  readonly limit: number;
  #used = 0;
  #peak = 0;
  #shed = 0;
  readonly #windows = new Set<BudgetedWindow>();

  constructor(limitBytes: number = defaultBudgetBytes()) {
    this.limit = limitBytes;
  }

  get used(): number {
    return this.#used;
  }

  /** The most the windows held at once. */
  get peak(): number {
    return this.#peak;
  }

  /** Events dropped to stay under the budget. */
  get shed(): number {
    return this.#shed;
  }

  register(window: BudgetedWindow): () => void {
    this.#windows.add(window);
    return () => this.#windows.delete(window);
  }

  /** A window took `bytes` more: shed the oldest events (of any window) until back under the limit. */
  charge(bytes: number): void {
    this.#used += bytes;
    while (this.#used > this.limit) {
      let oldest: BudgetedWindow | undefined;
      let at = Infinity;
      for (const w of this.#windows) {
        const t = w.oldestAt();
        if (t !== undefined && t < at) {
          at = t;
          oldest = w;
        }
      }
      if (oldest === undefined) break;
      this.#used -= oldest.shedOldest();
      this.#shed++;
    }
    if (this.#used > this.#peak) this.#peak = this.#used;
  }

  /** A window dropped events on its own (time, count, reload). */
  release(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
  }
}
