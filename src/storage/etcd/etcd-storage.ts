// Storage over etcd v3: revisions are etcd's own, compare-and-swap is an etcd
// transaction on create/mod revision, watches are etcd watches (watch.ts).
// Keys get the store's prefix on the way in and lose it on the way out, so
// several stores (or test cases) can share one etcd.

import {
  AlreadyExistsError,
  CompactedError,
  ConflictError,
  FutureRevisionError,
  NotFoundError,
  StorageUnavailableError,
  TooLargeError,
} from "../errors.js";
import { ownBytes } from "../bytes.js";
import { guaranteedUpdate } from "../guaranteed-update.js";
import {
  MAX_VALUE_BYTES,
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
  type WatchOptions,
} from "../storage.js";
import { consoleLogger, describe, EtcdConnection, isServiceError, type EtcdClientKind, type EtcdLogger, type EtcdTls } from "./connection.js";
import { Code, type CallStream } from "./h2-channel.js";
import {
  etcdMethods,
  type MvccKeyValue,
  type RangeRequest,
  type RangeResponse,
  type TxnRequest,
  type TxnResponse,
  type WatchRequest,
  type WatchResponse,
} from "./rpc.js";
import { EtcdWatch } from "./watch.js";
import { ReadBatcher } from "./read-batch.js";

export interface EtcdStorageOptions {
  /** etcd client URLs, e.g. ["http://127.0.0.1:2379"]; calls fail over between them. */
  endpoints: string[];
  /** Prepended to every key and stripped from every key returned (default ""). */
  prefix?: string;
  /** Wait this long for a connection to one endpoint before trying the next; also how long open waits for a first answer (default 5000). */
  dialTimeoutMs?: number;
  /** Reject an operation with StorageUnavailableError after this long, retries included (default 10000). */
  requestTimeoutMs?: number;
  /** A watch that cannot re-create its stream for this long ends with StorageUnavailableError (default 60000). */
  watchResumeTimeoutMs?: number;
  /** Receives one line per change of connection state (default: stderr). */
  logger?: EtcdLogger;
  /** For https:// endpoints: CA, client certificate and key (PEM). */
  tls?: EtcdTls;
  /** The gRPC transport: "frames" (ours, the default), "h2" (ours over node:http2) or "grpc-js" (default: $ORCH_ETCD_CLIENT). */
  client?: EtcdClientKind;
}

/** The etcd Storage, with the health information /readyz needs. */
export interface EtcdStorage extends Storage {
  /** Whether the last contact with etcd succeeded (cheap; no I/O). */
  healthy(): boolean;
  /** Ask etcd now; rejects with StorageUnavailableError when no member answers within `timeoutMs`. */
  checkHealth(timeoutMs?: number): Promise<void>;
}

/**
 * Connect to etcd. Waits up to dialTimeoutMs for a first answer but resolves
 * even without one: the store then keeps retrying in the background (logged),
 * operations reject with StorageUnavailableError, and healthy() says false.
 */
export async function openEtcdStorage(options: EtcdStorageOptions): Promise<EtcdStorage> {
  const store = new EtcdStorageImpl(options);
  await store.checkHealth(options.dialTimeoutMs ?? DEFAULT_DIAL_TIMEOUT_MS).catch(() => {});
  return store;
}

const DEFAULT_DIAL_TIMEOUT_MS = 5000;
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
const DEFAULT_WATCH_RESUME_TIMEOUT_MS = 60_000;
/** etcd's range_end meaning "every key from `key` on". */
const ALL_FROM = Buffer.from([0]);

/** Read (never written) for the header revision when no prefix is set. */
const REVISION_PROBE_KEY = Buffer.from("\u0000orch-revision-probe");

const COMPACTED_MESSAGE = "required revision has been compacted";
const FUTURE_MESSAGE = "required revision is a future revision";

