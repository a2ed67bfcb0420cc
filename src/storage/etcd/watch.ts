// One storage Watch over etcd's Watch stream. Events are queued in revision
// order for the consumer; a broken stream is re-created from the last revision
// delivered, so a leader change or an etcd restart is invisible to the
// consumer, except that a compacted resume point ends the watch with CompactedError.
//
// One gRPC stream per watch, not one multiplexed stream: each watch then
// resumes on its own from its own revision, its progress answers (which etcd
// broadcasts to every watcher of a stream, with watch_id -1) need no fan-out,
// and a slow consumer's backpressure (HTTP/2 flow control, below) stalls only
// its own stream. Streams share the endpoint's one HTTP/2 connection, so a
// stream costs little; orch opens about one watch per resource type.

import { CompactedError, StorageUnavailableError } from "../errors.js";
import { EventBuffer } from "../event-buffer.js";
import type { KeyValue, Watch, WatchEvent } from "../storage.js";
import { describe, type EtcdConnection } from "./connection.js";
import type { CallStream } from "./h2-channel.js";
import { etcdMethods, type MvccKeyValue, type WatchRequest, type WatchResponse } from "./rpc.js";

export interface EtcdWatchOptions {
  connection: EtcdConnection;
  /** The etcd key range, store prefix included. */
  key: Buffer;
  rangeEnd: Buffer;
  /** Deliver events after this revision (0: from now). */
  fromRevision: number;
  signal: AbortSignal | undefined;
  /** Ask etcd for each event's previous value (WatchOptions.prevKv). */
  prevKv: boolean;
  /** Turns an etcd key-value into ours (strips the store prefix). */
  toKeyValue: (kv: MvccKeyValue) => KeyValue;
  /** etcd revealed its compacted revision. */
  onCompacted: (revision: number) => void;
  /** Whether this etcd orders progress answers after pending events (see #onProgressAnswer). */
  progressIsOrdered: () => boolean;
  /** Give up (StorageUnavailableError) after failing to re-create the stream for this long. */
  resumeTimeoutMs: number;
  onClose: (watch: EtcdWatch) => void;
}

// Backpressure: stop reading the stream above HIGH queued events, read again below LOW.
const HIGH_WATER = 4096;
const LOW_WATER = 1024;
export class EtcdWatch implements Watch {
  readonly #options: EtcdWatchOptions;
  readonly #queue = new EventBuffer<WatchEvent>();
  #error: unknown;
  #closed = false;

  /** Every event up to this revision is in the queue: the resume point. */
  #last: number;
  #stream: CallStream<WatchRequest, WatchResponse> | undefined;
  #endpoint = 0;
  #paused = false;
  #createdRevision = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #retryDelayMs = 50;
  #failingSince = 0;

  // Progress requests: one in flight at a time; a request made meanwhile is queued behind it.
  /** Progress requests sent on the current stream whose answers have not arrived. */
  #progressInFlight = 0;
  /** Answers still to come that belong to a progress already delivered (events proved it first). */
  #progressAnswersToSkip = 0;
  #progressQueued = false;
  /** An answer not yet believed (its revision is past our events): delivered once they reach it. */
  #progressPending: { revision: number } | undefined;

  constructor(options: EtcdWatchOptions) {
    this.#options = options;
    this.#last = options.fromRevision;
    if (options.signal?.aborted) {
      this.close();
      return;
    }
    options.signal?.addEventListener("abort", () => this.close(), { once: true });
    // Open now, not on first next(): writes made right after watch() returns must be seen.
    this.#connect();
  }

