// The storage interface: a revisioned key-value store with etcd semantics.
// Every byte orch persists goes through this interface; backends (lmdb, etcd)
// implement it and pass the shared conformance suite in ./testing/.
//
// Contract (issue 2, seed 000 "Resource version semantics"):
// - one global revision, incremented by every write (create, update, delete);
// - each key carries createRevision and modRevision; resourceVersion = revision;
// - watch replays history after a revision, then streams live events in
//   strictly increasing revision order, with the previous value on updates
//   and deletes;
// - reads or watches older than the compacted revision throw CompactedError.

/** Largest value a backend accepts (etcd's default request limit is 1.5 MiB). */
export const MAX_VALUE_BYTES = 1.5 * 1024 * 1024;

export interface KeyValue {
  readonly key: string;
  readonly value: Uint8Array;
  /** Revision of the write that created this key (since its last deletion). */
  readonly createRevision: number;
  /** Revision of the last write to this key. */
  readonly modRevision: number;
  /**
   * The value as the backend holds it, when its stored form (compression) is
   * much smaller than `value`: a reader that keeps values for long (the watch
   * cache) keeps these bytes instead and opens them again when it needs them.
   */
  readonly sealed?: SealedValue | undefined;
}

/** Stored bytes and the way back to the plain value they seal. */
export interface SealedValue {
  readonly bytes: Uint8Array;
  /** The plain value again (the same bytes as the KeyValue's `value`). */
  open(): Uint8Array;
}

export interface GetOptions {
  /** Read as of this revision (0/undefined: the latest). */
  revision?: number;
}

export interface GetResult {
  /** Undefined when the key does not exist at the revision read. */
  kv: KeyValue | undefined;
  /** The revision the read was served at. */
  revision: number;
}

export interface ListOptions {
  /** Read as of this revision (0/undefined: the latest). */
  revision?: number;
  /** Maximum number of items to return (0/undefined: all). */
  limit?: number;
  /** First key to return (inclusive); must lie under the prefix. */
  startKey?: string;
}

export interface ListResult {
  items: KeyValue[];
  /** The revision the read was served at; pass it back to read the next page consistently. */
  revision: number;
  /** True when keys remain after the last returned item. */
  more: boolean;
  /** How many keys under the prefix (from startKey on) were not returned. */
  remaining: number;
}

export interface DeleteOptions {
  /** Delete only if the key's modRevision still equals this value (else ConflictError). */
  expectedModRevision?: number;
}

export interface DeleteResult {
  /** The value that was deleted. */
  prevKv: KeyValue;
  /** The revision of the delete. */
  revision: number;
}

export type WatchEvent =
  | { type: "put"; kv: KeyValue; prevKv: KeyValue | undefined; revision: number }
  | { type: "delete"; key: string; prevKv: KeyValue; revision: number }
  /**
   * Progress notification: every event up to `revision` has been delivered to
   * this watcher. Sent in answer to Watch.requestProgress().
   */
  | { type: "progress"; revision: number };

export interface WatchOptions {
  /** Deliver events with revision > fromRevision (0: only new events). */
  fromRevision: number;
  /** Abort ends the iteration without error. */
  signal?: AbortSignal;
  /**
   * Whether events must carry the previous value (default true). With false a backend may leave a put's prevKv
   * undefined and a delete's empty: etcd then neither reads nor sends it, which halves a watch's bytes. The
   * watch caches keep the previous object themselves and ask for false.
   */
  prevKv?: boolean;
}

/**
 * A watch is an async iterator of events. Iteration throws CompactedError
 * when fromRevision is older than the compacted revision (or history was
 * compacted before the watcher caught up), and StorageUnavailableError when
 * the backend cannot continue the stream.
 */
export interface Watch extends AsyncIterable<WatchEvent> {
  /** Ask for a `progress` event once everything committed so far was delivered. */
  requestProgress(): void;
  /** End the watch; a pending iteration finishes without error. */
  close(): void;
}

