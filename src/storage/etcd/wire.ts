// A hand-written protobuf codec for the etcd v3 messages on orch's hot path
// (KV Range/Put/DeleteRange/Txn/Compact, Maintenance.Status, Watch): each
// encoder writes a whole gRPC frame (5-byte prefix included) in one buffer,
// each decoder reads straight into the shapes rpc.ts declares (the same shapes
// protobufjs produced: snake_case, int64 as numbers, enums as names, absent
// sub-messages as null, bytes as Buffer views of the received frame).
// Field numbers are those of etcd's rpc.proto / kv.proto (beside this file).

import type {
  CompactionRequest,
  CompactionResponse,
  Compare,
  DeleteRangeRequest,
  DeleteRangeResponse,
  MvccEvent,
  MvccKeyValue,
  PutRequest,
  PutResponse,
  RangeRequest,
  RangeResponse,
  RequestOp,
  ResponseHeader,
  ResponseOp,
  StatusResponse,
  TxnRequest,
  TxnResponse,
  WatchRequest,
  WatchResponse,
} from "./rpc.js";

/** Encodes a request as one gRPC frame; decodes a response message (frame prefix removed). */
export interface WireCodec<Req, Res> {
  encode(request: Req): Buffer;
  decode(bytes: Buffer): Res;
}

// --- writing ---

const TWO_32 = 4294967296;
const FRAME_PREFIX = 5;

/**
 * Writes into one scratch buffer shared by every encode (encodes are
 * synchronous), then copies the finished frame out. A nested message reserves
 * one byte for its length and moves its body when the length needs more.
 */
class Writer {
  buf = Buffer.allocUnsafe(64 * 1024);
  pos = FRAME_PREFIX;

  reset(): void {
    this.pos = FRAME_PREFIX;
  }

