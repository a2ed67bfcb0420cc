// Protobuf wire primitives for the codec: a growable writer and a bounds-checked
// reader. Upstream's generated code (gogo, proto2) uses plain varints for int32,
// int64 and bool (a negative int32 is sign-extended to a 10-byte varint), never
// zigzag, and fixed64 only for doubles. Errors are ProtobufError, never RangeError.

/** Wire types used by upstream's messages (groups, 3 and 4, are only skipped). */
export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_FIXED32 = 5;

/** Why encoding or decoding failed; `path` names the field (`spec.containers[0].ports`). */
export class ProtobufError extends Error {
  readonly code: "ProtobufDecode" | "ProtobufEncode";
  #path: string[] = [];
  readonly detail: string;
  constructor(code: "ProtobufDecode" | "ProtobufEncode", detail: string, options?: { cause?: unknown }) {
    super(`${code === "ProtobufDecode" ? "protobuf decode" : "protobuf encode"}: ${detail}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ProtobufError";
    this.code = code;
    this.detail = detail;
  }
  /** The field path, outermost first: `spec.containers[0].ports`. */
  get path(): string {
    let out = "";
    for (const segment of this.#path) out += out === "" || segment.startsWith("[") ? segment : `.${segment}`;
    return out;
  }
  /** Called while the error unwinds through enclosing fields, innermost first. */
  within(segment: string): this {
    this.#path.unshift(segment);
    this.message = `${this.code === "ProtobufDecode" ? "protobuf decode" : "protobuf encode"}: ${this.path}: ${this.detail}`;
    return this;
  }
}

export function isProtobufError(err: unknown): err is ProtobufError {
  return err instanceof ProtobufError;
}

const TWO_32 = 4294967296;
const EMPTY = new Uint8Array(0);

/**
 * Appends to one growing buffer. Length-delimited values reserve one length
 * byte and move their content in the rare case it outgrows 127 bytes, so a
 * message is written in one pass without computing sizes first.
 */
export class Writer {
  buf: Buffer;
  pos = 0;

  constructor(initialSize = 1024) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  /** Room for n more bytes. */
  ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** The bytes written so far, copied out (the writer may be reused). */
  finish(): Uint8Array {
    const out = new Uint8Array(this.pos);
    out.set(this.buf.subarray(0, this.pos));
    return out;
  }

  uint32(v: number): void {
    this.ensure(5);
    const buf = this.buf;
    let pos = this.pos;
    while (v > 127) {
      buf[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[pos++] = v;
    this.pos = pos;
  }

  /** A 64-bit varint from its two's-complement halves. */
  varint64(lo: number, hi: number): void {
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    while (hi !== 0 || lo > 127) {
      buf[pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    buf[pos++] = lo;
    this.pos = pos;
  }

  /** int32: non-negative as is, negative sign-extended to 64 bits (10 bytes), as Go does. */
  int32(v: number): void {
    if (v >= 0) this.uint32(v);
    else this.varint64(v >>> 0, 0xffffffff);
  }

  /** int64 from a JS integer (exact within ±2^53). */
  int64(v: number): void {
    if (v >= 0 && v < TWO_32) {
      this.uint32(v);
      return;
    }
    const neg = v < 0;
    const abs = neg ? -v : v;
    let lo = abs % TWO_32 >>> 0;
    let hi = Math.floor(abs / TWO_32) >>> 0;
    if (neg) {
      lo = (~lo + 1) >>> 0;
      hi = (~hi + (lo === 0 ? 1 : 0)) >>> 0;
    }
    this.varint64(lo, hi);
  }

  double(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** Length prefix and bytes. */
  bytes(bytes: Uint8Array): void {
    this.uint32(bytes.length);
    this.raw(bytes);
  }

  /** Length prefix and the UTF-8 of s (lone surrogates become U+FFFD, as TextEncoder and Go's JSON do). */
  string(s: string): void {
    const n = s.length;
    if (n < 64) {
      // Short strings, most of an object: ASCII in a loop beats a native call.
      this.ensure(1 + n);
      const buf = this.buf;
      const start = this.pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c > 127) break;
        buf[start + i] = c;
      }
      if (i === n) {
        buf[this.pos] = n;
        this.pos = start + n;
        return;
      }
    }
    const size = Buffer.byteLength(s, "utf8");
    this.uint32(size);
    this.ensure(size);
    this.buf.write(s, this.pos, size, "utf8");
    this.pos += size;
  }

  /** Starts a length-delimited value: reserves one length byte and returns the mark for `join`. */
  fork(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Ends the value started at `mark`: writes its length, moving the content when the length needs more than one byte. */
  join(mark: number): void {
    const len = this.pos - mark - 1;
    if (len < 128) {
      this.buf[mark] = len;
      return;
    }
    let extra = 0;
    for (let v = len >>> 7; v > 0; v >>>= 7) extra++;
    this.ensure(extra);
    const buf = this.buf;
    buf.copyWithin(mark + 1 + extra, mark + 1, this.pos);
    let v = len;
    let p = mark;
    while (v > 127) {
      buf[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[p] = v;
    this.pos += extra;
  }
}

/**
 * Reads one message's bytes. `lo`/`hi` hold the last 64-bit varint, so no
 * varint read allocates. Every read checks bounds against `end`.
 */
export class Reader {
  readonly buf: Buffer;
  pos: number;
  end: number;
  lo = 0;
  hi = 0;

  constructor(buf: Uint8Array, pos = 0, end = buf.length) {
    this.buf = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = pos;
    this.end = end;
  }

  static fail(detail: string): never {
    throw new ProtobufError("ProtobufDecode", detail);
  }

  /** A varint that must fit 32 bits unsigned (tags, lengths). */
  uint32(): number {
    const buf = this.buf;
    let pos = this.pos;
    if (pos < this.end && buf[pos]! < 0x80) {
      this.pos = pos + 1;
      return buf[pos]!;
    }
    this.varint();
    if (this.hi !== 0) Reader.fail("varint does not fit 32 bits");
    return this.lo;
  }

  /** Any varint, into lo/hi (up to 10 bytes, as Go accepts). */
  varint(): void {
    const buf = this.buf;
    const end = this.end;
    let pos = this.pos;
    let lo = 0;
    let hi = 0;
    let b = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (pos >= end) Reader.fail("unexpected EOF in varint");
      b = buf[pos++]!;
      lo |= (b & 0x7f) << shift;
      if (b < 0x80) {
        this.pos = pos;
        this.lo = lo >>> 0;
        this.hi = 0;
        return;
      }
    }
    // Byte 5 straddles the halves: 4 bits to lo, 3 to hi.
    if (pos >= end) Reader.fail("unexpected EOF in varint");
    b = buf[pos++]!;
    lo |= (b & 0x0f) << 28;
    hi = (b & 0x7f) >> 4;
    if (b >= 0x80) {
      for (let shift = 3; ; shift += 7) {
        if (shift > 31) Reader.fail("varint longer than 10 bytes");
        if (pos >= end) Reader.fail("unexpected EOF in varint");
        b = buf[pos++]!;
        hi |= (b & 0x7f) << shift;
        if (b < 0x80) break;
      }
    }
    this.pos = pos;
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
  }

  int32(): number {
    this.varint();
    return this.lo | 0;
  }

  /** int64 as a JS number (exact within ±2^53). */
  int64(): number {
    this.varint();
    const { lo, hi } = this;
    if (hi & 0x80000000) return -((~hi >>> 0) * TWO_32 + (~lo >>> 0) + 1);
    return hi * TWO_32 + lo;
  }

  bool(): boolean {
    this.varint();
    return this.lo !== 0 || this.hi !== 0;
  }

  double(): number {
    if (this.pos + 8 > this.end) Reader.fail("unexpected EOF in fixed64");
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  /** Reads a length prefix; returns the end of the value (the caller moves `pos` there). */
  len(): number {
    const n = this.uint32();
    const stop = this.pos + n;
    if (stop > this.end) Reader.fail(`length ${n} runs past the end of the message`);
    return stop;
  }

  /** A view into the input, not a copy. */
  bytes(): Uint8Array {
    const stop = this.len();
    const out = stop === this.pos ? EMPTY : this.buf.subarray(this.pos, stop);
    this.pos = stop;
    return out;
  }

  string(): string {
    const stop = this.len();
    const s = decodeUtf8(this.buf, this.pos, stop);
    this.pos = stop;
    return s;
  }

  /** Skips a value of the given wire type (unknown fields, as Go's skipGenerated). */
  skip(wireType: number, depth = 0): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        if (this.pos + 8 > this.end) Reader.fail("unexpected EOF in fixed64");
        this.pos += 8;
        return;
      case WIRE_LEN:
        this.pos = this.len();
        return;
      case WIRE_FIXED32:
        if (this.pos + 4 > this.end) Reader.fail("unexpected EOF in fixed32");
        this.pos += 4;
        return;
      case 3: {
        if (depth > 64) Reader.fail("groups nested too deeply");
        for (;;) {
          if (this.pos >= this.end) Reader.fail("unexpected EOF in group");
          const key = this.uint32();
          if ((key & 7) === 4) return;
          this.skip(key & 7, depth + 1);
        }
      }
      default:
        Reader.fail(`illegal wire type ${wireType}`);
    }
  }
}

/** UTF-8 bytes to a string; invalid sequences become U+FFFD as Go's JSON encoder writes them. */
export function decodeUtf8(buf: Buffer, start: number, end: number): string {
  const n = end - start;
  if (n === 0) return "";
  if (n < 12) {
    // Short ASCII (names, enum values) is cheaper in a loop than through a native call.
    let out = "";
    for (let i = start; i < end; i++) {
      const c = buf[i]!;
      if (c > 127) return buf.toString("utf8", start, end);
      out += String.fromCharCode(c);
    }
    return out;
  }
  return buf.toString("utf8", start, end);
}
