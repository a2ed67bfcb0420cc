// A Watch fed by pushes: the in-process backend pushes replayed and live
// events; the consumer pulls them through async iteration. Events at or
// below the last delivered revision are dropped, so replay and live
// delivery may overlap without duplicates.

import { EventBuffer } from "../event-buffer.js";
import type { Watch, WatchEvent } from "../storage.js";

export interface EventQueueWatchOptions {
  signal?: AbortSignal | undefined;
  /** The revision a progress event reports: everything up to it was pushed. */
  progressRevision: () => number;
  onClose: (watch: EventQueueWatch) => void;
}

export class EventQueueWatch implements Watch {
  readonly prefix: string;
  #last: number;
  readonly #queue = new EventBuffer<WatchEvent>();
  #error: unknown;
  #closed = false;
  readonly #options: EventQueueWatchOptions;

  constructor(prefix: string, afterRevision: number, options: EventQueueWatchOptions) {
    this.prefix = prefix;
    this.#last = afterRevision;
    this.#options = options;
    options.signal?.addEventListener("abort", () => this.close(), { once: true });
    if (options.signal?.aborted) this.close();
  }

  push(event: WatchEvent): void {
    if (this.#closed || event.revision <= this.#last) return;
    this.#last = event.revision;
    this.#enqueue(event);
  }

  fail(err: unknown): void {
    this.#error = err;
    this.#finish();
  }

  requestProgress(): void {
    if (this.#closed) return;
    this.#enqueue({ type: "progress", revision: Math.max(this.#last, this.#options.progressRevision()) });
  }

  /** Stop at once: events not yet taken are dropped. */
  close(): void {
    this.#queue.clear();
    this.#finish();
  }

  #enqueue(event: WatchEvent): void {
    this.#queue.push(event);
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#options.onClose(this);
    this.#queue.wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    for (;;) {
      const event = this.#queue.take();
      if (event !== undefined) {
        yield event;
        continue;
      }
      if (this.#error !== undefined) throw this.#error;
      if (this.#closed) return;
      await this.#queue.next();
    }
  }
}