  #room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  varint(value: number): void {
    this.#room(10);
    const buf = this.buf;
    let pos = this.pos;
    if (value < 0) {
      // int64 two's complement, ten bytes (etcd's -1 watch ids; never on our hot path).
      let v = BigInt.asUintN(64, BigInt(Math.trunc(value)));
      while (v >= 0x80n) {
        buf[pos++] = Number(v & 0x7fn) | 0x80;
        v >>= 7n;
      }
      buf[pos++] = Number(v);
      this.pos = pos;
      return;
    }
    while (value >= 0x80000000) {
      buf[pos++] = (value % 128) | 0x80;
      value = Math.floor(value / 128);
    }
    while (value >= 0x80) {
      buf[pos++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    buf[pos++] = value;
    this.pos = pos;
  }

  tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  /** A varint field, skipped at its default (0) as proto3 does. */
  int(field: number, value: number | undefined): void {
    if (value === undefined || value === 0) return;
    this.tag(field, 0);
    this.varint(value);
  }

  /** A oneof varint member: written even when 0, so the member is present. */
  intAlways(field: number, value: number): void {
    this.tag(field, 0);
    this.varint(value);
  }

  bool(field: number, value: boolean | undefined): void {
    if (value !== true) return;
    this.tag(field, 0);
    this.varint(1);
  }

  bytes(field: number, value: Uint8Array | undefined): void {
    if (value === undefined || value.length === 0) return;
    this.tag(field, 2);
    this.varint(value.length);
    this.#room(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /** Opens a length-delimited sub-message; pass the result to end(). */
  begin(field: number): number {
    this.tag(field, 2);
    this.#room(1);
    return this.pos++;
  }

  end(start: number): void {
    const length = this.pos - start - 1;
    const size = varintSize(length);
    if (size > 1) {
      this.#room(size - 1);
      this.buf.copyWithin(start + size, start + 1, this.pos);
      this.pos += size - 1;
    }
    const end = this.pos;
    this.pos = start;
    this.varint(length);
    this.pos = end;
  }

  /** The frame: uncompressed flag, big-endian length, message. */
  frame(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    out[0] = 0;
    out.writeUInt32BE(this.pos - FRAME_PREFIX, 1);
    return out;
  }
}

function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

const writer = new Writer();

function encodeWith<Req>(write: (w: Writer, request: Req) => void): (request: Req) => Buffer {
  return (request) => {
    writer.reset();
    write(writer, request);
    return writer.frame();
  };
}

function writeRange(w: Writer, r: RangeRequest): void {
  w.bytes(1, r.key);
  w.bytes(2, r.range_end);
  w.int(3, r.limit);
  w.int(4, r.revision);
  w.bool(8, r.keys_only);
  w.bool(9, r.count_only);
}

function writePut(w: Writer, r: PutRequest): void {
  w.bytes(1, r.key);
  w.bytes(2, r.value);
  w.bool(4, r.prev_kv);
}

function writeDeleteRange(w: Writer, r: DeleteRangeRequest): void {
  w.bytes(1, r.key);
  w.bytes(2, r.range_end);
  w.bool(3, r.prev_kv);
}

const COMPARE_RESULT = { EQUAL: 0, GREATER: 1, LESS: 2, NOT_EQUAL: 3 } as const;
const COMPARE_TARGET = { VERSION: 0, CREATE: 1, MOD: 2 } as const;

function writeCompare(w: Writer, c: Compare): void {
  w.int(1, COMPARE_RESULT[c.result]);
  w.int(2, COMPARE_TARGET[c.target]);
  w.bytes(3, c.key);
  if (c.target === "VERSION") w.intAlways(4, c.version);
  else if (c.target === "CREATE") w.intAlways(5, c.create_revision);
  else w.intAlways(6, c.mod_revision);
}

function writeOp(w: Writer, field: number, op: RequestOp): void {
  const outer = w.begin(field);
  if ("request_range" in op) {
    const at = w.begin(1);
    writeRange(w, op.request_range);
    w.end(at);
  } else if ("request_put" in op) {
    const at = w.begin(2);
    writePut(w, op.request_put);
    w.end(at);
  } else {
    const at = w.begin(3);
    writeDeleteRange(w, op.request_delete_range);
    w.end(at);
  }
  w.end(outer);
}

function writeTxn(w: Writer, t: TxnRequest): void {
  for (const c of t.compare) {
    const at = w.begin(1);
    writeCompare(w, c);
    w.end(at);
  }
  for (const op of t.success) writeOp(w, 2, op);
  for (const op of t.failure) writeOp(w, 3, op);
}

function writeWatch(w: Writer, r: WatchRequest): void {
  if ("create_request" in r) {
    const c = r.create_request;
    const at = w.begin(1);
    w.bytes(1, c.key);
    w.bytes(2, c.range_end);
    w.int(3, c.start_revision);
    w.bool(4, c.progress_notify);
    w.bool(6, c.prev_kv);
    w.end(at);
  } else if ("cancel_request" in r) {
    const at = w.begin(2);
    w.int(1, r.cancel_request.watch_id);
    w.end(at);
  } else {
    w.end(w.begin(3));
  }
}

// --- reading ---

class WireError extends Error {}

/** A cursor over one message; `end` bounds a nested message. */
class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    pos: number,
    readonly end: number,
  ) {
    this.pos = pos;
  }

  /** A varint as a signed int64 (etcd's revisions, counts, watch ids). */
  int64(): number {
    const buf = this.buf;
    let b = buf[this.pos++]!;
    if (b < 0x80) return b;
    let lo = b & 0x7f;
    b = buf[this.pos++]!;
    lo |= (b & 0x7f) << 7;
    if (b < 0x80) return lo;
    b = buf[this.pos++]!;
    lo |= (b & 0x7f) << 14;
    if (b < 0x80) return lo;
    b = buf[this.pos++]!;
    lo |= (b & 0x7f) << 21;
    if (b < 0x80) return lo;
    return this.#long(lo, false);
  }

