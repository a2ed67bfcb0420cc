// The one door to storage for one resource (upstream's cacheDelegator): the
// backend plus the watch cache of its key prefix. Every read, watch and write
// of the registry goes through here, and this is the one place that decides
// whether the cache or the backend answers (seed 000, "Resource version
// semantics", the get/list/watch tables):
//   get   ""            backend (a consistent read of the key); with consistentGets and a
//                       backend that reads a key's revision alone (etcd), the cache's copy
//                       when the backend's latest revision of the key is the cache's
//         "0"           cache as it stands
//         NotOlderThan  cache, once it reached the version (else FutureRevision after a wait)
//   list  ""            cache, once it caught up with the backend's current revision
//         "0"           cache as it stands;  NotOlderThan: as for get
//         Exact         cache snapshot when the window covers it (ListFromCacheSnapshot),
//                       else the backend at that revision (Compacted when gone)
//   watch from a version in the window: cache; older: backend history, then the cache
// Writes go to the backend; guaranteedUpdate starts from the cache's copy.
// Errors are storage errors: the registry maps them to API statuses.

import { sameBytes } from "../bytes.js";
import { CompactedError, FutureRevisionError } from "../errors.js";
import { forEachInSlices } from "../slices.js";
import type { DeleteOptions, DeleteResult, GuaranteedUpdateOptions, GuaranteedUpdateResult, KeyValue, Storage, UpdateDecision } from "../storage.js";
import { cachedRecord, decodeRecord, storedKeyValue, type Cached, type CacheEvent } from "./cached.js";
import { Cacher, type CacheListener, type CacherOptions } from "./cacher.js";
import { historyEvents } from "./history.js";
import type { ReadMode } from "../../machinery/resource-version.js";

/** Which version a read asks for (seed 000, "Resource version semantics"): machinery's ReadMode. */
export type ReadAt = ReadMode;

export interface CorruptKey {
  key: string;
  error: Error;
}

export interface CachedList<T> {
  /** In key order. */
  items: Cached<T>[];
  /** The revision the list is as of. */
  revision: number;
  /** Keys in the answer's range whose stored value could not be decoded: the caller refuses the list. */
  corrupt: CorruptKey[];
}

export interface WatchSink<T> {
  /** Not for Exact starts: the state at the start revision, offered before any event (initial events). */
  start?(revision: number, state: () => Cached<T>[]): void;
  event(e: CacheEvent<T>): void;
}

export interface CachedWatch {
  /** The revision the watch started after (for Exact: the last replayed event's). */
  readonly revision: number;
  close(): void;
}

export interface CachedStorageOptions<T> extends Omit<CacherOptions<T>, "store"> {
  backend: Storage;
  /** ListFromCacheSnapshot: Exact lists inside the window come from the cache's snapshots. */
  snapshots?: boolean;
  /** How long a read waits for a version the cache has not reached (seed 000, "Watch behavior" 6). */
  futureWaitMs?: number;
  /**
   * ConsistentGetFromCache: a consistent get asks the backend only for the
   * key's latest modRevision (Storage.latestModRevision) and answers with the
   * cache's copy when it is that version: no value transferred, nothing decoded.
   */
  consistentGets?: boolean;
}

const DEFAULT_FUTURE_WAIT_MS = 3000;
/** How long a read waits for events on their way before it goes to a backend that cannot prove progress. */
const UNPROVABLE_WAIT_MS = 250;
/** How many of its own writes the door remembers until the cache applies them. */
const MAX_WRITTEN = 10_000;

export class CachedStorage<T> {
  readonly prefix: string;
  readonly #backend: Storage;
  readonly #cache: Cacher<T>;
  readonly #options: CachedStorageOptions<T>;
  readonly #waitMs: number;
  /**
   * Writes the cache has not applied yet. A client that writes an object again
   * at once (a controller updating status after spec) would otherwise start
   * from the cache's older copy and pay a failed compare-and-swap.
   */
  readonly #written = new Map<string, Written<T>>();
  /**
   * The newest revision this door has shown a client (ownWrites' read point):
   * its own writes' answers, and a consistent get's answer from the backend.
   * The latter matters: a write is visible once committed, before its own
   * answer comes back (lmdb answers after the flush, etcd may answer a Range
   * before a Txn), so a client can see it in a GET while the writer's request
   * is still open. Other servers' writes are not in it until shown here.
   */
  #shown = 0;
  /** Creates sent and not answered yet, by key (see create). */
  readonly #pending = new Map<string, Pending<T>>();

