// Values stored in another form than they are used in, as a storage wrapper:
// every value a lookup names a form for is sealed on its way into the backend
// and opened on its way out, in reads, lists, watch events and conflicts
// alike. Above it (the watch cache, the registry, responses that reuse stored
// bytes) everything sees plain values, so lmdb and etcd work the same. Two
// forms use it: encryption at rest (./encryption/) and compressed values on
// etcd (./compressed-values.ts).
//
// A value that does not open (a wrong or missing key) is not an error of the
// whole read: it comes back as an unreadable value (./unreadable-value.ts).

import { ownBytes, sameBytes } from "./bytes.js";
import { guaranteedUpdate } from "./guaranteed-update.js";
import { ConflictError } from "./errors.js";
import { unreadableValue } from "./unreadable-value.js";
import { forEachInSlices } from "./slices.js";
import type { DeleteOptions, DeleteResult, GetOptions, GetResult, GuaranteedUpdateOptions, GuaranteedUpdateResult, KeyValue, ListOptions, ListResult, Storage, StorageStats, UpdateDecision, Watch, WatchEvent, WatchOptions } from "./storage.js";

/** How one key's values are stored. */
export interface StoredForm {
  /** The bytes to store for `plain`; `key` is the storage key. */
  seal(plain: Uint8Array, key: string): Uint8Array;
  /**
   * The plain value of stored bytes, and whether they are in a form a write should replace even when nothing
   * else changes (encryption: sealed with an older key). Throws when they do not open.
   */
  open(stored: Uint8Array, key: string): { value: Uint8Array; stale: boolean };
}

/** Which form a key's values are stored in (undefined: as they are). */
export type StoredFormLookup = (key: string) => StoredForm | undefined;

/** Keys whose last sealed value is remembered at most (a hint: forgotten all at once past it). */
const MAX_LAST_SEALED = 10_000;

/**
 * The plain value of `stored`, carrying the stored bytes too when they are at
 * most half its size (compression; not encryption, whose bytes are as large):
 * the watch cache then keeps a compressed value a quarter the size of its JSON
 * and opens it again on the rare read (docs/storage.md, "Values kept sealed").
 */
function withSealed(stored: KeyValue, value: Uint8Array, form: StoredForm | undefined): KeyValue {
  if (form === undefined || stored.value === value || stored.value.length * 2 > value.length) return { ...stored, value };
  // Kept for long: a view of a larger buffer (zlib's output chunk) gets bytes of its own.
  const bytes = ownBytes(stored.value);
  return { ...stored, value, sealed: { bytes, open: () => form.open(bytes, stored.key).value } };
}

export class TransformedStorage implements Storage {
  readonly backend: string;
  /** Plain bytes of the values this wrapper sealed, so reading back its own writes does not open them again. */
  readonly #sealed = new WeakMap<Uint8Array, Uint8Array>();
  /**
   * The last value sealed per key, until its bytes come back: etcd returns
   * them as a copy (the write's watch event, a read), which would otherwise
   * be opened again (an inflate or a decryption per write). Opening depends
   * on the bytes alone, so bytes equal to those sealed open to the value sealed.
   */
  readonly #lastSealed = new Map<string, Uint8Array>();
  /** Plain values read from bytes another than the first key sealed: an update that changes nothing still rewrites them (rotation). */
  readonly #stale = new WeakSet<Uint8Array>();

  constructor(readonly inner: Storage, readonly lookup: StoredFormLookup) {
    this.backend = inner.backend;
  }

  /** The bytes to store for `plain` in key's form `t` (the caller looked it up: its answer needs the form too). */
  #seal(key: string, plain: Uint8Array, t: StoredForm | undefined): Uint8Array {
    if (t === undefined) return plain;
    const sealed = t.seal(plain, key);
    this.#sealed.set(sealed, plain);
    if (this.#lastSealed.size >= MAX_LAST_SEALED) this.#lastSealed.clear();
    this.#lastSealed.set(key, sealed);
    return sealed;
  }

