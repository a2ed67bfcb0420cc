// How the agent stops: every part started registers its undo step, and
// stopping runs them last-first, each bounded so that one hanging step (a
// runtime waiting on calls) cannot keep the agent from ending. The agent may
// also end on its own (another agent asked for the lock file); `done` then
// settles with why, so its process can exit.

export type ShutdownStep = () => Promise<void> | void;

export interface ShutdownOptions {
  log: (line: string) => void;
  /** How long one step may take before stopping goes on without it (default 10 s). */
  stepLimitMs?: number;
}

export class Shutdown {
  readonly #o: ShutdownOptions;
  readonly #stopping = new AbortController();
  readonly #steps: ShutdownStep[] = [];
  #stopped: Promise<void> | undefined;
  #why: string | undefined;

  constructor(options: ShutdownOptions) {
    this.#o = options;
  }

  /** Aborted once the agent stops: the loops it runs end with it. */
  get signal(): AbortSignal {
    return this.#stopping.signal;
  }

  /** Why the agent ended on its own (undefined: it was stopped, or runs). */
  get endedBecause(): string | undefined {
    return this.#why;
  }

  /** Steps to run on stop, after those registered later. */
  defer(...steps: ShutdownStep[]): void {
    this.#steps.push(...steps);
  }

  /** The agent ends on its own; the first reason given is the one `done` reports. */
  end(why: string): void {
    this.#why ??= why;
    this.#stopping.abort();
  }

  /** Stops the agent (once, however often asked). */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      // `#stopped` is set before the abort listeners (which call stop again) run.
      await Promise.resolve();
      this.#stopping.abort();
      await this.#runSteps();
    })();
    return this.#stopped;
  }

  /** Undoes a start that failed part way: the steps registered so far. */
  async abandon(): Promise<void> {
    this.#stopping.abort();
    await this.#runSteps();
  }

  /**
   * Once started: stop when `signal` (the embedder's) or our own aborts.
   * Returns `done`: it settles once stopped, with endedBecause.
   */
  arm(signal: AbortSignal | undefined): Promise<string | undefined> {
    signal?.addEventListener("abort", () => void this.stop(), { once: true });
    this.signal.addEventListener("abort", () => void this.stop(), { once: true });
    return new Promise((resolve) => {
      const settle = () => void this.stop().then(() => resolve(this.#why));
      if (this.signal.aborted) settle();
      else this.signal.addEventListener("abort", settle, { once: true });
    });
  }

  async #runSteps(): Promise<void> {
    const limitMs = this.#o.stepLimitMs ?? 10_000;
    for (const step of this.#steps.splice(0).reverse()) {
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((resolve) => (timer = setTimeout(() => { this.#o.log(`nodeagent: stopping: a cleanup step took over ${limitMs / 1000} s; going on`); resolve(); }, limitMs)));
      await Promise.race([(async () => step())().catch((err: Error) => this.#o.log(`nodeagent: stopping: ${err.message}`)), limit]);
      clearTimeout(timer);
    }
  }
}
