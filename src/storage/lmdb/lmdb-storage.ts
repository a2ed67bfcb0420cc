// The embedded storage backend: an etcd-like revisioned store in one lmdb file.
//
// Layout (four named databases in DIR/store.mdb):
//   log   revision → { k: key, v?: value, c: createRevision, p: previous modRevision }
//         one entry per write; a delete has no `v`. It is the only copy of values,
//         and the history that watches replay and past reads walk.
//   live  key → { c: createRevision, m: modRevision }          (current keys)
//   tomb  key → { m: delete revision }                           (deleted, until compacted)
//   meta  "format" | "revision" | "compacted" | "swept" | "dictionary"
// Format 2 compresses log entries past 200 bytes with LZ4 primed with the
// store's own dictionary (kept in meta; dictionary.ts says why); format 1
// stores, written before, are read and written uncompressed as they were.
// A past read walks a key's `p` chain back from its newest version. Compaction
// drops versions superseded at or before the compacted revision, in small
// batches so writers never wait long (kine's users' worst reports).
//
// Writes go through lmdb-js async transactions: callbacks issued in the same
// event turn share one commit, and a write is acknowledged (and published to
// watchers) only after `flushed`, i.e. once durable.

import { chmodSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { crc32 } from "node:zlib";
import { open, type Database, type RootDatabase, type Transaction } from "lmdb";
import {
  AlreadyExistsError,
  CompactedError,
  ConflictError,
  FutureRevisionError,
  NotFoundError,
  StorageError,
  TooLargeError,
} from "../errors.js";
import { guaranteedUpdate } from "../guaranteed-update.js";
import { unreadableValue } from "../unreadable-value.js";
import {
  MAX_VALUE_BYTES,
  prefixEnd,
  type DeleteOptions,
  type DeleteResult,
  type GetOptions,
  type GetResult,
  type GuaranteedUpdateOptions,
  type GuaranteedUpdateResult,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Storage,
  type StorageStats,
  type UpdateDecision,
  type Watch,
  type WatchEvent,
  type WatchOptions,
} from "../storage.js";
import { EventQueueWatch } from "./event-queue-watch.js";
import { checkStoreFile, openStoreFile } from "./store-file.js";
import { DiskSpace, ownLmdbCommitRejections } from "./disk-space.js";
import { STORE_DICTIONARY } from "../dictionary.js";

interface LogEntry {
  k: string;
  v?: Uint8Array;
  c: number;
  p: number;
  /** CRC-32 of `v` (entries written before checksums have none): a damaged value reads as corrupt, not as garbage. */
  s?: number;
}
interface LiveEntry {
  c: number;
  m: number;
}
interface TombEntry {
  m: number;
}

/** What a write callback decided inside the transaction; errors are returned, not thrown, so one failure never aborts a shared batch. */
type WriteOutcome<T> = { ok: true; value: T; revision: number } | { ok: false; error: StorageError };

export interface LmdbStorageOptions {
  /** Folder for store.mdb; created if missing. */
  dataDir: string;
  /** Log entries handled per compaction transaction (default 1000). */
  compactionBatch?: number;
  /** Where the store's notices go (a full disk, space back); default stderr. */
  log?: (line: string) => void;
}

/** Values as given. */
const FORMAT_PLAIN = "orch-storage/1";
/** Log entries LZ4-compressed with the dictionary in meta: what new stores are. */
const FORMAT = "orch-storage/2";
/** Entries this small are not worth compressing (a lease renewal is about 400 bytes and halves). */
const COMPRESSION_THRESHOLD = 200;

export class LmdbStorage implements Storage {
  readonly backend = "lmdb";
  readonly path: string;
  readonly #root: RootDatabase;
  readonly #log: Database<LogEntry, number>;
  readonly #live: Database<LiveEntry, string>;
  readonly #tomb: Database<TombEntry, string>;
  readonly #meta: Database<string | number | Uint8Array, string>;
  readonly #compactionBatch: number;
  /** Revision handed to the last write callback (may be ahead of what is durable). */
  #assigned: number;
  /** Highest revision published to watchers (durable). */
  #published: number;
  /** Events assigned but not yet durable, in revision order. */
  #pending: WatchEvent[] = [];
  readonly #watchers = new Set<EventQueueWatch>();
  #compaction: Promise<void> = Promise.resolve();
  #closed = false;
  readonly #space: DiskSpace;
  readonly #notice: (line: string) => void;
  /** Revisions whose damage was logged already. */
  readonly #damaged = new Set<number>();

  /** `dictionary`: the store's compression dictionary (format 2), undefined for a format 1 store. */
  private constructor(root: RootDatabase, path: string, options: LmdbStorageOptions, dictionary: Uint8Array | undefined) {
    this.path = path;
    this.#notice = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    this.#space = new DiskSpace(options.dataDir, { log: this.#notice });
    this.#space.checkAtOpen();
    this.#root = root;
    const compression = dictionary === undefined ? false : { threshold: COMPRESSION_THRESHOLD, dictionary: Buffer.from(dictionary) };
    this.#log = root.openDB<LogEntry, number>("log", { keyEncoding: "ordered-binary", compression } as object);
    this.#live = root.openDB<LiveEntry, string>("live", {});
    this.#tomb = root.openDB<TombEntry, string>("tomb", {});
    this.#meta = metaOf(root);
    this.#compactionBatch = options.compactionBatch ?? 1000;
    this.#assigned = Number(this.#meta.get("revision") ?? 0);
    this.#published = this.#assigned;
  }

  static async open(options: LmdbStorageOptions): Promise<LmdbStorage> {
    ownLmdbCommitRejections();
    const { root, path, created } = openStoreFile(options.dataDir, openLmdb, ...(options.log === undefined ? [] : [options.log]));
    return LmdbStorage.#adopt(root, path, created, options);
  }

  /** A store file by its path, never created (a snapshot to check or restore). */
  static async openFile(file: string, options: Omit<LmdbStorageOptions, "dataDir"> = {}): Promise<LmdbStorage> {
    ownLmdbCommitRejections();
    const root = checkStoreFile(file, openLmdb);
    return LmdbStorage.#adopt(root, file, false, { ...options, dataDir: dirname(file) });
  }

  static async #adopt(root: RootDatabase, path: string, created: boolean, options: LmdbStorageOptions): Promise<LmdbStorage> {
    const format = created ? FORMAT : storeFormat(root);
    if (format === undefined) {
      // An lmdb file some other program wrote: leave it exactly as it is.
      await root.close();
      throw new StorageError("Corrupt", `${path} is an lmdb file but not an orch store; refusing to use it`);
    }
    const meta = metaOf(root);
    if (created) {
      await meta.put("dictionary", STORE_DICTIONARY);
      await meta.put("format", FORMAT);
      await root.flushed;
    }
    let dictionary: Uint8Array | undefined;
    if (format === FORMAT) {
      const stored = meta.get("dictionary");
      if (!(stored instanceof Uint8Array)) {
        await root.close();
        throw new StorageError("Corrupt", `${path}: the store's compression dictionary is missing; its values cannot be read`);
      }
      dictionary = stored;
    }
    return new LmdbStorage(root, path, options, dictionary);
  }

  // ---- reads ----

  async get(key: string, options: GetOptions = {}): Promise<GetResult> {
    return this.#read(options.revision, (txn, revision, current) => ({
      kv: revision === current ? this.#current(key, txn) : this.#at(key, revision, txn),
      revision,
    }));
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    return this.#read(options.revision, (txn, revision, current) => {
      const start = options.startKey !== undefined && options.startKey > prefix ? options.startKey : prefix;
      const end = prefixEnd(prefix);
      const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
      const items: KeyValue[] = [];
      let remaining = 0;
      const take = (kv: KeyValue | undefined) => {
        if (kv === undefined) return;
        if (items.length < limit) items.push(kv);
        else remaining++;
      };
      if (revision === current) {
        for (const { key, value } of this.#live.getRange({ start, end, transaction: txn })) {
          if (items.length < limit) take(this.#materialize(key, value.c, value.m, txn));
          else remaining++;
        }
      } else {
        // Keys visible at a past revision are live now or deleted since: walk both, in key order.
        const keys = [
          ...this.#live.getKeys({ start, end, transaction: txn }),
          ...this.#tomb.getKeys({ start, end, transaction: txn }),
        ].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        for (const key of keys) take(this.#at(key, revision, txn));
      }
      return { items, revision, more: remaining > 0, remaining };
    });
  }

  /**
   * The key's current modRevision from the small `live` entry, the value left
   * unread: the watch cache then answers a consistent GET with the record it
   * already decoded (decoding the stored object was most of a GET's cost).
   */
  async latestModRevision(key: string): Promise<number> {
    this.#assertOpen();
    return this.#live.get(key)?.m ?? 0;
  }

  async count(prefix: string): Promise<number> {
    return this.#live.getCount({ start: prefix, end: prefixEnd(prefix) });
  }

  async currentRevision(): Promise<number> {
    return Number(this.#meta.get("revision") ?? 0);
  }

  /** Run `fn` in one read snapshot at `requested` (0/undefined: the snapshot's newest revision). */
  #read<T>(requested: number | undefined, fn: (txn: Transaction, revision: number, current: number) => T): T {
    this.#assertOpen();
    const txn = this.#root.useReadTransaction();
    try {
      const current = Number(this.#meta.get("revision", { transaction: txn }) ?? 0);
      const revision = requested !== undefined && requested > 0 ? requested : current;
      if (revision > current) throw new FutureRevisionError(revision, current);
      const compacted = Number(this.#meta.get("compacted", { transaction: txn }) ?? 0);
      if (revision < compacted) throw new CompactedError(revision, compacted);
      return fn(txn, revision, current);
    } finally {
      txn.done();
    }
  }

  #current(key: string, txn?: Transaction): KeyValue | undefined {
    const live = this.#live.get(key, { transaction: txn });
    return live === undefined ? undefined : this.#materialize(key, live.c, live.m, txn);
  }

  #materialize(key: string, createRevision: number, modRevision: number, txn?: Transaction): KeyValue {
    let entry: LogEntry | undefined;
    try {
      entry = this.#log.get(modRevision, { transaction: txn });
    } catch (err) {
      // Damage in the entry's framing or its compressed block: it cannot be decoded at all. The same as a
      // value failing its checksum: the object reads as corrupt, the rest of the store serves on.
      const reason = `entry of ${key} at revision ${modRevision} cannot be decoded (${(err as Error).message}): the store ${this.path} is damaged`;
      return { key, value: this.#damagedValue(modRevision, reason), createRevision, modRevision };
    }
    if (entry?.v === undefined) {
      throw new StorageError("Corrupt", `store ${this.path}: no value for ${key} at revision ${modRevision}`, { key });
    }
    return { key, value: this.#checked(key, modRevision, entry.v, entry.s), createRevision, modRevision };
  }

  /** The entry's value, or the unreadable marker when it fails its checksum (said once in the log, with what to do). */
  #checked(key: string, revision: number, value: Uint8Array, sum: number | undefined): Uint8Array {
    if (sum === undefined || crc32(value) === sum) return value;
    return this.#damagedValue(revision, `value of ${key} at revision ${revision} fails its checksum: the store ${this.path} is damaged`);
  }

  /** The unreadable marker for a damaged version (said once in the log, with what to do). */
  #damagedValue(revision: number, reason: string): Uint8Array {
    if (!this.#damaged.has(revision)) {
      this.#damaged.add(revision);
      this.#notice(`store: ${reason}; the object reads as corrupt (delete it with the unsafe delete), or stop the server and restore a snapshot (orch snapshot restore, docs/reliability.md)`);
    }
    return unreadableValue(reason);
  }

  /** The key as of `revision`: walk its versions back from the newest. */
  #at(key: string, revision: number, txn: Transaction): KeyValue | undefined {
    let rev = this.#live.get(key, { transaction: txn })?.m ?? this.#tomb.get(key, { transaction: txn })?.m ?? 0;
    while (rev > 0) {
      const entry = this.#log.get(rev, { transaction: txn });
      // A missing entry at or below the revision was a delete that compaction dropped.
      if (entry === undefined) return undefined;
      if (rev <= revision) {
        return entry.v === undefined ? undefined : { key, value: this.#checked(key, rev, entry.v, entry.s), createRevision: entry.c, modRevision: rev };
      }
      rev = entry.p;
    }
    return undefined;
  }

  // ---- writes ----

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    checkSize(key, value);
    // On a full disk, a create that would fail anyway says why (start-up's "create if missing" steps rely on it).
    if (this.#space.problem() !== undefined && this.#live.get(key) !== undefined) throw new AlreadyExistsError(key);
    return this.#write((revision) => {
      if (this.#live.get(key) !== undefined) return { ok: false, error: new AlreadyExistsError(key) };
      const previous = this.#tomb.get(key)?.m ?? 0;
      if (previous > 0) this.#tomb.removeSync(key);
      return this.#put(key, value, revision, revision, previous, undefined);
    });
  }

  async update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue> {
    checkSize(key, value);
    return this.#write((revision) => {
      const live = this.#live.get(key);
      if (live === undefined) return { ok: false, error: new NotFoundError(key) };
      if (live.m !== expectedModRevision) {
        return { ok: false, error: new ConflictError(key, expectedModRevision, this.#current(key)) };
      }
      const prev = this.#materialize(key, live.c, live.m);
      return this.#put(key, value, revision, live.c, live.m, prev);
    });
  }

  async delete(key: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    return this.#write((revision) => {
      const live = this.#live.get(key);
      if (live === undefined) return { ok: false, error: new NotFoundError(key) };
      if (options.expectedModRevision !== undefined && live.m !== options.expectedModRevision) {
        return {
          ok: false,
          error: new ConflictError(key, options.expectedModRevision, this.#current(key)),
        };
      }
      const prevKv = this.#materialize(key, live.c, live.m);
      this.#log.putSync(revision, { k: key, c: live.c, p: live.m });
      this.#live.removeSync(key);
      this.#tomb.putSync(key, { m: revision });
      this.#pending.push({ type: "delete", key, prevKv, revision });
      return { ok: true, value: { prevKv, revision }, revision };
    });
  }

  guaranteedUpdate(
    key: string,
    tryUpdate: (current: KeyValue | undefined) => UpdateDecision | Promise<UpdateDecision>,
    options?: GuaranteedUpdateOptions,
  ): Promise<GuaranteedUpdateResult> {
    return guaranteedUpdate(this, key, tryUpdate, options);
  }

  #put(
    key: string,
    value: Uint8Array,
    revision: number,
    createRevision: number,
    previous: number,
    prevKv: KeyValue | undefined,
  ): WriteOutcome<KeyValue> {
    this.#log.putSync(revision, { k: key, v: value, c: createRevision, p: previous, s: crc32(value) });
    this.#live.putSync(key, { c: createRevision, m: revision });
    const kv: KeyValue = { key, value, createRevision, modRevision: revision };
    this.#pending.push({ type: "put", kv, prevKv, revision });
    return { ok: true, value: kv, revision };
  }

  /**
   * Run one write in the next shared transaction. The callback gets the next
   * revision and either writes (returning ok) or refuses; only a write
   * consumes the revision.
   */
  async #write<T>(decide: (revision: number) => WriteOutcome<T>): Promise<T> {
    this.#assertOpen();
    this.#space.assertWritable();
    let outcome: WriteOutcome<T>;
    try {
      outcome = await this.#root.transaction(() => {
        const revision = this.#assigned + 1;
        const result = decide(revision);
        if (result.ok) {
          this.#meta.putSync("revision", revision);
          this.#assigned = revision;
        }
        return result;
      });
      await this.#root.flushed;
    } catch (err) {
      // The batch did not commit: forget what it assigned and re-read the durable revision.
      this.#assigned = Number(this.#meta.get("revision") ?? 0);
      this.#pending = this.#pending.filter((e) => e.revision <= this.#assigned);
      throw this.#space.commitFailed(err) ?? new StorageError("Unavailable", `lmdb commit failed: ${(err as Error).message}`, { cause: err });
    }
    if (!outcome.ok) throw outcome.error;
    this.#publishUpTo(outcome.revision);
    return outcome.value;
  }

  /** Everything up to `revision` is durable (batches commit in order): hand it to watchers in order. */
  #publishUpTo(revision: number): void {
    if (revision <= this.#published) return;
    let n = 0;
    while (n < this.#pending.length && this.#pending[n]!.revision <= revision) n++;
    const ready = this.#pending.splice(0, n);
    this.#published = revision;
    for (const event of ready) {
      const key = event.type === "delete" ? event.key : event.type === "put" ? event.kv.key : "";
      for (const w of this.#watchers) if (key.startsWith(w.prefix)) w.push(event);
    }
  }

  // ---- watch ----

  watch(prefix: string, options: WatchOptions): Watch {
    const from = options.fromRevision > 0 ? options.fromRevision : this.#published;
    const watch = new EventQueueWatch(prefix, from, {
      signal: options.signal,
      progressRevision: () => this.#published,
      onClose: (w) => this.#watchers.delete(w),
    });
    try {
      this.#assertOpen();
      this.#replay(watch, prefix, from);
      this.#watchers.add(watch);
    } catch (err) {
      watch.fail(err);
    }
    return watch;
  }

  /** Push durable history after `from` into the watch; later events arrive through #publishUpTo. */
  #replay(watch: EventQueueWatch, prefix: string, from: number): void {
    const txn = this.#root.useReadTransaction();
    try {
      const compacted = Number(this.#meta.get("compacted", { transaction: txn }) ?? 0);
      if (from < compacted) throw new CompactedError(from, compacted);
      const range = this.#log.getRange({ start: from + 1, end: this.#published + 1, transaction: txn });
      for (const { key: revision, value: entry } of range) {
        if (entry.k.startsWith(prefix)) watch.push(this.#eventFromLog(revision, entry, txn));
      }
    } finally {
      txn.done();
    }
  }

  #eventFromLog(revision: number, entry: LogEntry, txn: Transaction): WatchEvent {
    const prevEntry = entry.p > 0 ? this.#log.get(entry.p, { transaction: txn }) : undefined;
    const prevKv: KeyValue | undefined =
      prevEntry?.v === undefined
        ? undefined
        : { key: entry.k, value: this.#checked(entry.k, entry.p, prevEntry.v, prevEntry.s), createRevision: prevEntry.c, modRevision: entry.p };
    if (entry.v === undefined) {
      if (prevKv === undefined) {
        throw new StorageError("Corrupt", `store ${this.path}: delete at ${revision} has no previous value`);
      }
      return { type: "delete", key: entry.k, prevKv, revision };
    }
    return { type: "put", kv: { key: entry.k, value: this.#checked(entry.k, revision, entry.v, entry.s), createRevision: entry.c, modRevision: revision }, prevKv, revision };
  }

  // ---- compaction ----

  /**
   * Mark history before `revision` unreadable at once, then sweep superseded
   * versions in batches of `compactionBatch` log entries, one transaction each.
   */
  compact(revision: number): Promise<void> {
    const run = this.#compaction.then(() => this.#compact(revision));
    this.#compaction = run.catch(() => {});
    return run;
  }

  async #compact(revision: number): Promise<void> {
    this.#assertOpen();
    this.#space.assertWritable();
    try {
      await this.#compactWrites(revision);
    } catch (err) {
      throw this.#space.commitFailed(err) ?? err;
    }
  }

  async #compactWrites(revision: number): Promise<void> {
    const current = await this.currentRevision();
    if (revision > current) throw new FutureRevisionError(revision, current);
    const compacted = Number(this.#meta.get("compacted") ?? 0);
    if (revision <= compacted) return;
    await this.#meta.put("compacted", revision);
    let swept = Number(this.#meta.get("swept") ?? 0);
    while (swept < revision && !this.#closed) {
      swept = await this.#root.transaction(() => this.#sweepBatch(swept, revision));
    }
  }

  /** Drop versions superseded at or before `upTo`, starting after `from`; returns the last revision handled. */
  #sweepBatch(from: number, upTo: number): number {
    let last = from;
    let n = 0;
    for (const { key: revision, value: entry } of this.#log.getRange({ start: from + 1, end: upTo + 1 })) {
      if (entry.p > 0) this.#log.removeSync(entry.p);
      if (entry.v === undefined) {
        this.#log.removeSync(revision);
        if (this.#tomb.get(entry.k)?.m === revision) this.#tomb.removeSync(entry.k);
      }
      last = revision;
      if (++n >= this.#compactionBatch) break;
    }
    if (n < this.#compactionBatch) last = upTo;
    this.#meta.putSync("swept", last);
    return last;
  }

  // ---- the rest ----

  async stats(): Promise<StorageStats> {
    this.#assertOpen();
    return {
      sizeBytes: statSync(this.path).size,
      keyCount: this.#live.getKeysCount(),
      revision: await this.currentRevision(),
      compactedRevision: Number(this.#meta.get("compacted") ?? 0),
    };
  }

  /**
   * An online, consistent copy of the store into `file` (lmdb's compacting
   * copy inside one read transaction: writers go on while it runs), made
   * 0600 and checked; what the copy holds.
   */
  async snapshot(file: string): Promise<StoreCheck> {
    this.#assertOpen();
    await this.#root.backup(file, true);
    chmodSync(file, 0o600);
    const copy = await LmdbStorage.openFile(file);
    try {
      return copy.check();
    } finally {
      await copy.close();
    }
  }

  /** Walks every stored value against its checksum: the revision, live keys, values read and the damaged ones. */
  check(): StoreCheck {
    this.#assertOpen();
    const txn = this.#root.useReadTransaction();
    try {
      const damaged: string[] = [];
      let values = 0;
      for (const { key: revision, value: entry } of this.#log.getRange({ transaction: txn })) {
        if (entry.v === undefined) continue;
        values++;
        if (entry.s !== undefined && crc32(entry.v) !== entry.s) damaged.push(`${entry.k} at revision ${revision}`);
      }
      return {
        revision: Number(this.#meta.get("revision", { transaction: txn }) ?? 0),
        keys: this.#live.getCount({ transaction: txn }),
        values,
        damaged,
      };
    } finally {
      txn.done();
    }
  }

  /** Why writes are refused (the disk is full), or undefined: /readyz's `storage-space` check. */
  writeProblem(): string | undefined {
    return this.#space.problem();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const w of this.#watchers) w.close();
    await this.#compaction;
    await this.#root.flushed;
    await this.#root.close();
  }

  #assertOpen(): void {
    if (this.#closed) throw new StorageError("Unavailable", `store ${this.path} is closed`);
  }
}

/** What a store holds, and which values fail their checksums (`orch snapshot`). */
export interface StoreCheck {
  revision: number;
  keys: number;
  values: number;
  damaged: string[];
}

function openLmdb(file: string): RootDatabase {
  return open({ path: file, noSubdir: true, maxDbs: 8, encoding: "msgpack" });
}

function metaOf(root: RootDatabase): Database<string | number | Uint8Array, string> {
  return root.openDB<string | number | Uint8Array, string>("meta", {});
}

/** Our format stamp, looked for without creating anything in the file; undefined when it is not an orch store. */
function storeFormat(root: RootDatabase): typeof FORMAT | typeof FORMAT_PLAIN | undefined {
  try {
    const format = root.openDB<string, string>("meta", { create: false } as object).get("format");
    return format === FORMAT || format === FORMAT_PLAIN ? format : undefined;
  } catch {
    return undefined;
  }
}

function checkSize(key: string, value: Uint8Array): void {
  if (value.length > MAX_VALUE_BYTES) throw new TooLargeError(key, value.length, MAX_VALUE_BYTES);
}