  constructor(options: CachedStorageOptions<T>) {
    const { backend, snapshots: _s, futureWaitMs: _f, consistentGets: _g, ...cache } = options;
    this.prefix = options.prefix;
    this.#backend = backend;
    this.#options = options;
    this.#waitMs = options.futureWaitMs ?? DEFAULT_FUTURE_WAIT_MS;
    // The event of our own write brings the bytes we wrote: the record made for the write's answer serves (no second decode).
    this.#cache = new Cacher({ ...cache, store: backend, known: (kv) => this.#ownRecord(kv) ?? this.#pendingRecord(kv) });
    this.#cache.subscribe((e) => {
      const written = this.#written.get(e.key);
      if (written !== undefined && e.revision >= written.kv.modRevision) this.#written.delete(e.key);
    });
  }

  // ---- lifecycle, for the server ----

  /** Load the prefix into the cache; resolves once the initial state is in memory. */
  start(): Promise<void> {
    return this.#cache.start();
  }

  stop(): void {
    this.#cache.stop();
  }

  /** The backend compacted history before `revision` (see Cacher.compacted). */
  compacted(revision: number): void {
    this.#cache.compacted(revision);
  }

  /** Everything up to this revision is in the cache. */
  get revision(): number {
    return this.#cache.revision;
  }

  /**
   * The read point of an informer that has seen every write made through this
   * door and every version this door has answered with: the cache once it
   * applied them, with no backend call (the admission plugins' reads). A
   * client that saw a version here (a write's answer, or a GET that read a
   * write still unanswered) finds it in its next request's reads. Writes
   * through another server show up as the cache follows them, as in
   * upstream's informers.
   */
  ownWrites(): ReadAt {
    return { mode: "NotOlderThan", rv: this.#shown };
  }

  /** Live events of the whole prefix, unfiltered (watch() is the client path). */
  subscribe(listener: CacheListener<T>): () => void {
    return this.#cache.subscribe(listener);
  }

  // ---- reads ----

  /** One key; undefined when absent. A key whose stored value cannot be decoded throws the decoder's error. */
  async get(key: string, at: ReadAt): Promise<Cached<T> | undefined> {
    if (at.mode === "MostRecent") {
      const known = this.#options.consistentGets === true && this.#backend.latestModRevision !== undefined ? this.#cache.get(key) : undefined;
      if (known !== undefined) {
        // Linearizable like the full read (the same read index in etcd); only the value is not sent.
        const latest = await this.#backend.latestModRevision!(key);
        if (latest === known.revision) return known;
        // Changed (or gone) since the cache's copy: our own write the cache has not applied yet, else a full read.
        const own = latest === 0 ? undefined : this.#ownRecord({ key, modRevision: latest });
        if (own !== undefined) return own;
      }
      const { kv, revision } = await this.#backend.get(key);
      // The answer may be newer than the cache (a write not yet answered, even): later ownWrites() reads wait for it.
      if (kv !== undefined) this.#show(kv.modRevision);
      else if (this.#cache.get(key) !== undefined) this.#show(revision);
      return kv === undefined ? undefined : this.#record(kv);
    }
    if (at.mode === "Exact") {
      // The get table has no Exact row (decideGet never asks for one): a one-key list at that version.
      const { items, corrupt } = await this.#listAt(key, at.rv);
      return oneKey(key, items.find((c) => c.key === key), corrupt);
    }
    if (!(await this.#cacheServes(at))) {
      const { kv } = await this.#backend.get(key);
      return kv === undefined ? undefined : this.#record(kv);
    }
    return oneKey(key, this.#cache.get(key), this.#cache.corrupt(key));
  }

  /** The stored value itself, from the backend (dry runs, the corrupt-object delete). */
  async getStored(key: string): Promise<KeyValue | undefined> {
    return (await this.#backend.get(key)).kv;
  }

  /** Everything under `prefix` (a sub-prefix of the resource's) at `at`. */
  async list(prefix: string, at: ReadAt): Promise<CachedList<T>> {
    if (at.mode === "Exact") return this.#listAt(prefix, at.rv);
    if (!(await (at.mode === "MostRecent" ? this.#caughtUp() : this.#cacheServes(at)))) return this.#backendList(prefix);
    return { revision: this.#cache.revision, items: this.#cache.list(prefix)!, corrupt: this.#cache.corrupt(prefix) };
  }

  async #listAt(prefix: string, revision: number): Promise<CachedList<T>> {
    await this.#cache.start();
    if (revision > this.#cache.revision) await this.#waitFor(revision);
    if (this.#options.snapshots) {
      const items = this.#cache.list(prefix, revision);
      if (items !== undefined) return { revision, items, corrupt: [] };
    }
    return this.#backendList(prefix, revision);
  }

  /** The backend's list, at `revision` or its current one. */
  async #backendList(prefix: string, revision?: number): Promise<CachedList<T>> {
    const listed = await this.#backend.list(prefix, revision === undefined ? {} : { revision });
    const items: Cached<T>[] = [];
    const corrupt: CorruptKey[] = [];
    await forEachInSlices(listed.items, (kv) => {
      try {
        items.push(this.#record(kv));
      } catch (err) {
        corrupt.push({ key: kv.key, error: err as Error });
      }
    });
    return { revision: listed.revision, items, corrupt };
  }

  /**
   * Watch `prefix`. An Exact start replays the changes after its version (from
   * the window, else the backend's history and then the window); other starts
   * begin at the read point, offering the state there to `sink.start`. Live
   * events follow with nothing lost or repeated in between.
   */
  async watch(prefix: string, at: ReadAt, sink: WatchSink<T>): Promise<CachedWatch> {
    // A watch from "now" that cannot prove the cache current starts from the cache's newest version:
    // a consistent state followed by every later change, only not the very newest point.
    if (at.mode === "MostRecent") await this.#caughtUp();
    else await this.#reach(at);
    let after: number;
    if (at.mode === "Exact") {
      after = at.rv;
      let replay = this.#cache.eventsSince(after);
      if (replay === undefined && after < this.#cache.shedRevision) {
        // Shed for the memory budget: replaying it from the backend would load the same bytes again.
        throw new CompactedError(after, this.#cache.shedRevision);
      }
      if (replay === undefined) {
        // Older than the window: the backend's history, then whatever the cache saw meanwhile.
        const upTo = this.#cache.revision;
        const options = { backend: this.#backend, decode: this.#options.decode, withRevision: this.#options.withRevision };
        for (const e of await historyEvents(options, prefix, after, upTo)) sink.event(e);
        after = upTo;
        replay = this.#cache.eventsSince(after) ?? [];
      }
      // From here to subscribe() nothing awaits: no event can slip between the replay and the live stream.
      for (const e of replay) {
        if (e.key.startsWith(prefix)) sink.event(e);
        after = e.revision;
      }
    } else {
      after = this.#cache.revision;
      sink.start?.(after, () => this.#cache.list(prefix)!);
    }
    let last = after;
    const close = this.#cache.subscribe((e) => {
      if (e.revision <= last || !e.key.startsWith(prefix)) return;
      last = e.revision;
      sink.event(e);
    });
    return { revision: after, close };
  }

  /** Start the cache and wait until it serves `at` (MostRecent: #caughtUp; Exact waits only for a future version, in #listAt). */
  async #reach(at: ReadAt): Promise<void> {
    await this.#cache.start();
    if (at.mode === "NotOlderThan") await this.#waitFor(at.rv);
  }

  /**
   * Whether the cache has caught up with the backend's current revision within
   * the wait. It cannot tell for an etcd older than 3.4.31 / 3.5.13, which may
   * answer a progress request ahead of events still on their way (such an
   * answer is believed only once the events prove it, storage/etcd/watch.ts):
   * consistent lists then go to the backend, as upstream's do without
   * consistent reads from the cache.
   */
  async #caughtUp(): Promise<boolean> {
    await this.#cache.start();
    if (this.#backend.progressProvable?.() === false) return false;
    try {
      await this.#cache.consistentRevision(this.#waitMs);
      return true;
    } catch (err) {
      if (err instanceof FutureRevisionError) return false;
      throw err;
    }
  }

  /**
   * Whether the cache serves a read at `at` (waiting for it to get there);
   * false when the backend should: the cache cannot prove progress without
   * events (an old etcd, see #caughtUp), and it is still behind a version the
   * backend has reached after a short wait for events on their way (on a
   * resource nobody writes it would never get there).
   */
  async #cacheServes(at: ReadAt): Promise<boolean> {
    await this.#cache.start();
    if (at.mode !== "NotOlderThan" || at.rv <= this.#cache.revision) return true;
    if (this.#backend.progressProvable?.() !== false) {
      await this.#waitFor(at.rv);
      return true;
    }
    if (await this.#cache.waitFor(at.rv, Math.min(this.#waitMs, UNPROVABLE_WAIT_MS))) return true;
    if ((await this.#backend.currentRevision()) >= at.rv) return false;
    await this.#waitFor(at.rv); // a version the backend has not reached either: wait (and answer 504) as anywhere
    return true;
  }

  async #waitFor(revision: number): Promise<void> {
    if (!(await this.#cache.waitFor(revision, this.#waitMs))) throw new FutureRevisionError(revision, this.#cache.revision);
  }

  // ---- writes: the backend's, with the freshest known value as the first guess ----

  /**
   * Store a new key. `made`, when given, is the object `value` decodes to
   * without its revision (the caller's own, which it will not change again):
   * the write's record, and the cache's when the write's event comes back,
   * are then made from it instead of decoding the bytes just sent (a JSON
   * decode per create, and its garbage). The event may come before the answer
   * (on etcd it usually does), so the pending write is known by its bytes
   * until then: an event carrying exactly those bytes decodes to `made`.
   */
  async create(key: string, value: Uint8Array, made?: T): Promise<Cached<T>> {
    if (made === undefined || this.#options.withRevision === undefined) return this.#wroteRecord(key, await this.#backend.create(key, value));
    const pending: Pending<T> = { value, made, record: undefined };
    this.#pending.set(key, pending);
    let kv: KeyValue;
    try {
      kv = await this.#backend.create(key, value);
    } finally {
      if (this.#pending.get(key) === pending) this.#pending.delete(key);
    }
    this.#noteWrite(key, kv, pending);
    return this.recordOf(kv);
  }

  /** The record of a pending create whose bytes these are (see create), made once. */
  #pendingRecord(kv: KeyValue): Cached<T> | undefined {
    const pending = this.#pending.get(kv.key);
    if (pending === undefined || !sameBytes(pending.value, kv.value)) return undefined;
    return (pending.record ??= this.#madeRecord(pending.made, kv));
  }

  /** A record of `made` (the decoded form of kv.value) at kv's revision. */
  #madeRecord(made: T, kv: KeyValue): Cached<T> {
    // With the decoder: the record may let its object go and decode it from the bytes when read again.
    return cachedRecord({ key: kv.key, object: this.#options.withRevision!(made, kv.modRevision), revision: kv.modRevision, stored: kv }, this.#options.decode);
  }

  /**
   * A stored value as a record: for a value this door just wrote, one record
   * decoded once and shared with the cache when it applies the write's event
   * (so its serializations are shared too); else decoded here.
   */
  recordOf(kv: KeyValue): Cached<T> {
    return this.#applied(kv) ?? this.#ownRecord(kv) ?? this.#record(kv);
  }

  /** The cache's record when it already applied this very value (the backend's event can overtake the write's answer). */
  #applied(kv: KeyValue): Cached<T> | undefined {
    const cached = this.#cache.get(kv.key);
    return cached !== undefined && cached.revision === kv.modRevision && cached.storedSize > 0 ? cached : undefined;
  }

  /** Note a write of this door and answer with its shared record. */
  #wroteRecord(key: string, kv: KeyValue): Cached<T> {
    this.#noteWrite(key, kv);
    return this.recordOf(kv);
  }

  /** Remember a write of this door until the cache applies it (nothing to remember when it already did). */
  #noteWrite(key: string, kv: KeyValue, pending?: Pending<T>): void {
    this.#show(kv.modRevision);
    if (this.#applied(kv) !== undefined) this.#written.delete(key);
    else this.#wrote(key, kv, pending === undefined ? undefined : (pending.record ?? this.#madeRecord(pending.made, kv)));
  }

  /** The record of this door's write of `kv.key` at `kv.modRevision` (one key at one revision has one value), if it is still remembered. */
  #ownRecord(kv: { key: string; modRevision: number }): Cached<T> | undefined {
    const written = this.#written.get(kv.key);
    if (written === undefined || written.kv.modRevision !== kv.modRevision) return undefined;
    return (written.record ??= this.#record(written.kv));
  }

  async delete(key: string, options?: DeleteOptions): Promise<DeleteResult> {
    const out = await this.#backend.delete(key, options);
    this.#written.delete(key);
    this.#show(out.revision);
    return out;
  }

  /**
   * The backend's guaranteedUpdate, starting from the freshest value this door
   * knows: its own last write of the key while the cache has not applied it
   * yet, else the cache's copy. No read of the key when that guess is current.
   */
  async guaranteedUpdate(
    key: string,
    tryUpdate: (current: KeyValue | undefined) => UpdateDecision | Promise<UpdateDecision>,
    options: GuaranteedUpdateOptions = {},
  ): Promise<GuaranteedUpdateResult> {
    const cached = this.#cache.get(key);
    const written = this.#written.get(key);
    const suggestion = written !== undefined && (cached === undefined || cached.revision < written.kv.modRevision) ? written.kv : cached && storedKeyValue(cached);
    const out = await this.#backend.guaranteedUpdate(key, tryUpdate, suggestion === undefined ? options : { ...options, suggestion });
    if (out.changed) {
      if (out.kv === undefined) {
        this.#written.delete(key);
        this.#show(out.deleteRevision ?? 0);
      } else this.#noteWrite(key, out.kv);
    }
    return out;
  }

  /** A version shown to a client: ownWrites() reads after it from now on. */
  #show(revision: number): void {
    if (revision > this.#shown) this.#shown = revision;
  }

  #wrote(key: string, kv: KeyValue, record?: Cached<T>): KeyValue {
    // Only a hint: bounded, and emptied as the cache catches up (see the constructor).
    if (this.#written.size >= MAX_WRITTEN) this.#written.clear();
    this.#written.set(key, { kv, record });
    this.#show(kv.modRevision);
    return kv;
  }

  /** A stored value as a record; throws the decoder's error. */
  #record(kv: KeyValue): Cached<T> {
    return decodeRecord(kv, this.#options.decode);
  }
}

/** A write of this door the cache has not applied yet, with its record once one was made. */
interface Written<T> {
  readonly kv: KeyValue;
  record: Cached<T> | undefined;
}

/** A create of this door sent and not answered yet, with the object its bytes decode to (see create). */
interface Pending<T> {
  readonly value: Uint8Array;
  readonly made: T;
  /** Made once, by whichever needs it first: the cache applying the event, or the answer. */
  record: Cached<T> | undefined;
}

/** `found`, or the decoder's error when `key` is among the corrupt ones (seed 000, the corrupt state). */
function oneKey<T>(key: string, found: Cached<T> | undefined, corrupt: readonly CorruptKey[]): Cached<T> | undefined {
  const bad = found === undefined ? corrupt.find((c) => c.key === key) : undefined;
  if (bad !== undefined) throw bad.error;
  return found;
}
