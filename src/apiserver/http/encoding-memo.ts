// Serialized forms of cached objects (JSON items where the stored bytes cannot
// be spliced, Protobuf list items, whole watch frames) are memoized on the
// cache record, so a burst of watchers or a repeated LIST encodes each version
// once. The memo is bounded by bytes and lets the oldest go first: a watch
// frame is wanted while its event fans out, a few seconds, but memoized on a
// current record it stayed for as long as the object did: at 30,000 pods a
// second copy of every pod's JSON in `orch server`'s memory.

import { ownBytes } from "../../storage/bytes.js";
import type { Cached } from "../../storage/cacher/cached.js";

interface Memo {
  readonly cached: Cached<unknown>;
  readonly key: string;
  readonly bytes: Uint8Array;
}

export class EncodingMemo {
  /** Memos in the order made; [head, length) are live, older slots are emptied. */
  #memos: (Memo | undefined)[] = [];
  #head = 0;
  #bytes = 0;

  constructor(readonly limitBytes: number) {}

  /** Bytes memoized now (never above the limit once a set returns). */
  get bytes(): number {
    return this.#bytes;
  }

  get(cached: Cached<unknown>, key: string): Uint8Array | undefined {
    return cached.encoded.get(key);
  }

  /**
   * Memoizes `bytes` (a copy of its own when it is a small view of a larger
   * buffer, such as a pool slab, which it would keep alive); an object that is
   * not stored (revision 0: a dry run, a delete's answer) is never asked again.
   */
  set(cached: Cached<unknown>, key: string, encoded: Uint8Array): void {
    if (cached.revision <= 0) return;
    const bytes = ownBytes(encoded);
    cached.encoded.set(key, bytes);
    this.#memos.push({ cached, key, bytes });
    this.#bytes += bytes.length;
    while (this.#bytes > this.limitBytes && this.#head < this.#memos.length) {
      const oldest = this.#memos[this.#head]!;
      this.#memos[this.#head++] = undefined;
      this.#bytes -= oldest.bytes.length;
      // A superseded record cleared its memo already; a newer memo under the same key is not this one's to drop.
      if (oldest.cached.encoded.get(oldest.key) === oldest.bytes) oldest.cached.encoded.delete(oldest.key);
    }
    if (this.#head > 1024 && this.#head * 2 > this.#memos.length) {
      this.#memos = this.#memos.slice(this.#head);
      this.#head = 0;
    }
  }
}

/**
 * The API server's memo: 32 MiB holds about ten seconds of events at 2,000 pod
 * writes a second, longer than a fan-out lasts, and a 500-item list many times.
 */
export const encodingMemo = new EncodingMemo(32 << 20);