  requestProgress(): void {
    if (this.#closed) return;
    if (this.#progressInFlight > 0 || this.#progressPending !== undefined) {
      this.#progressQueued = true;
      return;
    }
    this.#sendProgressRequest();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.clear();
    clearTimeout(this.#retryTimer);
    this.#dropStream();
    this.#options.onClose(this);
    this.#queue.wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    try {
      yield* this.#events();
    } finally {
      // Leaving a for-await loop early (break, throw) ends the watch: nobody reads it any more.
      this.close();
    }
  }

  async *#events(): AsyncGenerator<WatchEvent> {
    for (;;) {
      const event = this.#queue.take();
      if (event !== undefined) {
        if (this.#paused && this.#queue.size < LOW_WATER) {
          this.#paused = false;
          this.#stream?.resume();
        }
        yield event;
        continue;
      }
      if (this.#error !== undefined) {
        const err = this.#error;
        this.#error = undefined;
        throw err;
      }
      if (this.#closed) return;
      await this.#queue.next();
    }
  }

  #connect(): void {
    if (this.#closed) return;
    let opened: { stream: CallStream<WatchRequest, WatchResponse>; endpoint: number };
    try {
      opened = this.#options.connection.openStream(etcdMethods().watch);
    } catch (err) {
      this.#fail(err);
      return;
    }
    const { stream, endpoint } = opened;
    this.#stream = stream;
    this.#endpoint = endpoint;
    this.#paused = false;
    this.#createdRevision = 0;
    stream.on("data", (response: WatchResponse) => {
      if (this.#stream === stream) this.#onResponse(response);
    });
    stream.on("error", (err: Error) => {
      if (this.#stream === stream) this.#onBroken(err);
    });
    stream.on("end", () => {
      if (this.#stream === stream) this.#onBroken(new Error("etcd closed the watch stream"));
    });
    stream.write({
      create_request: {
        key: this.#options.key,
        range_end: this.#options.rangeEnd,
        // etcd's start_revision is inclusive; ours is "after". 0 means "from now" in both.
        start_revision: this.#last === 0 ? 0 : this.#last + 1,
        progress_notify: true,
        prev_kv: this.#options.prevKv,
      },
    });
  }

  #onResponse(response: WatchResponse): void {
    if (this.#closed) return;
    this.#options.connection.streamAlive(this.#endpoint);
    const headerRevision = response.header?.revision ?? 0;

    if (response.canceled) {
      if (response.compact_revision > 0) {
        this.#options.onCompacted(response.compact_revision);
        this.#fail(new CompactedError(this.#last, response.compact_revision));
      } else {
        // etcd cancels for reasons of its own (a member lost its leader, ...): start over elsewhere.
        this.#onBroken(new Error(`etcd cancelled the watch: ${response.cancel_reason || "no reason given"}`));
      }
      return;
    }

    if (response.created) {
      this.#createdRevision = headerRevision;
      // A watch from "now" starts after the revision current at creation: that is where to resume.
      if (this.#last === 0) this.#last = headerRevision;
      this.#failingSince = 0;
      this.#retryDelayMs = 50;
      // A progress request sent on the broken stream was lost with it.
      if (this.#progressInFlight > 0) {
        this.#progressInFlight = 0;
        this.#progressAnswersToSkip = 0;
        this.#sendProgressRequest();
      }
      return;
    }

    if (response.events.length > 0) {
      // Events at or below the resume point were delivered before a reconnect.
      const floor = this.#last;
      for (const event of response.events) {
        if (event.kv === null) continue;
        const revision = event.kv.mod_revision;
        if (revision <= floor) continue;
        this.#push(this.#toWatchEvent(event.type, event.kv, event.prev_kv, revision));
        if (revision > this.#last) this.#last = revision;
      }
      // Events in order reaching an answer's revision prove it: no need to wait for confirmation.
      this.#deliverIfProven();
      return;
    }

    // No events, not created, not cancelled: a progress notification.
    if (response.watch_id === -1) {
      this.#onProgressAnswer(headerRevision);
    } else {
      // etcd's periodic notification travels with the watcher's events, in
      // order, and only once the watcher is live: it is safe to resume after it.
      if (headerRevision > this.#last) this.#last = headerRevision;
      this.#deliverIfProven();
    }
  }

  /**
   * An answer to our WatchProgressRequest. etcd ≥ 3.4.31 / 3.5.13 sends it
   * only after every event up to its revision. Older servers (Debian's
   * 3.4.23) answer on a separate path that can overtake events still queued
   * for the stream, or still being replayed; there an answer is believed
   * only once our own events reach its revision.
   */
  #onProgressAnswer(revision: number): void {
    this.#progressInFlight = Math.max(0, this.#progressInFlight - 1);
    if (this.#progressAnswersToSkip > 0) {
      this.#progressAnswersToSkip--;
      if (this.#progressInFlight === 0 && this.#progressPending === undefined && this.#progressQueued) {
        this.#progressQueued = false;
        this.#sendProgressRequest();
      }
      return;
    }
    if (this.#last >= revision || this.#options.progressIsOrdered()) {
      this.#deliverProgress(Math.max(revision, this.#last));
      return;
    }
    // Not proven: held until our own events reach it (#onResponse delivers it then). Asking again proves
    // nothing (such an etcd answers ahead of the same queued events), and neither does a quiet round trip:
    // a revision believed that way went out in bookmarks ahead of events still on their way, and watchers
    // that resumed from one lost them (bench/density on etcd 3.4.23: an informer missed 3,000 pods).
    this.#progressPending ??= { revision };
  }

  /** Events in order reaching a held answer's revision prove it; answers still to come for it are skipped. */
  #deliverIfProven(): void {
    const pending = this.#progressPending;
    if (pending === undefined || this.#last < pending.revision) return;
    this.#progressAnswersToSkip = this.#progressInFlight;
    this.#deliverProgress(this.#last);
  }

  #deliverProgress(revision: number): void {
    this.#progressPending = undefined;
    this.#push({ type: "progress", revision });
    if (this.#progressQueued) {
      this.#progressQueued = false;
      this.#sendProgressRequest();
    }
  }

  #sendProgressRequest(): void {
    if (this.#closed) return;
    this.#progressInFlight++;
    // Without a stream the request is re-sent when the next one is created.
    if (this.#stream !== undefined && this.#createdRevision > 0) this.#stream.write({ progress_request: {} });
  }

  #toWatchEvent(type: "PUT" | "DELETE", kv: MvccKeyValue, prev: MvccKeyValue | null, revision: number): WatchEvent {
    const toKv = this.#options.toKeyValue;
    // prev_kv is absent when the previous version was compacted away; only then is a delete without it possible.
    const prevKv = prev === null || prev.mod_revision === 0 ? undefined : toKv(prev);
    if (type === "DELETE") {
      const key = toKv(kv).key;
      return { type: "delete", key, prevKv: prevKv ?? { key, value: new Uint8Array(0), createRevision: 0, modRevision: 0 }, revision };
    }
    return { type: "put", kv: toKv(kv), prevKv, revision };
  }

  #push(event: WatchEvent): void {
    this.#queue.push(event);
    if (!this.#paused && this.#queue.size >= HIGH_WATER && this.#stream !== undefined) {
      // Stop reading: HTTP/2 flow control then holds etcd back instead of our memory growing.
      this.#paused = true;
      this.#stream.pause();
    }
  }

  #onBroken(err: unknown): void {
    if (this.#closed) return;
    this.#dropStream();
    this.#options.connection.streamFailed(this.#endpoint, err);
    const now = Date.now();
    if (this.#failingSince === 0) this.#failingSince = now;
    if (now - this.#failingSince >= this.#options.resumeTimeoutMs) {
      this.#fail(
        new StorageUnavailableError(
          `etcd watch could not be resumed from revision ${this.#last} for ${this.#options.resumeTimeoutMs} ms: ${describe(err)}`,
          err,
        ),
      );
      return;
    }
    const delay = this.#retryDelayMs * (0.5 + Math.random());
    this.#retryDelayMs = Math.min(this.#retryDelayMs * 2, 1000);
    this.#retryTimer = setTimeout(() => this.#connect(), delay);
  }

  #dropStream(): void {
    const stream = this.#stream;
    this.#stream = undefined;
    if (stream === undefined) return;
    // Keep an error listener: with grpc-js, cancel() emits a CANCELLED error we do not care about.
    stream.removeAllListeners("data");
    stream.on("error", () => {});
    stream.cancel();
  }

  /** End the watch with an error, after the events already queued. */
  #fail(err: unknown): void {
    if (this.#closed) return;
    this.#error = err;
    clearTimeout(this.#retryTimer);
    this.#dropStream();
    this.#queue.wake();
  }
}
