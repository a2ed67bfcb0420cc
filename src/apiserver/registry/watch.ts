// One client's watch (seed 000, "Watch behavior", "Streaming lists"): the
// start state per the watch table (synthetic ADDED events for unset and "0",
// none for an exact version), then the events the storage door delivers (it
// decides between the cache's window and the backend's history); selector
// transitions (an object leaving the selection is DELETED for this watcher);
// bookmarks; a backlog limit; a time limit. Events carry the cache's shared
// objects so each is serialized once for every watcher.

import {
  tooLargeResourceVersion,
  tooOldResourceVersion,
  decideWatch,
  type ApiObject,
} from "../../machinery/index.js";
import { CompactedError, FutureRevisionError } from "../../storage/index.js";
import type { Cached, CacheEvent } from "../../storage/cacher/index.js";
import type { RegistryStore } from "./store.js";
import { compilePredicate, type Predicate, type PredicateParams } from "./predicate.js";

export interface WatchParams extends PredicateParams {
  resourceVersion?: string | undefined;
  resourceVersionMatch?: string | undefined;
  sendInitialEvents?: boolean | undefined;
  allowWatchBookmarks?: boolean | undefined;
  timeoutSeconds?: number | undefined;
}

export type WatchOut =
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: Cached<ApiObject> }
  | { type: "BOOKMARK"; revision: number; initialEventsEnd: boolean };

export interface WatchEnv {
  metaGroup: string;
  /** Gate WatchList (streaming lists). */
  watchList: boolean;
  sharding: boolean;
  bookmarkIntervalMs: number;
  /** --min-request-timeout: a watch without timeoutSeconds ends after a random time in [min, 2*min), as upstream (0: never). */
  minRequestTimeoutMs?: number;
}

/** A slow client whose backlog passes this is cut off (it resumes from its last version). */
const MAX_BACKLOG = 50_000;

export class WatchStream implements AsyncIterable<WatchOut> {
  #queue: WatchOut[] = [];
  #head = 0;
  #wake: (() => void) | undefined;
  #ended = false;
  #cleanup: (() => void)[] = [];

  /** Start a watch; rejects (before anything is sent) with 400/410/504 as the seed's tables say. */
  static async open(store: RegistryStore, namespace: string | undefined, params: WatchParams, env: WatchEnv): Promise<WatchStream> {
    const decision = decideWatch(params, { metaGroup: env.metaGroup, watchList: env.watchList });
    const predicate = compilePredicate(store.def, params, { sharding: env.sharding });
    const storage = store.cacher;
    const stream = new WatchStream();
    const start = decision.start;
    let lastSent = 0;
    // The door picks the source (cache window or backend history) and joins it to the live stream without a gap.
    const watch = await storage
      .watch(store.prefixFor(namespace), start, {
        start(revision, state) {
          if (decision.sendInitialEvents) {
            for (const cached of state()) if (predicate.matchesRecord(cached)) stream.#push({ type: "ADDED", object: cached });
          }
          if (decision.initialEventsEndBookmark) stream.#push({ type: "BOOKMARK", revision, initialEventsEnd: true });
        },
        event(e) {
          lastSent = Math.max(lastSent, e.revision);
          stream.#event(e, predicate);
        },
      })
      .catch((err: unknown) => {
        if (err instanceof FutureRevisionError) {
          throw tooLargeResourceVersion(start.mode === "MostRecent" ? 0 : err.requestedRevision, err.currentRevision);
        }
        if (err instanceof CompactedError && start.mode === "Exact") throw tooOldResourceVersion(start.rv, err.compactedRevision);
        throw err;
      });
    lastSent = Math.max(lastSent, watch.revision);
    // The start state alone may have passed the backlog limit and closed the stream already.
    if (stream.#ended) watch.close();
    else stream.#cleanup.push(() => watch.close(), store.onRetire(() => stream.close()));

    if (decision.allowBookmarks) {
      const timer = setInterval(() => {
        if (storage.revision > lastSent) lastSent = storage.revision;
        stream.#push({ type: "BOOKMARK", revision: lastSent, initialEventsEnd: false });
      }, env.bookmarkIntervalMs);
      timer.unref();
      stream.#cleanup.push(() => clearInterval(timer));
    }
    // Upstream spreads the watches' ends so that clients do not all come back at once.
    const min = env.minRequestTimeoutMs ?? 0;
    // A negative timeoutSeconds ends the watch at once, as upstream's (its timer fires immediately); 0 means unset.
    const asked = params.timeoutSeconds ?? 0;
    const timeoutMs = asked < 0 ? 0 : asked > 0 ? asked * 1000 : min > 0 ? min * (1 + Math.random()) : -1;
    if (timeoutMs >= 0) {
      const timer = setTimeout(() => stream.close(), timeoutMs);
      timer.unref();
      stream.#cleanup.push(() => clearTimeout(timer));
    }
    return stream;
  }

  #event(e: CacheEvent<ApiObject>, predicate: Predicate): void {
    const now = e.type === "DELETED" ? false : predicate.matchesRecord(e.current);
    const before = e.previous !== undefined && predicate.matchesRecord(e.previous);
    if (e.type === "ADDED") {
      if (now) this.#push({ type: "ADDED", object: e.current });
    } else if (e.type === "DELETED") {
      if (before) this.#push({ type: "DELETED", object: e.current });
    } else if (now && before) this.#push({ type: "MODIFIED", object: e.current });
    else if (now) this.#push({ type: "ADDED", object: e.current });
    else if (before) this.#push({ type: "DELETED", object: e.current });
  }

  #push(out: WatchOut): void {
    if (this.#ended) return;
    this.#queue.push(out);
    if (this.#queue.length - this.#head > MAX_BACKLOG) this.close();
    this.#wake?.();
  }

  /** Events queued behind the one last taken: a writer that is behind may gather them into one write. */
  get pending(): number {
    return this.#queue.length - this.#head;
  }

  close(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const fn of this.#cleanup.splice(0)) fn();
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchOut> {
    try {
      for (;;) {
        if (this.#head < this.#queue.length) {
          const out = this.#queue[this.#head]!;
          this.#queue[this.#head++] = undefined as unknown as WatchOut;
          if (this.#head > 4096 && this.#head * 2 > this.#queue.length) {
            this.#queue = this.#queue.slice(this.#head);
            this.#head = 0;
          }
          yield out;
          continue;
        }
        if (this.#ended) return;
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
      }
    } finally {
      this.close();
    }
  }
}
