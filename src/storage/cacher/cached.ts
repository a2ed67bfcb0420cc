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

/**
 * Decoded objects: the records of a thread keep the decoded objects of their
 * stored values within a budget of bytes, those decoded last; above it, the
 * record decoded first lets its object go and decodes it again from its bytes
 * when next read. What is read is mostly what was written a moment ago (a
 * write's answer, its watch event, the next write of the same object), and
 * the rest is served from the bytes (a JSON get, list or watch event). At
 * 30,000 pods every pod's decoded object (about 1.7 times its JSON) was the
 * largest part of the API server's heap, held for reads that rarely came.
 */
export class DecodedObjects {
  /** Entries in the order decoded; [head, length) are live, older slots are emptied. */
  #entries: ({ record: Record<unknown>; object: unknown; cost: number } | undefined)[] = [];
  #head = 0;
  #bytes = 0;
  #decodedAgain = 0;
  #limitBytes: number;

  constructor(limitBytes: number) {
    this.#limitBytes = limitBytes;
  }

  get limitBytes(): number {
    return this.#limitBytes;
  }

  /** A lower limit lets the oldest objects go at once. */
  set limitBytes(bytes: number) {
    this.#limitBytes = bytes;
    this.#shed();
  }

  /** What the live entries are charged. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Objects decoded again after their record let them go. */
  get decodedAgain(): number {
    return this.#decodedAgain;
  }

  /** `record` holds `object`, decoded from its `plainSize` bytes (`again`: a second time). */
  admit(record: Record<unknown>, object: unknown, plainSize: number, again: boolean): void {
    if (again) this.#decodedAgain++;
    const cost = decodedCost(plainSize);
    this.#entries.push({ record, object, cost });
    this.#bytes += cost;
    this.#shed();
  }

  #shed(): void {
    while (this.#bytes > this.#limitBytes && this.#head < this.#entries.length) {
      const oldest = this.#entries[this.#head]!;
      this.#entries[this.#head++] = undefined;
      this.#bytes -= oldest.cost;
      oldest.record.forget(oldest.object);
    }
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}

/** A decoded object's heap bytes for its JSON's: 5,760 for a 3,328-byte pod (V8, Node 20). */
function decodedCost(plainSize: number): number {
  return 2 * plainSize;
}

/**
 * The thread's budget: 32 MiB is some 5,000 decoded pods, the writes of about ten
 * seconds at 30,000 pods (bench/density), and more than small clusters hold at all.
 */
export const decodedObjects = new DecodedObjects(32 << 20);

class Record<T> implements Cached<T> {
  readonly encoded = new Map<string, Uint8Array>();
  readonly createRevision: number;
  #object: T | undefined;
  readonly #decode: ((kv: KeyValue) => T) | undefined;
  /** The stored value: plain, or sealed (compressed) when the backend's form made it at most half the size. */
  readonly #stored: Uint8Array | SealedValue | undefined;
  /** The stored value's plain size (what its decoded object is charged for). */
  readonly #plainSize: number;

  constructor(
    readonly key: string,
    object: T,
    readonly revision: number,
    kv: KeyValue | undefined,
    decode: ((kv: KeyValue) => T) | undefined,
  ) {
    this.#object = object;
    this.#stored = kv?.sealed ?? kv?.value;
    this.#plainSize = kv?.value.length ?? 0;
    this.createRevision = kv?.createRevision ?? 0;
    this.#decode = kv === undefined ? undefined : decode;
    if (this.#decode !== undefined) decodedObjects.admit(this as Record<unknown>, object, this.#plainSize, false);
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
    if (this.#object !== undefined) return this.#object;
    // Undefined only after release() or forget(), which require stored bytes and a decoder: they decoded once already.
    const object = this.#decode!({ key: this.key, value: this.storedValue()!, createRevision: this.createRevision, modRevision: this.revision });
    this.#object = object;
    decodedObjects.admit(this as Record<unknown>, object, this.#plainSize, true);
    return object;
  }

  release(): void {
    if (this.#decode === undefined) return;
    this.#object = undefined;
    this.encoded.clear();
  }

  /** The budget let `object` go (DecodedObjects): drop it unless the record holds another decode by now. */
  forget(object: unknown): void {
    if (this.#object === object) this.#object = undefined;
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
