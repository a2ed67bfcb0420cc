// A watch's events waiting for their one reader: a FIFO whose take is O(1)
// and whose array is trimmed as it drains, and a reader that awaits the next
// push. The backends' watches (etcd/watch.ts, lmdb/event-queue-watch.ts)
// queue through it.

/** Trim the array once this many taken slots lead it and they are most of it. */
const TRIM_AFTER = 1024;

export class EventBuffer<T> {
  #items: T[] = [];
  #head = 0;
  #wake: (() => void) | undefined;

  /** Events waiting. */
  get size(): number {
    return this.#items.length - this.#head;
  }

  /** Queues `item` and wakes the reader. */
  push(item: T): void {
    this.#items.push(item);
    this.#wake?.();
  }

  /** The oldest waiting event, taken out; undefined when none waits. */
  take(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head]!;
    this.#items[this.#head++] = undefined as unknown as T;
    if (this.#head > TRIM_AFTER && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  /** Drops every waiting event. */
  clear(): void {
    this.#items = [];
    this.#head = 0;
  }

  /** Wakes the reader without an event: the watch closed or failed. */
  wake(): void {
    this.#wake?.();
  }

  /** Resolves at the next push or wake. */
  async next(): Promise<void> {
    await new Promise<void>((resolve) => (this.#wake = resolve));
    this.#wake = undefined;
  }
}
