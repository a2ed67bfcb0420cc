// A counting limit on the host work of pod starts in the embedded runtime
// (sandboxes and container shims). Each start forks processes; a hundred at
// once share the CPU so fairly that they all finish late, while a few at a
// time finish in arrival order at the same total throughput. Work marked
// `first` (a container of a pod whose sandbox is ready) goes before work that
// begins a new pod, so pods arriving together finish one after another.

export interface StartOptions {
  /** Ahead of every waiting job without it (still first come, first served among themselves). */
  first?: boolean;
}

export class StartLimit {
  #free: number;
  readonly #first: (() => void)[] = [];
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.#free = Math.max(1, limit);
  }

  /** Runs `work` once fewer than `limit` others run. */
  async run<T>(work: () => Promise<T>, options: StartOptions = {}): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((r) => (options.first ? this.#first : this.#waiting).push(r));
    try {
      return await work();
    } finally {
      const next = this.#first.shift() ?? this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}