/**
 * What guaranteedUpdate's callback returns: new bytes to store, `undefined`
 * for "no change" (nothing is written, no revision is used), or DELETE.
 */
export const DELETE = Symbol("delete");
export type UpdateDecision = Uint8Array | undefined | typeof DELETE;

export interface GuaranteedUpdateOptions {
  /** When false (default) a missing key throws NotFoundError without calling tryUpdate. */
  allowCreate?: boolean;
  /** Retry budget on conflicts (default 100). */
  maxRetries?: number;
  /**
   * The caller's idea of the current value (the watch cache's copy; upstream's
   * cachedExistingObject): the first attempt starts from it instead of reading
   * the key. It may be stale: a failed compare-and-swap retries from the
   * winner's value, and a decision that writes nothing (tryUpdate threw or
   * returned undefined) is taken again from a fresh read unless that read
   * shows the suggestion was current.
   */
  suggestion?: KeyValue;
}

export interface GuaranteedUpdateResult {
  /** The stored key-value after the update; undefined after a delete or when nothing existed. */
  kv: KeyValue | undefined;
  /** False when tryUpdate returned `undefined` (no write happened). */
  changed: boolean;
  /** The revision of a delete this call made (a write's is kv.modRevision). */
  deleteRevision?: number;
}

export interface StorageStats {
  /** Bytes the store occupies on disk (for etcd: the database size it reports). */
  sizeBytes: number;
  /** Number of live keys. */
  keyCount: number;
  /** The current revision. */
  revision: number;
  /** The revision history was compacted at (0: never). */
  compactedRevision: number;
}

export interface Storage {
  /** Short backend name: "lmdb" or "etcd". */
  readonly backend: string;

  get(key: string, options?: GetOptions): Promise<GetResult>;
  list(prefix: string, options?: ListOptions): Promise<ListResult>;
  /** Number of live keys under a prefix. */
  count(prefix: string): Promise<number>;

  /** Create a key; throws AlreadyExistsError if it exists. */
  create(key: string, value: Uint8Array): Promise<KeyValue>;
  /** Compare-and-swap on modRevision; throws ConflictError (carrying the current kv) or NotFoundError. */
  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue>;
  /** Delete a key; throws NotFoundError, or ConflictError when the precondition fails. */
  delete(key: string, options?: DeleteOptions): Promise<DeleteResult>;

  /**
   * Read-modify-write with retries on conflict. tryUpdate receives the current
   * value (undefined only when allowCreate is set and the key is absent) and
   * may throw to abort; it may be called several times.
   */
  guaranteedUpdate(
    key: string,
    tryUpdate: (current: KeyValue | undefined) => UpdateDecision | Promise<UpdateDecision>,
    options?: GuaranteedUpdateOptions,
  ): Promise<GuaranteedUpdateResult>;

  watch(prefix: string, options: WatchOptions): Watch;

  /** The latest committed revision (a consistent read of the store's progress). */
  currentRevision(): Promise<number>;
  /**
   * Optional: the key's modRevision at the latest revision (0 when absent), a
   * consistent read without the value. The watch cache then answers a
   * consistent GET when it holds that very version (no value read, nothing
   * decoded). Both backends have it.
   */
  latestModRevision?(key: string): Promise<number>;
  /**
   * Optional: false when a watch of this store learns how far it has caught up
   * only from the events themselves (etcd before 3.4.31 / 3.5.13 may answer a
   * progress request ahead of events still on their way). The watch cache then
   * answers consistent lists from the store, as upstream's API server does
   * without consistent reads from its cache. Absent: true.
   */
  progressProvable?(): boolean;
  /** Drop history before `revision`; reads and watches older than it then throw CompactedError. */
  compact(revision: number): Promise<void>;
  stats(): Promise<StorageStats>;
  close(): Promise<void>;
}

/** Smallest key greater than every key that starts with `prefix`. */
export function prefixEnd(prefix: string): string {
  // Keys are compared as UTF-8 bytes; bumping the last UTF-16 unit matches for ASCII keys, which is all orch writes.
  if (prefix === "") return "\u{10FFFF}";
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