  /** A varint as an unsigned uint64 (member ids, terms; above 2^53 they lose low bits, as with protobufjs's longs: Number). */
  uint64(): number {
    const buf = this.buf;
    const b = buf[this.pos]!;
    if (b < 0x80) {
      this.pos++;
      return b;
    }
    let lo = 0;
    let shift = 0;
    for (let i = 0; i < 4; i++) {
      const c = buf[this.pos++]!;
      lo |= (c & 0x7f) << shift;
      shift += 7;
      if (c < 0x80) return lo >>> 0;
    }
    return this.#long(lo, true);
  }

  /** The rest of a varint whose first 28 bits are in lo. */
  #long(lo: number, unsigned: boolean): number {
    const buf = this.buf;
    let b = buf[this.pos++];
    if (b === undefined) throw new WireError("truncated varint");
    lo = (lo | ((b & 0x0f) << 28)) >>> 0;
    let hi = (b & 0x7f) >> 4;
    if (b >= 0x80) {
      for (let shift = 3; ; shift += 7) {
        b = buf[this.pos++];
        if (b === undefined || shift > 31) throw new WireError("malformed varint");
        hi |= (b & 0x7f) << shift;
        if (b < 0x80) break;
      }
    }
    hi >>>= 0;
    if (!unsigned && hi >= 0x80000000) return -((~hi >>> 0) * TWO_32 + (~lo >>> 0) + 1);
    return hi * TWO_32 + lo;
  }

  bool(): boolean {
    return this.int64() !== 0;
  }

  /** A length-delimited field's [start, end). */
  #span(): number {
    const length = this.int64();
    const start = this.pos;
    const end = start + length;
    if (length < 0 || end > this.end) throw new WireError("length beyond the message");
    this.pos = end;
    return start;
  }

  bytes(): Buffer {
    const start = this.#span();
    return this.buf.subarray(start, this.pos);
  }

  string(): string {
    const start = this.#span();
    return this.buf.toString("utf8", start, this.pos);
  }

  /** A reader over a nested message. */
  sub(): Reader {
    const start = this.#span();
    return new Reader(this.buf, start, this.pos);
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.int64();
        return;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.#span();
        return;
      case 5:
        this.pos += 4;
        break;
      default:
        throw new WireError(`unsupported wire type ${wireType}`);
    }
    if (this.pos > this.end) throw new WireError("field beyond the message");
  }

  /** The next tag (field << 3 | wire type), or -1 at the end of the message. */
  next(): number {
    if (this.pos >= this.end) {
      if (this.pos > this.end) throw new WireError("truncated message");
      return -1;
    }
    return this.int64();
  }
}

const EMPTY: Buffer = Buffer.alloc(0);

