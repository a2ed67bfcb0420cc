// The watch cache for one resource (ARCHITECTURE.md, "cacher"): it wraps the
// storage interface, keeping the current objects of one key prefix and a
// window of recent events in memory. It serves reads at "Any", "NotOlderThan"
// and (from snapshots rebuilt out of the event window, gate
// ListFromCacheSnapshot) "Exact" revisions, and watches from any revision in
// the window. Clients reach it through the storage door (cached-storage.ts),
// which decides per request whether it or the backend answers.
// Seed 000, "Resource version semantics" and "Watch behavior".

import { CompactedError, FutureRevisionError } from "../errors.js";
import type { KeyValue, Storage, Watch } from "../storage.js";
import { applyChange, decodeRecord, type Cached, type CacheEvent, type WithRevision } from "./cached.js";
import { eventCost, type WindowBudget } from "./budget.js";

export type { Cached, CacheEvent } from "./cached.js";

export interface CacherOptions<T> {
  store: Storage;
  /** Key prefix of the resource, ending in "/". */
  prefix: string;
  /** Bytes to object; a throw marks the key as undecodable (logged, skipped). */
  decode(kv: KeyValue): T;
  /** The object stamped with another revision: a DELETED event carries the last state at the delete's revision. */
  withRevision?: WithRevision<T>;
  /** How long events stay in the window (seed: snapshots until events are older than 75 s). */
  windowMs?: number;
  /** Also bound the window by count. */
  maxEvents?: number;
  /** Also bound the window by bytes, shared with the process's other caches (budget.ts); history shed for it is 410. */
  budget?: WindowBudget;
  log?: (line: string) => void;
  /** A record already made for this stored value (the door's own write), used instead of decoding it again. */
  known?: (kv: KeyValue) => Cached<T> | undefined;
}

export type CacheListener<T> = (event: CacheEvent<T>) => void;

interface WindowEntry<T> {
  event: CacheEvent<T>;
  at: number;
  /** What the entry is charged against the budget. */
  bytes: number;
}

const DEFAULT_WINDOW_MS = 75_000;
const DEFAULT_MAX_EVENTS = 100_000;
const PROGRESS_INTERVAL_MS = 1000;

