// Time as a dependency: the agent's loops sleep and read the time through a
// Clock, so tests can drive back-off and renew periods with a fake one.

import { sleep } from "../../machinery/until.js";

export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without error) when the signal fires. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: Clock = { now: () => Date.now(), sleep };

/** A clock that moves only when told; records every sleep it was asked for. */
export class FakeClock implements Clock {
  #now: number;
  #sleepers: { until: number; resolve: () => void }[] = [];
  readonly sleeps: number[] = [];
  #onSleep: (() => void)[] = [];

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    return new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const sleeper = { until: this.#now + ms, resolve };
      this.#sleepers.push(sleeper);
      signal?.addEventListener("abort", () => resolve(), { once: true });
      for (const wake of this.#onSleep.splice(0)) wake();
    });
  }

  /** Resolves once some code is sleeping on this clock. */
  async waitForSleeper(): Promise<void> {
    while (this.#sleepers.length === 0) await new Promise<void>((r) => this.#onSleep.push(r));
  }

  /** Moves time forward and wakes the sleepers whose time has come. */
  advance(ms: number): void {
    this.#now += ms;
    const due = this.#sleepers.filter((s) => s.until <= this.#now);
    this.#sleepers = this.#sleepers.filter((s) => s.until > this.#now);
    for (const s of due) s.resolve();
  }
}