function readHeader(r: Reader): ResponseHeader {
  const h = { cluster_id: 0, member_id: 0, revision: 0, raft_term: 0 };
  for (let tag = r.next(); tag !== -1; tag = r.next()) {
    switch (tag) {
      case (1 << 3) | 0:
        h.cluster_id = r.uint64();
        break;
      case (2 << 3) | 0:
        h.member_id = r.uint64();
        break;
      case (3 << 3) | 0:
        h.revision = r.int64();
        break;
      case (4 << 3) | 0:
        h.raft_term = r.uint64();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return h;
}

const noHeader = (): ResponseHeader => ({ cluster_id: 0, member_id: 0, revision: 0, raft_term: 0 });

function readKv(r: Reader): MvccKeyValue {
  const kv = { key: EMPTY, create_revision: 0, mod_revision: 0, version: 0, value: EMPTY, lease: 0 };
  for (let tag = r.next(); tag !== -1; tag = r.next()) {
    switch (tag) {
      case (1 << 3) | 2:
        kv.key = r.bytes();
        break;
      case (2 << 3) | 0:
        kv.create_revision = r.int64();
        break;
      case (3 << 3) | 0:
        kv.mod_revision = r.int64();
        break;
      case (4 << 3) | 0:
        kv.version = r.int64();
        break;
      case (5 << 3) | 2:
        kv.value = r.bytes();
        break;
      case (6 << 3) | 0:
        kv.lease = r.int64();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return kv;
}

function readRange(r: Reader): RangeResponse {
  const res: RangeResponse = { header: noHeader(), kvs: [], more: false, count: 0 };
  for (let tag = r.next(); tag !== -1; tag = r.next()) {
    switch (tag) {
      case (1 << 3) | 2:
        res.header = readHeader(r.sub());
        break;
      case (2 << 3) | 2:
        res.kvs.push(readKv(r.sub()));
        break;
      case (3 << 3) | 0:
        res.more = r.bool();
        break;
      case (4 << 3) | 0:
        res.count = r.int64();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return res;
}

function readPut(r: Reader): PutResponse {
  const res: PutResponse = { header: noHeader(), prev_kv: null };
  for (let tag = r.next(); tag !== -1; tag = r.next()) {
    if (tag === ((1 << 3) | 2)) res.header = readHeader(r.sub());
    else if (tag === ((2 << 3) | 2)) res.prev_kv = readKv(r.sub());
    else r.skip(tag & 7);
  }
  return res;
}

function readDeleteRange(r: Reader): DeleteRangeResponse {
  const res: DeleteRangeResponse = { header: noHeader(), deleted: 0, prev_kvs: [] };
  for (let tag = r.next(); tag !== -1; tag = r.next()) {
    if (tag === ((1 << 3) | 2)) res.header = readHeader(r.sub());
    else if (tag === ((2 << 3) | 0)) res.deleted = r.int64();
    else if (tag === ((3 << 3) | 2)) res.prev_kvs.push(readKv(r.sub()));
    else r.skip(tag & 7);
  }
  return res;
}

function readOp(r: Reader): ResponseOp {
  const op: ResponseOp = { response_range: null, response_put: null, response_delete_range: null };
  for (let tag = r.next(); tag !== -1; tag = r.next()) {
    if (tag === ((1 << 3) | 2)) op.response_range = readRange(r.sub());
    else if (tag === ((2 << 3) | 2)) op.response_put = readPut(r.sub());
    else if (tag === ((3 << 3) | 2)) op.response_delete_range = readDeleteRange(r.sub());
    else r.skip(tag & 7); // a nested Txn's answer: orch sends none
  }
  return op;
}

function readTxn(r: Reader): TxnResponse {
  const res: TxnResponse = { header: noHeader(), succeeded: false, responses: [] };
  for (let tag = r.next(); tag !== -1; tag = r.next()) {
    if (tag === ((1 << 3) | 2)) res.header = readHeader(r.sub());
    else if (tag === ((2 << 3) | 0)) res.succeeded = r.bool();
    else if (tag === ((3 << 3) | 2)) res.responses.push(readOp(r.sub()));
    else r.skip(tag & 7);
  }
  return res;
}

function readCompaction(r: Reader): CompactionResponse {
  const res: CompactionResponse = { header: noHeader() };
  for (let tag = r.next(); tag !== -1; tag = r.next()) {
    if (tag === ((1 << 3) | 2)) res.header = readHeader(r.sub());
    else r.skip(tag & 7);
  }
  return res;
}

function readStatus(r: Reader): StatusResponse {
  const res: StatusResponse = { header: noHeader(), version: "", dbSize: 0, leader: 0 };
  for (let tag = r.next(); tag !== -1; tag = r.next()) {
    if (tag === ((1 << 3) | 2)) res.header = readHeader(r.sub());
    else if (tag === ((2 << 3) | 2)) res.version = r.string();
    else if (tag === ((3 << 3) | 0)) res.dbSize = r.int64();
    else if (tag === ((4 << 3) | 0)) res.leader = r.uint64();
    else r.skip(tag & 7);
  }
  return res;
}

function readEvent(r: Reader): MvccEvent {
  const event: MvccEvent = { type: "PUT", kv: null, prev_kv: null };
  for (let tag = r.next(); tag !== -1; tag = r.next()) {
    if (tag === ((1 << 3) | 0)) event.type = r.int64() === 1 ? "DELETE" : "PUT";
    else if (tag === ((2 << 3) | 2)) event.kv = readKv(r.sub());
    else if (tag === ((3 << 3) | 2)) event.prev_kv = readKv(r.sub());
    else r.skip(tag & 7);
  }
  return event;
}

function readWatch(r: Reader): WatchResponse {
  const res: WatchResponse = {
    header: null,
    watch_id: 0,
    created: false,
    canceled: false,
    compact_revision: 0,
    cancel_reason: "",
    events: [],
  };
  for (let tag = r.next(); tag !== -1; tag = r.next()) {
    switch (tag) {
      case (1 << 3) | 2:
        res.header = readHeader(r.sub());
        break;
      case (2 << 3) | 0:
        res.watch_id = r.int64();
        break;
      case (3 << 3) | 0:
        res.created = r.bool();
        break;
      case (4 << 3) | 0:
        res.canceled = r.bool();
        break;
      case (5 << 3) | 0:
        res.compact_revision = r.int64();
        break;
      case (6 << 3) | 2:
        res.cancel_reason = r.string();
        break;
      case (11 << 3) | 2:
        res.events.push(readEvent(r.sub()));
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return res;
}

function decodeWith<Res>(read: (r: Reader) => Res): (bytes: Buffer) => Res {
  return (bytes) => read(new Reader(bytes, 0, bytes.length));
}

/** The codecs of the methods orch calls on its hot path. */
export const wire = {
  range: { encode: encodeWith(writeRange), decode: decodeWith(readRange) } as WireCodec<RangeRequest, RangeResponse>,
  put: { encode: encodeWith(writePut), decode: decodeWith(readPut) } as WireCodec<PutRequest, PutResponse>,
  deleteRange: { encode: encodeWith(writeDeleteRange), decode: decodeWith(readDeleteRange) } as WireCodec<DeleteRangeRequest, DeleteRangeResponse>,
  txn: { encode: encodeWith(writeTxn), decode: decodeWith(readTxn) } as WireCodec<TxnRequest, TxnResponse>,
  compact: {
    encode: encodeWith((w, r: CompactionRequest) => {
      w.int(1, r.revision);
      w.bool(2, r.physical);
    }),
    decode: decodeWith(readCompaction),
  } as WireCodec<CompactionRequest, CompactionResponse>,
  status: { encode: encodeWith(() => {}), decode: decodeWith(readStatus) } as WireCodec<Record<string, never>, StatusResponse>,
  watch: { encode: encodeWith(writeWatch), decode: decodeWith(readWatch) } as WireCodec<WatchRequest, WatchResponse>,
};

export { WireError };

const byPath = new Map<string, WireCodec<never, unknown>>([
  ["/etcdserverpb.KV/Range", wire.range],
  ["/etcdserverpb.KV/Put", wire.put],
  ["/etcdserverpb.KV/DeleteRange", wire.deleteRange],
  ["/etcdserverpb.KV/Txn", wire.txn],
  ["/etcdserverpb.KV/Compact", wire.compact],
  ["/etcdserverpb.Maintenance/Status", wire.status],
  ["/etcdserverpb.Watch/Watch", wire.watch],
] as [string, WireCodec<never, unknown>][]);

/** The hand-written codec of a method (by its gRPC path), or undefined: protobufjs's serializers then do. */
export function wireCodec<Req, Res>(path: string): WireCodec<Req, Res> | undefined {
  return byPath.get(path) as WireCodec<Req, Res> | undefined;
}
