// Group commit for linearizable reads: reads of the latest revision that
// arrive while earlier ones are in flight wait, and go to etcd together as
// one read-only Txn of Range operations (one round trip, one read-index wait
// in etcd, one HTTP/2 stream) instead of one call each. Under load that turns
// an API server's consistent GETs and its watch caches' "current revision"
// probes (every consistent LIST, every admission plugin's list) from one etcd
// call per read into a few calls per batch; alone, a read goes out at once.
//
// Linearizability holds: a read is only ever sent in a call that starts after
// the read was asked for, so its answer reflects every write that completed
// before it (etcd serves a read-only Txn through the same read index as a Range).

import type { RangeRequest, RangeResponse, TxnRequest, TxnResponse } from "./rpc.js";

export interface ReadBatcherOptions {
  /** One Range call. */
  range: (request: RangeRequest) => Promise<RangeResponse>;
  /** One read-only Txn call. */
  txn: (request: TxnRequest) => Promise<TxnResponse>;
  /** Calls in flight at once before reads start to queue (default 2). */
  maxInFlight?: number;
  /** Operations per Txn (etcd's --max-txn-ops defaults to 128). */
  maxOps?: number;
}

interface Pending {
  request: RangeRequest;
  resolve: (response: RangeResponse) => void;
  reject: (err: unknown) => void;
}

export class ReadBatcher {
  readonly #options: ReadBatcherOptions;
  readonly #maxInFlight: number;
  readonly #maxOps: number;
  #queue: Pending[] = [];
  #inFlight = 0;

  constructor(options: ReadBatcherOptions) {
    this.#options = options;
    this.#maxInFlight = options.maxInFlight ?? 2;
    this.#maxOps = options.maxOps ?? 128;
  }

  /** A Range of the latest revision (no `revision` set), possibly sent with others. */
  range(request: RangeRequest): Promise<RangeResponse> {
    return new Promise<RangeResponse>((resolve, reject) => {
      this.#queue.push({ request, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#maxInFlight && this.#queue.length > 0) {
      const batch = this.#queue.length <= this.#maxOps ? this.#queue : this.#queue.slice(0, this.#maxOps);
      this.#queue = batch === this.#queue ? [] : this.#queue.slice(this.#maxOps);
      this.#inFlight++;
      const sent = batch.length === 1 ? this.#one(batch[0]!) : this.#many(batch);
      void sent.finally(() => {
        this.#inFlight--;
        this.#pump();
      });
    }
  }

  async #one(read: Pending): Promise<void> {
    try {
      read.resolve(await this.#options.range(read.request));
    } catch (err) {
      read.reject(err);
    }
  }

  async #many(batch: Pending[]): Promise<void> {
    // Identical counts (every watch cache's current-revision probe is the same one) and identical
    // keys-only reads (concurrent consistent GETs of one object) are asked once: one Txn reads one revision.
    const slot: number[] = [];
    const ops: { request_range: RangeRequest }[] = [];
    const counts = new Map<string, number>();
    for (const read of batch) {
      const r = read.request;
      if (r.count_only === true || r.keys_only === true) {
        const id = `${r.count_only === true ? "c" : "k"}${Buffer.from(r.key).toString("latin1")}\0${r.range_end === undefined ? "" : Buffer.from(r.range_end).toString("latin1")}`;
        const at = counts.get(id);
        if (at !== undefined) {
          slot.push(at);
          continue;
        }
        counts.set(id, ops.length);
      }
      slot.push(ops.length);
      ops.push({ request_range: r });
    }
    let res: TxnResponse;
    try {
      res = await this.#options.txn({ compare: [], success: ops, failure: [] });
    } catch (err) {
      for (const read of batch) read.reject(err);
      return;
    }
    for (let i = 0; i < batch.length; i++) {
      const answer = res.responses[slot[i]!]?.response_range;
      if (answer === null || answer === undefined) {
        batch[i]!.reject(new Error(`etcd: a read-only Txn of ${ops.length} ranges answered ${res.responses.length} of them`));
        continue;
      }
      // Every range of the Txn read the Txn's revision: the outer header is the one that counts.
      answer.header = res.header;
      batch[i]!.resolve(answer);
    }
  }
}
