// A counting limit on container shims starting at once in the embedded
// runtime. Each start forks a few dozen processes (mounts, unshare); a hundred
// at once share the CPU so fairly that they all finish late, while a few at a
// time finish in arrival order at the same total throughput.

export class StartLimit {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.#free = Math.max(1, limit);
  }

  /** Runs `work` once fewer than `limit` others run; first come, first served. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((r) => this.#waiting.push(r));
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}