  /** The plain value of stored bytes this wrapper sealed: the very buffer (lmdb), or a copy of a key's last one (etcd). */
  #ownPlain(kv: KeyValue): Uint8Array | undefined {
    const same = this.#sealed.get(kv.value);
    if (same !== undefined) return same;
    const last = this.#lastSealed.get(kv.key);
    if (last === undefined || !sameBytes(last, kv.value)) return undefined;
    this.#lastSealed.delete(kv.key);
    return this.#sealed.get(last);
  }

  #open(kv: KeyValue): KeyValue;
  #open(kv: KeyValue | undefined): KeyValue | undefined;
  #open(kv: KeyValue | undefined): KeyValue | undefined {
    if (kv === undefined) return undefined;
    const t = this.lookup(kv.key);
    if (t === undefined) return kv;
    let value = this.#ownPlain(kv);
    if (value === undefined) {
      try {
        const opened = t.open(kv.value, kv.key);
        value = opened.value;
        if (opened.stale) this.#stale.add(value);
      } catch (err) {
        value = unreadableValue(`unable to transform key ${JSON.stringify(kv.key)}: ${(err as Error).message}`);
        return { ...kv, value };
      }
    }
    return withSealed(kv, value, t);
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    const r = await this.inner.get(key, options);
    return { ...r, kv: this.#open(r.kv) };
  }

  async list(prefix: string, options?: ListOptions): Promise<ListResult> {
    const r = await this.inner.list(prefix, options);
    const items: KeyValue[] = [];
    await forEachInSlices(r.items, (kv) => items.push(this.#open(kv)!));
    return { ...r, items };
  }

  count(prefix: string): Promise<number> {
    return this.inner.count(prefix);
  }

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    const form = this.lookup(key);
    const kv = await this.inner.create(key, this.#seal(key, value, form));
    return withSealed(kv, value, form);
  }

  async update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue> {
    try {
      const form = this.lookup(key);
      const kv = await this.inner.update(key, this.#seal(key, value, form), expectedModRevision);
      return withSealed(kv, value, form);
    } catch (err) {
      throw this.#openConflict(err, key, expectedModRevision);
    }
  }

  async delete(key: string, options?: DeleteOptions): Promise<DeleteResult> {
    try {
      const r = await this.inner.delete(key, options);
      return { ...r, prevKv: this.#open(r.prevKv) };
    } catch (err) {
      throw this.#openConflict(err, key, options?.expectedModRevision ?? 0);
    }
  }

  /** A failed compare carries the winner's value: opened, as every value above this wrapper (guaranteedUpdate retries from it). */
  #openConflict(err: unknown, key: string, expectedModRevision: number): unknown {
    return err instanceof ConflictError && err.current !== undefined ? new ConflictError(key, expectedModRevision, this.#open(err.current)) : err;
  }

  /** Passed through when the backend has it: a revision says nothing about the plaintext. */
  get latestModRevision(): ((key: string) => Promise<number>) | undefined {
    const inner = this.inner.latestModRevision;
    return inner === undefined ? undefined : (key) => inner.call(this.inner, key);
  }

  /** The backend's: whether its watches prove progress does not depend on how values are stored. */
  get progressProvable(): (() => boolean) | undefined {
    const inner = this.inner.progressProvable;
    return inner === undefined ? undefined : () => inner.call(this.inner);
  }

  guaranteedUpdate(
    key: string,
    tryUpdate: (current: KeyValue | undefined) => UpdateDecision | Promise<UpdateDecision>,
    options?: GuaranteedUpdateOptions,
  ): Promise<GuaranteedUpdateResult> {
    // The shared retry loop over this wrapper's own reads and writes: the suggestion is a plain value, like everything above.
    // As upstream, a value read with an older key is written back even when nothing changed, so rewriting migrates it.
    return guaranteedUpdate(this, key, async (current) => {
      const decision = await tryUpdate(current);
      return decision === undefined && current !== undefined && this.#stale.has(current.value) ? current.value : decision;
    }, options);
  }

  watch(prefix: string, options: WatchOptions): Watch {
    const inner = this.inner.watch(prefix, options);
    const open = (e: WatchEvent): WatchEvent => {
      switch (e.type) {
        case "put":
          return { ...e, kv: this.#open(e.kv), prevKv: this.#open(e.prevKv) };
        case "delete":
          return { ...e, prevKv: this.#open(e.prevKv) };
        default:
          return e;
      }
    };
    return {
      requestProgress: () => inner.requestProgress(),
      close: () => inner.close(),
      async *[Symbol.asyncIterator]() {
        for await (const e of inner) yield open(e);
      },
    };
  }

  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }

  compact(revision: number): Promise<void> {
    return this.inner.compact(revision);
  }

  stats(): Promise<StorageStats> {
    return this.inner.stats();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
