// An informer keeps a local cache (namespace/name → object) in step with the server: a paged list, then a
// watch with bookmarks from the list's version, resumed where it left off, a fresh list on 410 Gone
// (seed 000, "Watch behavior", "Chunked lists"). Handlers get objects; controllers queue keys. The cache is
// indexed (indexer.ts); a resync period replays the cache to handlers as updates, without asking the server.

import type { MetricsRegistry } from "../component/metrics/index.js";
import { isApiError, type ApiObject } from "../machinery/index.js";
import { Indexer, type Indexers } from "./indexer.js";
import { informerMetrics, type InformerMetrics } from "./metrics.js";
import type { LabelSelectorInput, ResourceRef, RestClient, Watch } from "./rest.js";
import { sleep } from "../machinery/until.js";

export interface EventHandlers<T extends ApiObject = ApiObject> {
  onAdd?(obj: T): void;
  /** Called when the resourceVersion changed, and on every resync with oldObj === newObj. */
  onUpdate?(oldObj: T, newObj: T): void;
  /** `obj` is the last state seen; after a relist it may be older than the deletion. */
  onDelete?(obj: T): void;
}

export interface InformerOptions {
  client: RestClient;
  resource: ResourceRef;
  /** Watch one namespace only. */
  namespace?: string;
  labelSelector?: LabelSelectorInput;
  fieldSelector?: LabelSelectorInput;
  /** Items per list page (default 500); 0 lists in one request. */
  pageSize?: number;
  /** Cache PartialObjectMetadata instead of whole objects (the garbage collector needs only metadata). */
  metadataOnly?: boolean;
  /** First retry delay after a failure (default 800 ms); doubles up to maxBackoffMs (default 30 s), with jitter. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Upper bound of the random server-side watch timeout (default 5–10 min, as upstream). */
  watchTimeoutSeconds?: number;
  /**
   * A watch that brings no event and no bookmark for this long is presumed
   * stalled (a half-open connection, a wedged proxy) and restarted from the
   * last version seen (default 3 min: three of the server's one-minute bookmarks).
   */
  stallTimeoutMs?: number;
  /**
   * Every this many ms while running, each cached object is handed to every handler's onUpdate again
   * with old === new (upstream's resync: it replays the cache, it does not list). Handlers may set their
   * own period; 0 or absent: no resync.
   */
  resyncPeriodMs?: number;
  log?: (line: string) => void;
  /** The component's registry: informer_* metrics labelled with the resource. */
  metrics?: MetricsRegistry;
  /**
   * Applied to every object before it is cached and handed to handlers
   * (client-go's TransformFunc); may change the object it is given, which
   * nothing else holds. `dropManagedFields` is the one components use.
   */
  transform?: (obj: ApiObject) => ApiObject;
}

/**
 * Drops metadata.managedFields: no controller, scheduler or proxy reads them,
 * and they are a third to a half of a pod's bytes once several managers have
 * written it (upstream's components trim them from their caches the same way).
 * With 30,000 pods `orch server`'s informers held 340 MB of decoded objects.
 */
export function dropManagedFields(obj: ApiObject): ApiObject {
  if (obj.metadata?.managedFields !== undefined) delete obj.metadata.managedFields;
  return obj;
}

export interface HandlerOptions {
  /** This handler's resync period, instead of the informer's resyncPeriodMs (0: none). */
  resyncPeriodMs?: number;
}