export class Cacher<T> {
  readonly prefix: string;
  readonly #options: CacherOptions<T>;
  readonly #objects = new Map<string, Cached<T>>();
  /** Keys whose latest stored value cannot be decoded, with the decoder's error (seed 000, the corrupt state). */
  readonly #corrupt = new Map<string, Error>();
  #window: WindowEntry<T>[] = [];
  #windowHead = 0;
  /** Bytes the live part of the window is charged. */
  #windowBytes = 0;
  /** Every revision ≥ this is reconstructible from #objects and the window. */
  #windowStart = 0;
  /** History up to this revision was shed for the memory budget: watches from before it are 410, not replayed. */
  #shedRevision = 0;
  #unregister: (() => void) | undefined;
  /** Everything up to this revision has been applied. */
  #revision = 0;
  #watch: Watch | undefined;
  readonly #listeners = new Set<CacheListener<T>>();
  readonly #progressListeners = new Set<(revision: number) => void>();
  readonly #waiters: { revision: number; resolve: () => void }[] = [];
  #ready: Promise<void> | undefined;
  #progressTimer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: CacherOptions<T>) {
    this.prefix = options.prefix;
    this.#options = options;
  }

  /** Load the prefix and follow it; resolves once the initial state is in memory. */
  start(): Promise<void> {
    this.#ready ??= this.#run();
    return this.#ready;
  }

  get revision(): number {
    return this.#revision;
  }

  /** The oldest revision the cache can serve a snapshot or watch for. */
  get windowStart(): number {
    return this.#windowStart;
  }

  get size(): number {
    return this.#objects.size;
  }

  async #run(): Promise<void> {
    const { store, prefix } = this.#options;
    const listed = await store.list(prefix);
    for (const kv of listed.items) {
      const cached = this.#decode(kv);
      if (cached !== undefined) this.#objects.set(kv.key, cached);
    }
    this.#revision = listed.revision;
    this.#windowStart = listed.revision;
    void this.#follow(listed.revision);
    this.#unregister = this.#options.budget?.register({
      oldestAt: () => (this.#windowHead < this.#window.length ? this.#window[this.#windowHead]!.at : undefined),
      shedOldest: () => {
        const revision = this.#window[this.#windowHead]!.event.revision;
        this.#shedRevision = Math.max(this.#shedRevision, revision);
        return this.#dropHead();
      },
    });
    // Progress, and the time bound kept while no event arrives (expired events would otherwise stay referenced).
    this.#progressTimer = setInterval(() => {
      this.#watch?.requestProgress();
      this.#trim();
    }, PROGRESS_INTERVAL_MS);
    this.#progressTimer.unref();
  }

  /** Apply the store's events forever; on compaction (we fell too far behind) reload from scratch. */
  async #follow(from: number): Promise<void> {
    let after = from;
    while (!this.#stopped) {
      const watch = this.#options.store.watch(this.#options.prefix, { fromRevision: after, prevKv: false });
      this.#watch = watch;
      try {
        for await (const e of watch) {
          if (e.type === "progress") this.#advance(e.revision);
          else if (e.type === "put") this.#apply(e.kv.key, this.#known(e.kv) ?? this.#decode(e.kv), e.revision);
          else {
            this.#corrupt.delete(e.key);
            this.#apply(e.key, undefined, e.revision);
          }
          after = Math.max(after, e.revision);
        }
        if (this.#stopped) return;
      } catch (err) {
        if (this.#stopped) return;
        if (err instanceof CompactedError) {
          this.#options.log?.(`cacher ${this.#options.prefix}: history compacted under us, reloading`);
          after = await this.#reload();
          continue;
        }
        this.#options.log?.(`cacher ${this.#options.prefix}: watch failed (${(err as Error).message}), retrying`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  /** Replace the state with a fresh list, emitting the differences as events. */
  async #reload(): Promise<number> {
    const listed = await this.#options.store.list(this.#options.prefix);
    const seen = new Set<string>();
    for (const kv of listed.items) {
      seen.add(kv.key);
      const old = this.#objects.get(kv.key);
      if (old?.revision !== kv.modRevision) this.#apply(kv.key, this.#decode(kv), listed.revision);
    }
    for (const key of [...this.#objects.keys()]) if (!seen.has(key)) this.#apply(key, undefined, listed.revision);
    for (const key of [...this.#corrupt.keys()]) if (!seen.has(key)) this.#corrupt.delete(key);
    this.#advance(listed.revision);
    // Revisions before the reload cannot be reconstructed any more.
    this.#clearWindow();
    this.#windowStart = listed.revision;
    return listed.revision;
  }

  #known(kv: KeyValue): Cached<T> | undefined {
    const known = this.#options.known?.(kv);
    if (known !== undefined) this.#corrupt.delete(kv.key);
    return known;
  }

  #decode(kv: KeyValue): Cached<T> | undefined {
    try {
      const cached = decodeRecord(kv, this.#options.decode);
      this.#corrupt.delete(kv.key);
      return cached;
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      this.#options.log?.(`cacher: cannot decode ${kv.key} at revision ${kv.modRevision}: ${error.message}`);
      this.#corrupt.set(kv.key, error);
      return undefined;
    }
  }

  #apply(key: string, current: Cached<T> | undefined, revision: number): void {
    const event = applyChange(this.#objects, { key, current, revision }, this.#options.withRevision);
    if (event !== undefined) {
      const bytes = eventCost(current?.storedSize ?? event.previous?.storedSize ?? 0);
      this.#window.push({ event, at: Date.now(), bytes });
      this.#windowBytes += bytes;
      this.#trim();
      this.#options.budget?.charge(bytes);
      for (const listener of this.#listeners) listener(event);
      // The old version is superseded (the listeners above had it while it was decoded).
      if (event.previous !== undefined && event.previous !== event.current) event.previous.release();
    }
    this.#advance(revision);
  }

  #advance(revision: number): void {
    if (revision <= this.#revision) return;
    this.#revision = revision;
    for (const listener of this.#progressListeners) listener(revision);
    for (let i = this.#waiters.length - 1; i >= 0; i--) {
      const waiter = this.#waiters[i]!;
      if (waiter.revision <= revision) {
        this.#waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  #trim(): void {
    const windowMs = this.#options.windowMs ?? DEFAULT_WINDOW_MS;
    const maxEvents = this.#options.maxEvents ?? DEFAULT_MAX_EVENTS;
    const now = Date.now();
    let released = 0;
    while (
      this.#windowHead < this.#window.length &&
      (now - this.#window[this.#windowHead]!.at > windowMs || this.#window.length - this.#windowHead > maxEvents)
    ) {
      released += this.#dropHead();
    }
    if (released > 0) this.#options.budget?.release(released);
  }

  /** Drop the oldest event of the window (its slot freed at once); returns its bytes. */
  #dropHead(): number {
    const entry = this.#window[this.#windowHead]!;
    this.#windowStart = entry.event.revision;
    (this.#window as (WindowEntry<T> | undefined)[])[this.#windowHead] = undefined;
    this.#windowHead++;
    this.#windowBytes -= entry.bytes;
    if (this.#windowHead > 1024 && this.#windowHead * 2 > this.#window.length) {
      this.#window = this.#window.slice(this.#windowHead);
      this.#windowHead = 0;
    }
    if (this.#windowHead === this.#window.length) {
      this.#window = [];
      this.#windowHead = 0;
    }
    return entry.bytes;
  }

  #clearWindow(): void {
    this.#options.budget?.release(this.#windowBytes);
    this.#windowBytes = 0;
    this.#window = [];
    this.#windowHead = 0;
  }

  /** Watches from before this revision are 410: their history was shed for the memory budget. */
  get shedRevision(): number {
    return this.#shedRevision;
  }

  /**
   * The store compacted history before `revision`: snapshots and replays older
   * than it are no longer served (seed 000: snapshots live until compaction).
   */
  compacted(revision: number): void {
    if (revision > this.#windowStart) this.#windowStart = Math.min(revision, this.#revision);
  }

  /** Resolve once the cache has applied `revision`; reject after `timeoutMs`. */
  waitFor(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.#revision >= revision) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const waiter = {
        revision,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        resolve(false);
      }, timeoutMs);
      this.#waiters.push(waiter);
      this.#watch?.requestProgress();
    });
  }

  /**
   * A consistent read point: the store's current revision, once the cache has
   * caught up with it; FutureRevisionError when it does not within `timeoutMs`.
   */
  async consistentRevision(timeoutMs = 3000): Promise<number> {
    const revision = await this.#options.store.currentRevision();
    if (!(await this.waitFor(revision, timeoutMs))) throw new FutureRevisionError(revision, this.#revision);
    return Math.max(revision, this.#revision);
  }

  get(key: string): Cached<T> | undefined {
    return this.#objects.get(key);
  }

  /** Keys under `prefix` whose latest stored value cannot be decoded, in key order, with the decoder's error. */
  corrupt(prefix: string): { key: string; error: Error }[] {
    const out: { key: string; error: Error }[] = [];
    for (const [key, error] of this.#corrupt) if (key.startsWith(prefix)) out.push({ key, error });
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /**
   * Objects under `prefix` (a sub-prefix of the resource's), in key order, as
   * of `revision` (undefined: now). Returns undefined when `revision` is older
   * than the window: the caller reads the store instead.
   */
  list(prefix: string, revision?: number): Cached<T>[] | undefined {
    if (revision !== undefined && revision < this.#revision) {
      if (revision < this.#windowStart) return undefined;
      return sorted(this.#snapshot(revision, prefix));
    }
    const out: Cached<T>[] = [];
    for (const [key, cached] of this.#objects) if (key.startsWith(prefix)) out.push(cached);
    return sorted(out);
  }

  /** State at an older revision: the current state with newer events undone, newest first. */
  #snapshot(revision: number, prefix: string): Cached<T>[] {
    const state = new Map<string, Cached<T>>();
    for (const [key, cached] of this.#objects) if (key.startsWith(prefix)) state.set(key, cached);
    for (let i = this.#window.length - 1; i >= this.#windowHead; i--) {
      const { event } = this.#window[i]!;
      if (event.revision <= revision) break;
      if (!event.key.startsWith(prefix)) continue;
      if (event.type === "ADDED") state.delete(event.key);
      else state.set(event.key, event.previous!);
    }
    return [...state.values()];
  }

  /** Events after `revision` still in the window, oldest first; undefined if the window no longer reaches back that far. */
  eventsSince(revision: number): CacheEvent<T>[] | undefined {
    if (revision < this.#windowStart) return undefined;
    const out: CacheEvent<T>[] = [];
    for (let i = this.#window.length - 1; i >= this.#windowHead; i--) {
      const { event } = this.#window[i]!;
      if (event.revision <= revision) break;
      out.push(event);
    }
    return out.reverse();
  }

  /** Live events and revision progress; returns the unsubscribe function. */
  subscribe(listener: CacheListener<T>, onProgress?: (revision: number) => void): () => void {
    this.#listeners.add(listener);
    if (onProgress !== undefined) this.#progressListeners.add(onProgress);
    return () => {
      this.#listeners.delete(listener);
      if (onProgress !== undefined) this.#progressListeners.delete(onProgress);
    };
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#progressTimer);
    this.#clearWindow();
    this.#unregister?.();
    this.#watch?.close();
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
  }
}

function sorted<T>(items: Cached<T>[]): Cached<T>[] {
  return items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
