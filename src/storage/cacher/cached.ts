// The cached-object record and the one rule that turns a stored change into
// a watch event. The watch cache applies it to its live state; history replay
// (history.ts) applies it to the state at an older revision, so both give
// clients the same events (seed 000, "Watch behavior").

import type { KeyValue, SealedValue } from "../storage.js";

/** A decoded object as the cache holds it: immutable, shared by every reader. */
export interface Cached<T> {
  readonly key: string;
  readonly object: T;
  readonly revision: number;
  /** Per-encoding memo of serialized bytes, filled by whoever serializes first. */
  readonly encoded: Map<string, Uint8Array>;
  /**
   * The plain bytes as stored, when kept: encoders may reuse them instead of
   * serializing again. May open them anew on every call (a value kept
   * compressed): call once per use.
   */
  storedValue(): Uint8Array | undefined;
  /** The bytes the record holds for its stored value (compressed, when kept so); 0 when it holds none. */
  readonly storedSize: number;
  /** The stored key's createRevision (with a stored value): enough to hand the record back to storage as a KeyValue. */
  readonly createRevision: number;
  /**
   * The record was superseded: drop its decoded object and serializations when
   * it can decode them again from its stored bytes (a later read of `object`
   * does). A superseded version stays referenced only by the watch window,
   * where it is rarely read again: at 30,000 pods the window's decoded old
   * versions were a large part of `orch server`'s heap.
   */
  release(): void;
}

export interface CacheEvent<T> {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly key: string;
  /** The object after the event (for DELETED: its last state). */
  readonly current: Cached<T>;
  /** The object before the event (MODIFIED, DELETED). */
  readonly previous: Cached<T> | undefined;
  readonly revision: number;
}

/**
 * The one constructor of a record. With `stored`, the record carries the
 * bytes it was decoded from; without, it is an object that is not (or not
 * yet) stored: a dry run, a delete's answer, a DELETED event's last state.
 */
export function cachedRecord<T>(record: { key: string; object: T; revision: number; stored?: KeyValue | undefined }, decode?: (kv: KeyValue) => T): Cached<T> {
  return new Record(record.key, record.object, record.revision, record.stored, decode);
}

class Record<T> implements Cached<T> {
  readonly encoded = new Map<string, Uint8Array>();
  readonly createRevision: number;
  #object: T | undefined;
  readonly #decode: ((kv: KeyValue) => T) | undefined;
  /** The stored value: plain, or sealed (compressed) when the backend's form made it at most half the size. */
  readonly #stored: Uint8Array | SealedValue | undefined;

  constructor(
    readonly key: string,
    object: T,
    readonly revision: number,
    kv: KeyValue | undefined,
    decode: ((kv: KeyValue) => T) | undefined,
  ) {
    this.#object = object;
    this.#stored = kv?.sealed ?? kv?.value;
    this.createRevision = kv?.createRevision ?? 0;
    this.#decode = kv === undefined ? undefined : decode;
  }

  storedValue(): Uint8Array | undefined {
    const stored = this.#stored;
    return stored === undefined || stored instanceof Uint8Array ? stored : stored.open();
  }

  get storedSize(): number {
    const stored = this.#stored;
    return stored === undefined ? 0 : stored instanceof Uint8Array ? stored.length : stored.bytes.length;
  }

  get object(): T {
    // Undefined only after release(), which requires stored bytes and a decoder: they decoded once already.
    this.#object ??= this.#decode!({ key: this.key, value: this.storedValue()!, createRevision: this.createRevision, modRevision: this.revision });
    return this.#object;
  }

  release(): void {
    if (this.#decode === undefined) return;
    this.#object = undefined;
    this.encoded.clear();
  }
}

/** A stored key-value as a record; throws what `decode` throws. */
export function decodeRecord<T>(kv: KeyValue, decode: (kv: KeyValue) => T): Cached<T> {
  return cachedRecord({ key: kv.key, object: decode(kv), revision: kv.modRevision, stored: kv }, decode);
}

/** The record as the KeyValue it was read from, or undefined when it does not carry its bytes. */
export function storedKeyValue(cached: Cached<unknown>): KeyValue | undefined {
  const value = cached.storedValue();
  if (value === undefined) return undefined;
  return { key: cached.key, value, createRevision: cached.createRevision, modRevision: cached.revision };
}

/** The object stamped with another revision: a DELETED event carries the last state at the delete's revision. */
export type WithRevision<T> = (object: T, revision: number) => T;

/**
 * Apply one change to `state` (key → record): `current` is the key's new
 * record, undefined for a delete (or a value that could not be decoded).
 * Returns the event clients see, or undefined when nothing visible changed
 * (a delete of a key the state does not hold).
 */
export function applyChange<T>(
  state: Map<string, Cached<T>>,
  change: { key: string; current: Cached<T> | undefined; revision: number },
  withRevision: WithRevision<T> | undefined,
): CacheEvent<T> | undefined {
  const { key, current, revision } = change;
  const previous = state.get(key);
  if (current !== undefined) {
    state.set(key, current);
    return { type: previous === undefined ? "ADDED" : "MODIFIED", key, current, previous, revision };
  }
  if (previous === undefined) return undefined;
  state.delete(key);
  const last = withRevision === undefined ? previous : cachedRecord({ key, object: withRevision(previous.object, revision), revision });
  return { type: "DELETED", key, current: last, previous, revision };
}