/** "namespace/name", or "name" for cluster-scoped objects: the key controllers queue. */
export function keyOf(obj: { metadata?: { namespace?: string; name?: string } }): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ""}` : m.name ?? "";
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf("/");
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** A watch that lived this long (or nearly its whole timeout) was healthy: the next reconnect need not wait. */
const HEALTHY_WATCH_MS = 10_000;

export class Informer<T extends ApiObject = ApiObject> {
  readonly resource: ResourceRef;
  readonly #options: InformerOptions;
  readonly #cache = new Indexer<T>({ onIndexError: (index, key, err) => this.#log(`index ${index} failed for ${key}: ${describe(err)}`) });
  /** Handlers → their resync period and, while running, its timer. */
  readonly #handlers = new Map<EventHandlers<T>, { resyncMs: number; timer?: ReturnType<typeof setInterval> }>();
  #signal: AbortSignal | undefined;
  #synced = false;
  #syncWaiters: (() => void)[] = [];
  #lastResourceVersion = "";
  #running: Promise<void> | undefined;
  /** Failures in a row; the wait before the next attempt grows with them. */
  #failures = 0;
  /** Whether the next 410 may relist without waiting. */
  #quickRelist = true;
  #lists = 0;
  #stalls = 0;
  readonly #metrics: { m: InformerMetrics; labels: { resource: string } } | undefined;

  constructor(options: InformerOptions) {
    this.#options = options;
    this.resource = options.resource;
    if (options.metrics !== undefined) {
      const r = options.resource;
      const labels = { resource: r.group ? `${r.resource}.${r.group}` : r.resource };
      const m = informerMetrics(options.metrics);
      m.storeItems.addSource(() => [{ labels, value: this.#cache.size }]);
      this.#metrics = { m, labels };
    }
  }

  /** True once the first list has been loaded into the cache. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** Resolves when synced; false when the signal fired first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.#synced) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => resolve(false);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#syncWaiters.push(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve(true);
      });
    });
  }

  /** The resourceVersion of the newest event or list seen. */
  get lastSyncResourceVersion(): string {
    return this.#lastResourceVersion;
  }

  /** How many watches were restarted because they went silent. */
  get stallCount(): number {
    return this.#stalls;
  }

  /** How many full lists have been made (the first, and one per relist). */
  get listCount(): number {
    return this.#lists;
  }

  get(key: string): T | undefined {
    return this.#cache.get(key);
  }

  /**
   * Adds named indexes over the cache, kept in step with every event and relist. Adding the same
   * function under the same name again is a no-op (shared informers serve several controllers); a
   * different function under a taken name throws. "namespace" (NAMESPACE_INDEX) is built in.
   */
  addIndexers(indexers: Indexers<T>): void {
    this.#cache.addIndexers(indexers);
  }

  /** The cached objects the named index files under `value`; throws for an unknown index. */
  byIndex(name: string, value: string): T[] {
    return this.#cache.byIndex(name, value);
  }

  /** The keys of the cached objects the named index files under `value`. */
  indexKeys(name: string, value: string): string[] {
    return this.#cache.indexKeys(name, value);
  }

  list(): T[] {
    return [...this.#cache.values()];
  }

  keys(): string[] {
    return [...this.#cache.keys()];
  }

  /**
   * Adds handlers; once synced, the new handlers get an add for every cached
   * object first, so a late handler sees the same world. Returns a remover.
   */
  addEventHandler(handlers: EventHandlers<T>, options: HandlerOptions = {}): () => void {
    const resyncMs = options.resyncPeriodMs ?? this.#options.resyncPeriodMs ?? 0;
    // Node's timers take at most 2^31-1 ms (about 24.8 days); a longer delay would fire after 1 ms.
    if (!Number.isFinite(resyncMs) || resyncMs < 0 || resyncMs > MAX_TIMER_MS) throw new Error(`resyncPeriodMs must be a number of ms from 0 to ${MAX_TIMER_MS}, not ${resyncMs}`);
    if (this.#handlers.has(handlers)) return () => this.#removeHandler(handlers);
    this.#handlers.set(handlers, { resyncMs });
    if (this.#signal !== undefined && !this.#signal.aborted) this.#startResync(handlers);
    if (this.#synced) for (const obj of this.#cache.values()) this.#call(() => handlers.onAdd?.(obj));
    return () => this.#removeHandler(handlers);
  }

  /** Starts list-and-watch until the signal fires; the promise settles when it has stopped. Idempotent. */
  run(signal: AbortSignal): Promise<void> {
    if (this.#running === undefined) {
      this.#signal = signal;
      if (!signal.aborted) {
        for (const handlers of this.#handlers.keys()) this.#startResync(handlers);
        signal.addEventListener("abort", () => this.#stopResyncs(), { once: true });
      }
      this.#running = this.#loop(signal);
    }
    return this.#running;
  }

  #removeHandler(handlers: EventHandlers<T>): void {
    clearInterval(this.#handlers.get(handlers)?.timer);
    this.#handlers.delete(handlers);
  }

  /**
   * One timer per handler with a period: each handler is resynced on its own schedule (upstream lets
   * handlers of one shared informer ask for different periods). Nothing is replayed before the first
   * list, as upstream: there is no cache to replay yet.
   */
  #startResync(handlers: EventHandlers<T>): void {
    const entry = this.#handlers.get(handlers);
    if (entry === undefined || entry.resyncMs === 0 || entry.timer !== undefined) return;
    entry.timer = setInterval(() => {
      if (!this.#synced || handlers.onUpdate === undefined) return;
      for (const obj of this.#cache.values()) this.#call(() => handlers.onUpdate!(obj, obj));
    }, entry.resyncMs);
    // The watch keeps a running informer's process alive; a resync timer alone must not.
    entry.timer.unref();
  }

  #stopResyncs(): void {
    for (const entry of this.#handlers.values()) {
      clearInterval(entry.timer);
      delete entry.timer;
    }
  }

  async #loop(signal: AbortSignal): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      if (this.#failures > 0) await sleep(this.#backoffDelay(), signal);
      if (signal.aborted) break;
      if (needList) {
        try {
          await this.#relist(signal);
          needList = false;
        } catch (err) {
          if (signal.aborted) break;
          this.#log(`list failed: ${describe(err)}`);
          this.#failures++;
          continue;
        }
      }
      const started = Date.now();
      // Spread reconnects: every informer of every process does not come back at the same moment.
      const maxTimeout = this.#options.watchTimeoutSeconds ?? 600;
      const timeoutSeconds = Math.max(1, Math.round(maxTimeout / 2 + Math.random() * (maxTimeout / 2)));
      let gone = false;
      try {
        await this.#watch(signal, timeoutSeconds);
        // The server ended the watch (its timeout): resume from the last version seen (seed 000, "Watch behavior" 3).
      } catch (err) {
        if (signal.aborted) break;
        if (isGone(err)) {
          // History no longer covers our version: start over from a fresh list (seed 000, "Watch behavior" 2).
          this.#log(`watch from ${this.#lastResourceVersion} expired (${describe(err)}); listing again`);
          needList = true;
          gone = true;
        } else {
          this.#log(`watch failed: ${describe(err)}`);
        }
      }
      // Only a watch that stayed up a while resets the backoff: one that ends at once, again and
      // again (a server restarting, a 410 right after a list), must not turn into a request flood.
      if (Date.now() - started >= Math.min(HEALTHY_WATCH_MS, timeoutSeconds * 900)) {
        this.#failures = 0;
        this.#quickRelist = true;
      } else if (gone && this.#failures === 0 && this.#quickRelist) {
        this.#quickRelist = false; // the first 410 relists at once; a second one in a row waits
      } else {
        this.#failures++;
      }
    }
  }

  /**
   * A paged list; replaces the cache and tells handlers what changed. As
   * client-go's reflector, the list is served from the API server's watch
   * cache: the first at any version ("0"), later ones not older than the last
   * version seen; only when the server cannot serve that version (410) is it
   * a consistent list. A consistent list of 30,000 pods paged out of etcd
   * took so long that the watch cache's window had moved past its version by
   * the time the watch started: 410, list again, for ever (seen with the node
   * simulator against upstream's kube-apiserver in bench/density).
   */
  async #relist(signal: AbortSignal): Promise<void> {
    const o = this.#options;
    const pageSize = o.pageSize ?? 500;
    const items: T[] = [];
    const started = performance.now();
    let resourceVersion = "";
    let token: string | undefined;
    let from = this.#lastResourceVersion === "" ? "0" : this.#lastResourceVersion;
    // Not do-while: its `continue` would test the condition and end the list instead of starting it over.
    for (;;) {
      let page;
      try {
        page = await o.client.list<T>(this.resource, {
          ...this.#scope(),
          limit: pageSize,
          ...(token !== undefined ? { continue: token } : from !== "" ? { resourceVersion: from, ...(from !== "0" ? { resourceVersionMatch: "NotOlderThan" as const } : {}) } : {}),
          ...(o.metadataOnly ? { metadataOnly: true } : {}),
          signal,
        });
      } catch (err) {
        if (token !== undefined && isGone(err)) {
          // The continue token outlived its version (seed 000, "Chunked lists" 3): start the list over.
          items.length = 0;
          token = undefined;
          continue;
        }
        if (token === undefined && from !== "" && (isGone(err) || isTooLarge(err))) {
          // The version asked for is gone from the server's history, or is newer than the server
          // has (a server started afresh): a consistent list, as client-go after either answer.
          from = "";
          continue;
        }
        throw err;
      }
      if (token === undefined) resourceVersion = page.metadata.resourceVersion ?? "";
      for (const item of page.items) items.push(item);
      token = page.metadata.continue || undefined;
      if (token === undefined) break;
    }
    this.#lists++;
    if (this.#metrics !== undefined) {
      this.#metrics.m.lists.inc(this.#metrics.labels);
      this.#metrics.m.listDuration.observe(this.#metrics.labels, (performance.now() - started) / 1000);
    }
    this.#replace(items, resourceVersion);
  }

  #replace(items: T[], resourceVersion: string): void {
    const seen = new Set<string>();
    for (const obj of items) {
      const key = keyOf(obj);
      seen.add(key);
      this.#store(key, obj);
    }
    for (const [key, old] of [...this.#cache.entries()]) {
      if (seen.has(key)) continue;
      this.#cache.delete(key);
      this.#emit((h) => h.onDelete?.(old));
    }
    this.#lastResourceVersion = resourceVersion;
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#syncWaiters.splice(0)) resolve();
    }
  }

  async #watch(signal: AbortSignal, timeoutSeconds: number): Promise<void> {
    const o = this.#options;
    let watch: Watch<T> | undefined;
    // No silent stalls: every event or bookmark rearms the timer; when it fires, the watch is dropped and resumed.
    const stallMs = o.stallTimeoutMs ?? 180_000;
    const stall = new AbortController();
    const onStall = () => {
      this.#stalls++;
      this.#log(`watch from ${this.#lastResourceVersion} brought no event or bookmark for ${stallMs} ms; restarting it`);
      watch?.close();
      stall.abort();
    };
    // Unref'd: a pending stall check must not keep a process alive that has nothing else to do.
    let timer = setTimeout(onStall, stallMs).unref();
    const rearm = () => {
      clearTimeout(timer);
      timer = setTimeout(onStall, stallMs).unref();
    };
    try {
      watch = await o.client.watch<T>(this.resource, {
        ...this.#scope(),
        resourceVersion: this.#lastResourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
        ...(o.metadataOnly ? { metadataOnly: true } : {}),
        signal: AbortSignal.any([signal, stall.signal]),
      });
      for await (const event of watch) {
        rearm();
        if (this.#metrics !== undefined) this.#metrics.m.watchEvents.inc({ ...this.#metrics.labels, type: event.type });
        const rv = event.object?.metadata?.resourceVersion;
        if (event.type === "BOOKMARK") {
          if (rv) this.#lastResourceVersion = rv;
          continue;
        }
        const key = keyOf(event.object);
        if (event.type === "DELETED") {
          const old = this.#cache.delete(key);
          const last = event.object === undefined || this.#options.transform === undefined ? event.object : (this.#options.transform(event.object) as T);
          this.#emit((h) => h.onDelete?.(last ?? old));
        } else {
          this.#store(key, event.object);
        }
        if (rv) this.#lastResourceVersion = rv;
      }
    } catch (err) {
      // A stalled watch is not a failure: it is resumed like one the server ended.
      if (!(stall.signal.aborted && !signal.aborted)) throw err;
    } finally {
      clearTimeout(timer);
      watch?.close();
    }
  }

  #store(key: string, received: T): void {
    const obj = this.#options.transform === undefined ? received : (this.#options.transform(received) as T);
    const old = this.#cache.set(key, obj);
    if (old === undefined) this.#emit((h) => h.onAdd?.(obj));
    else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.#emit((h) => h.onUpdate?.(old, obj));
  }

  #scope(): { namespace?: string; labelSelector?: LabelSelectorInput; fieldSelector?: LabelSelectorInput } {
    const o = this.#options;
    return {
      ...(o.namespace !== undefined ? { namespace: o.namespace } : {}),
      ...(o.labelSelector !== undefined ? { labelSelector: o.labelSelector } : {}),
      ...(o.fieldSelector !== undefined ? { fieldSelector: o.fieldSelector } : {}),
    };
  }

  #emit(call: (h: EventHandlers<T>) => void): void {
    for (const h of this.#handlers.keys()) this.#call(() => call(h));
  }

  /** A failing handler must not stop the informer (or the other handlers). */
  #call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#log(`event handler failed: ${describe(err)}`);
    }
  }

  #backoffDelay(): number {
    const o = this.#options;
    const max = o.maxBackoffMs ?? 30_000;
    const base = Math.min(max, (o.initialBackoffMs ?? 800) * 2 ** Math.min(this.#failures - 1, 30));
    // Jitter: up to +50%, so informers that failed together do not retry together.
    return Math.min(max, Math.round(base * (1 + Math.random() * 0.5)));
  }

  #log(message: string): void {
    const r = this.resource;
    this.#options.log?.(`informer ${r.resource}${r.group ? `.${r.group}` : ""}: ${message}`);
  }
}

function isGone(err: unknown): boolean {
  return isApiError(err) && err.code === 410;
}

/** The 504 of a version the server has not reached (seed 000, "Watch behavior" 6). */
function isTooLarge(err: unknown): boolean {
  return isApiError(err) && err.code === 504 && (err.status.details?.causes ?? []).some((c) => c.reason === "ResourceVersionTooLarge");
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

