// One client's watch (seed 000, "Watch behavior", "Streaming lists"): the
// start state per the watch table (synthetic ADDED events for unset and "0",
// none for an exact version), then events from the watch cache's window or,
// for versions older than the window, from the store's own history; selector
// transitions (an object leaving the selection is DELETED for this watcher);
// bookmarks; a time limit. Events carry the cache's shared objects so each is
// serialized once for every watcher.

import {
  tooLargeResourceVersion,
  tooOldResourceVersion,
  decideWatch,
  type ApiObject,
} from "../../machinery/index.js";
import { CompactedError, type KeyValue } from "../../storage/index.js";
import type { Cached, CacheEvent } from "../../storage/cacher/cacher.js";
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
}

/** A slow client whose backlog passes this is cut off (it resumes from its last version). */
const MAX_BACKLOG = 50_000;
const FUTURE_VERSION_WAIT_MS = 3000;

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
    const prefix = store.prefixFor(namespace);
    const cacher = store.cacher;
    await cacher.start();
    const stream = new WatchStream();
    const start = decision.start;

    if (start.mode === "MostRecent") {
      if ((await cacher.consistentRevision()) === undefined) throw tooLargeResourceVersion(0, cacher.revision);
    } else if (start.mode === "NotOlderThan" && !(await cacher.waitFor(start.rv, FUTURE_VERSION_WAIT_MS))) {
      throw tooLargeResourceVersion(start.rv, cacher.revision);
    }

    // From here to subscribe() nothing awaits: no event can slip between the start state and the live stream.
    let after: number;
    if (start.mode === "Exact") {
      after = start.rv;
      let replay = cacher.eventsSince(after);
      if (replay === undefined) {
        // Older than the cache window: the store's own history, then whatever the cache saw meanwhile.
        const upTo = cacher.revision;
        for (const e of await storageEvents(store, prefix, after, upTo)) stream.#event(e, predicate);
        after = upTo;
        replay = cacher.eventsSince(after) ?? [];
      }
      for (const e of replay) {
        if (e.key.startsWith(prefix)) stream.#event(e, predicate);
        after = e.revision;
      }
    } else {
      after = cacher.revision;
      if (decision.sendInitialEvents) {
        for (const cached of cacher.list(prefix)!) if (predicate.matches(cached.object)) stream.#push({ type: "ADDED", object: cached });
      }
      if (decision.initialEventsEndBookmark) stream.#push({ type: "BOOKMARK", revision: after, initialEventsEnd: true });
    }
    let lastSent = after;
    const unsubscribe = cacher.subscribe((e) => {
      if (e.revision <= lastSent || !e.key.startsWith(prefix)) return;
      lastSent = e.revision;
      stream.#event(e, predicate);
    });
    stream.#cleanup.push(unsubscribe);

    if (decision.allowBookmarks) {
      const timer = setInterval(() => {
        if (cacher.revision > lastSent) lastSent = cacher.revision;
        stream.#push({ type: "BOOKMARK", revision: lastSent, initialEventsEnd: false });
      }, env.bookmarkIntervalMs);
      timer.unref();
      stream.#cleanup.push(() => clearInterval(timer));
    }
    if (params.timeoutSeconds !== undefined && params.timeoutSeconds > 0) {
      const timer = setTimeout(() => stream.close(), params.timeoutSeconds * 1000);
      timer.unref();
      stream.#cleanup.push(() => clearTimeout(timer));
    }
    return stream;
  }

  #event(e: CacheEvent<ApiObject>, predicate: Predicate): void {
    const now = e.type === "DELETED" ? false : predicate.matches(e.current.object);
    const before = e.previous !== undefined && predicate.matches(e.previous.object);
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

/**
 * Events in (after, upTo] from the store's history, shaped like the cache's:
 * the state at `after` tells additions from modifications. 410 once compacted.
 */
async function storageEvents(store: RegistryStore, prefix: string, after: number, upTo: number): Promise<CacheEvent<ApiObject>[]> {
  const toCached = (kv: KeyValue): Cached<ApiObject> => ({ key: kv.key, object: store.decode(kv), revision: kv.modRevision, encoded: new Map() });
  const out: CacheEvent<ApiObject>[] = [];
  try {
    const listed = await store.storage.list(prefix, { revision: after });
    const state = new Map(listed.items.map((kv) => [kv.key, toCached(kv)]));
    if (upTo <= after) return out;
    const watch = store.storage.watch(prefix, { fromRevision: after });
    watch.requestProgress();
    try {
      for await (const e of watch) {
        if (e.revision > upTo) break;
        if (e.type === "progress") {
          if (e.revision >= upTo) break;
          continue;
        }
        const key = e.type === "put" ? e.kv.key : e.key;
        const previous = state.get(key);
        if (e.type === "put") {
          const current = toCached(e.kv);
          state.set(key, current);
          out.push({ type: previous === undefined ? "ADDED" : "MODIFIED", key, current, previous, revision: e.revision });
        } else if (previous !== undefined) {
          state.delete(key);
          const last = structuredClone(previous.object);
          last.metadata.resourceVersion = String(e.revision);
          out.push({ type: "DELETED", key, current: { key, object: last, revision: e.revision, encoded: new Map() }, previous, revision: e.revision });
        }
        if (e.revision === upTo) break;
      }
    } finally {
      watch.close();
    }
  } catch (err) {
    if (err instanceof CompactedError) throw tooOldResourceVersion(after, err.compactedRevision);
    throw err;
  }
  return out;
}
