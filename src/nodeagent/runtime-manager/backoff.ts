// Crash-loop back-off (upstream's flowcontrol.Backoff as the agent uses it):
// the first restart is immediate, later ones wait 10 s, doubling to 5 min,
// counted from when the container last finished; an entry idle for twice the
// maximum is forgotten, so a container that ran well starts over at 10 s.

import { realClock, type Clock } from "../clock/clock.js";

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  clock?: Clock;
}

export class Backoff {
  readonly #initial: number;
  readonly #max: number;
  readonly #clock: Clock;
  readonly #entries = new Map<string, { delayMs: number; lastUpdate: number }>();

  constructor(options: BackoffOptions = {}) {
    this.#initial = options.initialMs ?? 10_000;
    this.#max = options.maxMs ?? 300_000;
    this.#clock = options.clock ?? realClock;
  }

  /** How long `key` must still wait after finishing at `sinceMs` (0: it may restart now). */
  remaining(key: string, sinceMs: number): number {
    const e = this.#entries.get(key);
    if (e === undefined) return 0;
    const now = this.#clock.now();
    if (now - e.lastUpdate > 2 * this.#max) {
      this.#entries.delete(key);
      return 0;
    }
    return Math.max(0, sinceMs + e.delayMs - now);
  }

  /** The current delay of `key` (for the CrashLoopBackOff message). */
  delay(key: string): number {
    return this.#entries.get(key)?.delayMs ?? 0;
  }

  /** Records a restart: the next one waits longer. */
  next(key: string): void {
    const e = this.#entries.get(key);
    const now = this.#clock.now();
    if (e === undefined || now - e.lastUpdate > 2 * this.#max) this.#entries.set(key, { delayMs: this.#initial, lastUpdate: now });
    else this.#entries.set(key, { delayMs: Math.min(e.delayMs * 2, this.#max), lastUpdate: now });
  }

  forgetPrefix(prefix: string): void {
    for (const key of this.#entries.keys()) if (key.startsWith(prefix)) this.#entries.delete(key);
  }
}