class EtcdStorageImpl implements EtcdStorage {
  readonly backend = "etcd";
  readonly #connection: EtcdConnection;
  readonly #prefix: Buffer;
  readonly #watchResumeTimeoutMs: number;
  readonly #watches = new Set<EtcdWatch>();
  /** The highest compacted revision we have seen (our compactions, errors, cancelled watches). */
  #compacted = 0;
  #compactedProbe: Promise<number> | undefined;
  /** The first update in flight per key (see update()). */
  readonly #updatesInFlight = new Map<string, { expected: number; result: Promise<KeyValue>; settled: boolean }>();
  /** Reads of the latest revision, sent together while others are in flight (read-batch.ts). */
  readonly #latestReads: ReadBatcher;

  constructor(options: EtcdStorageOptions) {
    this.#connection = new EtcdConnection({
      endpoints: options.endpoints,
      dialTimeoutMs: options.dialTimeoutMs ?? DEFAULT_DIAL_TIMEOUT_MS,
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      logger: options.logger ?? consoleLogger,
      ...(options.tls === undefined ? {} : { tls: options.tls }),
      ...(options.client === undefined ? {} : { client: options.client }),
    });
    this.#prefix = Buffer.from(options.prefix ?? "", "utf8");
    this.#watchResumeTimeoutMs = options.watchResumeTimeoutMs ?? DEFAULT_WATCH_RESUME_TIMEOUT_MS;
    this.#latestReads = new ReadBatcher({
      range: (request) => this.#connection.call(etcdMethods().range, request, { mutation: false }),
      // Only ranges: a read, safe to retry like one.
      txn: (request) => this.#connection.call(etcdMethods().txn, request, { mutation: false }),
    });
  }

  healthy(): boolean {
    return this.#connection.healthy() && !this.#connection.closed;
  }

  async checkHealth(timeoutMs = DEFAULT_DIAL_TIMEOUT_MS): Promise<void> {
    try {
      await this.#connection.status(Date.now() + timeoutMs);
    } catch (err) {
      if (err instanceof StorageUnavailableError) throw err;
      throw new StorageUnavailableError(`etcd: status check failed: ${describe(err)}`, err);
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<GetResult> {
    const revision = options.revision ?? 0;
    const res = revision === 0 ? await this.#latest({ key: this.#key(key) }) : await this.#range({ key: this.#key(key), revision }, revision);
    const kv = res.kvs[0];
    return { kv: kv === undefined ? undefined : this.#toKeyValue(kv), revision: revision || res.header.revision };
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    const revision = options.revision ?? 0;
    const [from, end] = this.#keyRange(prefix);
    let key = from;
    if (options.startKey !== undefined) {
      // A start key before the prefix must not widen the range beyond it.
      const start = this.#key(options.startKey);
      if (Buffer.compare(start, key) > 0) key = start;
    }
    const limit = options.limit ?? 0;
    const res = await this.#range({ key, range_end: end, revision, limit }, revision);
    const items = res.kvs.map((kv) => this.#toKeyValue(kv));
    return {
      items,
      revision: revision || res.header.revision,
      more: res.more,
      remaining: Math.max(0, res.count - items.length),
    };
  }

  progressProvable(): boolean {
    return progressIsOrdered(this.#connection.serverVersion);
  }

  async latestModRevision(key: string): Promise<number> {
    // keys_only: etcd sends the key's revisions without its value; batched (and deduplicated) like any latest read.
    const res = await this.#latest({ key: this.#key(key), keys_only: true });
    return res.kvs[0]?.mod_revision ?? 0;
  }

  async count(prefix: string): Promise<number> {
    const [key, range_end] = this.#keyRange(prefix);
    // Batched with the other reads of the latest revision: the metrics' refresh counts every resource at once.
    const res = await this.#latest({ key, range_end, count_only: true });
    return res.count;
  }

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    checkSize(key, value);
    const k = this.#key(key);
    const res = await this.#txn({
      compare: [{ key: k, target: "CREATE", result: "EQUAL", create_revision: 0 }],
      success: [{ request_put: { key: k, value } }],
      failure: [{ request_range: { key: k } }],
    }, key);
    if (!res.succeeded) throw new AlreadyExistsError(key);
    const revision = res.header.revision;
    return { key, value, createRevision: revision, modRevision: revision };
  }

  /**
   * Compare-and-swap. While an update of the same key with the same expected
   * revision is in flight from this store, a second one waits for it: if the
   * first wins or conflicts, the second is certain to conflict (revisions never
   * repeat) and fails with the winner's value without a trip to etcd. Besides
   * saving doomed transactions, this makes contention inside one process
   * first-come first-served: under a herd of writers on one key (a counter, a
   * lease) etcd would otherwise pick winners at random, and an unlucky writer
   * could lose more than guaranteedUpdate's retry budget in a row.
   */
  async update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue> {
    checkSize(key, value);
    const twin = this.#updatesInFlight.get(key);
    if (twin !== undefined && twin.expected === expectedModRevision) {
      const outcome = await twin.result.then(
        (kv) => new ConflictError(key, expectedModRevision, kv),
        (err: unknown) => (err instanceof ConflictError ? new ConflictError(key, expectedModRevision, err.current) : undefined),
      );
      if (outcome !== undefined) throw outcome;
      // The first failed for another reason (etcd unreachable, ...): ask etcd ourselves.
    }
    const result = this.#update(key, value, expectedModRevision);
    const first = this.#updatesInFlight.get(key);
    if (first === undefined || first.settled) {
      const entry = { expected: expectedModRevision, result, settled: false };
      this.#updatesInFlight.set(key, entry);
      // A settled first stays until the next macrotask. Answers that arrive together (one read
      // of the socket carries many with h2-frames.ts) all settle before any caller goes on; a
      // loser that then retries with the winner's expected revision must still learn from the
      // winner that it lost, rather than ask etcd and lose again behind the next group (without
      // this a writer of the CAS test was seen to lose all of its 100 retries).
      const done = () => {
        entry.settled = true;
        setImmediate(() => {
          if (this.#updatesInFlight.get(key) === entry) this.#updatesInFlight.delete(key);
        });
      };
      result.then(done, done);
    }
    return result;
  }

  async #update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue> {
    const k = this.#key(key);
    const res = await this.#txn({
      compare: [
        { key: k, target: "MOD", result: "EQUAL", mod_revision: expectedModRevision },
        // Guards expectedModRevision 0, which an absent key would otherwise match.
        { key: k, target: "VERSION", result: "GREATER", version: 0 },
      ],
      success: [{ request_put: { key: k, value, prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    }, key);
    if (!res.succeeded) throw this.#failedCompare(key, expectedModRevision, res);
    const prev = res.responses[0]?.response_put?.prev_kv;
    const revision = res.header.revision;
    return { key, value, createRevision: prev?.create_revision ?? revision, modRevision: revision };
  }

  async delete(key: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    const k = this.#key(key);
    const expected = options.expectedModRevision;
    const res = await this.#txn({
      compare:
        expected === undefined
          ? []
          : [
              { key: k, target: "MOD", result: "EQUAL", mod_revision: expected },
              { key: k, target: "VERSION", result: "GREATER", version: 0 },
            ],
      success: [{ request_delete_range: { key: k, prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    }, key);
    if (!res.succeeded) throw this.#failedCompare(key, expected ?? 0, res);
    const prev = res.responses[0]?.response_delete_range?.prev_kvs[0];
    // Deleting nothing does not write, and does not use a revision.
    if (prev === undefined) throw new NotFoundError(key);
    return { prevKv: this.#toKeyValue(prev), revision: res.header.revision };
  }

  guaranteedUpdate(
    key: string,
    tryUpdate: (current: KeyValue | undefined) => UpdateDecision | Promise<UpdateDecision>,
    options?: GuaranteedUpdateOptions,
  ): Promise<GuaranteedUpdateResult> {
    return guaranteedUpdate(this, key, tryUpdate, options);
  }

  watch(prefix: string, options: WatchOptions): Watch {
    const [key, rangeEnd] = this.#keyRange(prefix);
    const watch = new EtcdWatch({
      connection: this.#connection,
      key,
      rangeEnd,
      // "From now" is after the newest revision this client has seen, not whatever etcd's is when the watch
      // registers: a write sent right after watch() returns may be applied before that (another stream).
      fromRevision: options.fromRevision === 0 ? this.#connection.newestRevision : options.fromRevision,
      signal: options.signal,
      prevKv: options.prevKv ?? true,
      toKeyValue: (kv) => this.#toKeyValue(kv),
      onCompacted: (revision) => this.#sawCompacted(revision),
      progressIsOrdered: () => progressIsOrdered(this.#connection.serverVersion),
      resumeTimeoutMs: this.#watchResumeTimeoutMs,
      onClose: (w) => this.#watches.delete(w),
    });
    // A watch closed by an already-aborted signal has unregistered itself before being added.
    if (!options.signal?.aborted) this.#watches.add(watch);
    return watch;
  }

  async currentRevision(): Promise<number> {
    // A linearizable read of one key reports the latest revision in its header.
    // etcd refuses an empty key, so without a prefix read a key nothing uses.
    const res = await this.#latest({ key: this.#prefix.length > 0 ? this.#key("") : REVISION_PROBE_KEY, count_only: true });
    return res.header.revision;
  }

  async compact(revision: number): Promise<void> {
    try {
      // physical: false returns once etcd applied the compaction (older reads fail
      // from then on); etcd deletes the old versions in the background, in batches.
      await this.#connection.call(etcdMethods().compact, { revision, physical: false }, { mutation: false });
      this.#sawCompacted(revision);
    } catch (err) {
      throw await this.#mapError(err, revision);
    }
  }

  async stats(): Promise<StorageStats> {
    try {
      const status = await this.#connection.status();
      const [keyCount, revision] = await Promise.all([this.count(""), this.currentRevision()]);
      return {
        sizeBytes: status.dbSize,
        keyCount,
        revision,
        compactedRevision: Math.max(this.#compacted, await this.#compactedRevisionNow()),
      };
    } catch (err) {
      throw await this.#mapError(err, 0);
    }
  }

  async close(): Promise<void> {
    for (const watch of [...this.#watches]) watch.close();
    this.#connection.close();
  }

  // --- helpers ---

  async #range(request: RangeRequest, revision: number): Promise<RangeResponse> {
    try {
      return await this.#connection.call(etcdMethods().range, request, { mutation: false });
    } catch (err) {
      throw await this.#mapError(err, revision);
    }
  }

  /** A read of the latest revision, batched with concurrent ones. */
  async #latest(request: RangeRequest): Promise<RangeResponse> {
    try {
      return await this.#latestReads.range(request);
    } catch (err) {
      throw await this.#mapError(err, 0);
    }
  }

  async #txn(request: TxnRequest, key: string): Promise<TxnResponse> {
    try {
      return await this.#connection.call(etcdMethods().txn, request, { mutation: true });
    } catch (err) {
      throw await this.#mapError(err, 0, key);
    }
  }

  #failedCompare(key: string, expected: number, res: TxnResponse): Error {
    const current = res.responses[0]?.response_range?.kvs[0];
    if (current === undefined) return new NotFoundError(key);
    return new ConflictError(key, expected, this.#toKeyValue(current));
  }

  /** Turn an etcd answer into the storage error it stands for. */
  async #mapError(err: unknown, revision: number, key = ""): Promise<Error> {
    if (!isServiceError(err)) return err instanceof Error ? err : new Error(String(err));
    const details = err.details ?? "";
    if (details.includes(COMPACTED_MESSAGE)) {
      return new CompactedError(revision, await this.#compactedRevisionAfterError(revision));
    }
    if (details.includes(FUTURE_MESSAGE)) {
      const current = await this.currentRevision().catch(() => revision - 1);
      return new FutureRevisionError(revision, current);
    }
    if (details.includes("request is too large") || (err.code === Code.RESOURCE_EXHAUSTED && details.includes("larger than max"))) {
      return new TooLargeError(key, 0, MAX_VALUE_BYTES);
    }
    // Anything else (no space, permission, ...) leaves etcd's message intact.
    return new StorageUnavailableError(`etcd: ${describe(err)}`, err);
  }

  /**
   * etcd's "compacted" error does not say up to where. A watch from revision 1
   * does: etcd cancels it with compact_revision set to its compacted revision.
   * Concurrent askers share one probe.
   */
  async #compactedRevisionAfterError(requested: number): Promise<number> {
    this.#compactedProbe ??= this.#probeCompactedRevision().finally(() => (this.#compactedProbe = undefined));
    const probed = await this.#compactedProbe.catch(() => 0);
    // The probe failing leaves what we know, and at least "newer than requested".
    return Math.max(probed, this.#compacted, requested + 1);
  }

  /** The compacted revision now, 0 when history reaches back to the beginning. */
  async #compactedRevisionNow(): Promise<number> {
    try {
      await this.#connection.call(etcdMethods().range, { key: this.#probeKey(), revision: 1, count_only: true }, { mutation: false });
      return 0;
    } catch (err) {
      if (isServiceError(err) && (err.details ?? "").includes(COMPACTED_MESSAGE)) return this.#compactedRevisionAfterError(1);
      throw err;
    }
  }

  #probeCompactedRevision(): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      let stream: CallStream<WatchRequest, WatchResponse>;
      try {
        stream = this.#connection.openStream(etcdMethods().watch).stream;
      } catch (err) {
        reject(err);
        return;
      }
      const finish = (err: Error | undefined, revision = 0) => {
        clearTimeout(timer);
        stream.removeAllListeners("data");
        stream.on("error", () => {});
        stream.cancel();
        if (err === undefined) resolve(revision);
        else reject(err);
      };
      const timer = setTimeout(() => finish(new Error("etcd did not report its compacted revision")), 5000);
      timer.unref();
      stream.on("data", (res: WatchResponse) => {
        if (res.canceled) {
          if (res.compact_revision > 0) {
            this.#sawCompacted(res.compact_revision);
            finish(undefined, res.compact_revision);
          } else finish(new Error(`etcd cancelled the probe watch: ${res.cancel_reason}`));
        }
      });
      stream.on("error", (err: Error) => finish(err));
      stream.write({ create_request: { key: this.#probeKey(), start_revision: 1 } });
    });
  }

  #sawCompacted(revision: number): void {
    if (revision > this.#compacted) this.#compacted = revision;
  }

  #probeKey(): Buffer {
    // A key no one writes: a probe watch on it replays no events.
    return Buffer.concat([this.#prefix, Buffer.from("\0orch-compaction-probe")]);
  }

  #key(key: string): Buffer {
    return this.#prefix.length === 0 ? Buffer.from(key, "utf8") : Buffer.concat([this.#prefix, Buffer.from(key, "utf8")]);
  }

  /** The etcd range [key, end) of every key under `prefix`. */
  #keyRange(prefix: string): [Buffer, Buffer] {
    const key = this.#key(prefix);
    if (key.length === 0) return [ALL_FROM, ALL_FROM];
    return [key, bytesPrefixEnd(key)];
  }

  #toKeyValue(kv: MvccKeyValue): KeyValue {
    return {
      key: kv.key.subarray(this.#prefix.length).toString("utf8"),
      value: ownBytes(kv.value),
      createRevision: kv.create_revision,
      modRevision: kv.mod_revision,
    };
  }
}

function checkSize(key: string, value: Uint8Array): void {
  if (value.length > MAX_VALUE_BYTES) throw new TooLargeError(key, value.length, MAX_VALUE_BYTES);
}

/** Smallest byte string greater than every key starting with `prefix` ("\0": no upper bound). */
export function bytesPrefixEnd(prefix: Buffer): Buffer {
  let i = prefix.length - 1;
  while (i >= 0 && prefix[i] === 0xff) i--;
  if (i < 0) return ALL_FROM;
  const end = Buffer.from(prefix.subarray(0, i + 1));
  end[i]! += 1;
  return end;
}

/**
 * Whether this etcd answers progress requests only after the events they
 * cover (fixed in 3.4.31 and 3.5.13, the versions the upstream API server
 * requires for consistent reads from its watch cache).
 */
export function progressIsOrdered(version: string): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (m === null) return false;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major !== 3) return major > 3;
  if (minor === 4) return patch >= 31;
  if (minor === 5) return patch >= 13;
  return minor > 5;
}
