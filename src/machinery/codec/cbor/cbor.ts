// CBOR (RFC 8949) for API objects, as upstream serves `application/cbor`:
// JSON-shaped values only, self-described (tag 55799 first), shortest heads,
// integers as integers up to 2^53, floats in the shortest form that keeps the
// value. Decoding is strict the way upstream's is: text-string map keys, no
// duplicate keys, bounded nesting; `__proto__` stays a plain key.

/** The self-described CBOR prefix, tag 55799 (`d9 d9 f7`), upstream writes before every item. */
export const CBOR_SELF_DESCRIBED: Readonly<Uint8Array> = Uint8Array.of(0xd9, 0xd9, 0xf7);
/** Nesting limit for both directions: far beyond any API object, well within the JS stack. */
export const MAX_CBOR_DEPTH = 1000;

export class CborError extends Error {
  constructor(message: string) {
    super(`cbor: ${message}`);
    this.name = "CborError";
  }
}

// ---------------------------------------------------------------- encode

const f32 = new Float32Array(1);
const TWO_32 = 4294967296;

class Out {
  buf = Buffer.allocUnsafe(1024);
  pos = 0;
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  head(major: number, n: number): void {
    this.ensure(9);
    const m = major << 5;
    if (n < 24) this.buf[this.pos++] = m | n;
    else if (n < 0x100) {
      this.buf[this.pos++] = m | 24;
      this.buf[this.pos++] = n;
    } else if (n < 0x10000) {
      this.buf[this.pos++] = m | 25;
      this.buf.writeUInt16BE(n, this.pos);
      this.pos += 2;
    } else if (n < TWO_32) {
      this.buf[this.pos++] = m | 26;
      this.buf.writeUInt32BE(n, this.pos);
      this.pos += 4;
    } else {
      this.buf[this.pos++] = m | 27;
      this.buf.writeUInt32BE(Math.floor(n / TWO_32), this.pos);
      this.buf.writeUInt32BE(n % TWO_32, this.pos + 4);
      this.pos += 8;
    }
  }
  text(s: string): void {
    // Short ASCII-ish strings: reserve the worst case and write the head after.
    const max = s.length * 3;
    if (max < 24) {
      this.ensure(1 + max);
      const n = this.buf.write(s, this.pos + 1, "utf8");
      this.buf[this.pos] = 0x60 | n;
      this.pos += 1 + n;
      return;
    }
    const n = Buffer.byteLength(s, "utf8");
    this.head(3, n);
    this.ensure(n);
    this.pos += this.buf.write(s, this.pos, "utf8");
  }
  number(v: number): void {
    if (Number.isSafeInteger(v)) {
      if (v >= 0) this.head(0, v);
      else this.head(1, -1 - v);
      return;
    }
    this.ensure(9);
    if (!Number.isFinite(v)) throw new CborError(`cannot encode ${v}: JSON has no such number`);
    f32[0] = v;
    if (f32[0] === v) {
      const half = toHalf(v);
      if (half !== undefined) {
        this.buf[this.pos++] = 0xf9;
        this.buf.writeUInt16BE(half, this.pos);
        this.pos += 2;
      } else {
        this.buf[this.pos++] = 0xfa;
        this.buf.writeFloatBE(v, this.pos);
        this.pos += 4;
      }
    } else {
      this.buf[this.pos++] = 0xfb;
      this.buf.writeDoubleBE(v, this.pos);
      this.pos += 8;
    }
  }
  value(v: unknown, depth: number): void {
    if (depth > MAX_CBOR_DEPTH) throw new CborError(`nesting deeper than ${MAX_CBOR_DEPTH}`);
    switch (typeof v) {
      case "string":
        return this.text(v);
      case "number":
        return this.number(v);
      case "boolean":
        this.ensure(1);
        this.buf[this.pos++] = v ? 0xf5 : 0xf4;
        return;
      case "object":
        if (v === null) {
          this.ensure(1);
          this.buf[this.pos++] = 0xf6;
          return;
        }
        if (Array.isArray(v)) {
          this.head(4, v.length);
          for (const item of v) this.value(item ?? null, depth + 1);
          return;
        }
        if (v instanceof Uint8Array) {
          this.head(2, v.length);
          this.ensure(v.length);
          this.buf.set(v, this.pos);
          this.pos += v.length;
          return;
        }
        {
          // As JSON.stringify: undefined members are left out.
          const obj = v as Record<string, unknown>;
          let n = 0;
          for (const key in obj) if (obj[key] !== undefined) n++;
          this.head(5, n);
          for (const key in obj) {
            const item = obj[key];
            if (item === undefined) continue;
            this.text(key);
            this.value(item, depth + 1);
          }
        }
        return;
      default:
        throw new CborError(`cannot encode a ${typeof v}`);
    }
  }
}

/** A float16 bit pattern for `v` when it holds the value exactly. */
function toHalf(v: number): number | undefined {
  if (v === 0) return Object.is(v, -0) ? 0x8000 : 0;
  const sign = v < 0 ? 0x8000 : 0;
  const a = Math.abs(v);
  const exp = Math.floor(Math.log2(a));
  if (exp > 15 || exp < -24) return undefined;
  if (exp >= -14) {
    const mant = a / 2 ** exp - 1;
    const bits = mant * 1024;
    if (!Number.isInteger(bits)) return undefined;
    return sign | ((exp + 15) << 10) | bits;
  }
  const bits = a / 2 ** -24; // subnormal
  return Number.isInteger(bits) ? sign | bits : undefined;
}

const shared = new Out();

/** Self-described CBOR for a JSON-shaped value (objects, arrays, strings, numbers, booleans, null). */
export function encodeCbor(value: unknown): Buffer {
  const out = shared;
  out.pos = 0;
  out.ensure(3);
  out.buf.set(CBOR_SELF_DESCRIBED, 0);
  out.pos = 3;
  out.value(value, 0);
  const bytes = Buffer.from(out.buf.subarray(0, out.pos));
  if (out.buf.length > 4 << 20) out.buf = Buffer.allocUnsafe(1024); // do not keep one huge list's buffer
  return bytes;
}

// ---------------------------------------------------------------- decode

class In {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  need(n: number): void {
    if (this.pos + n > this.buf.length) throw new CborError("unexpected end of data");
  }
  /** The argument of a head whose additional info is `info` (0..27); -1 for indefinite (31). */
  arg(info: number): number {
    if (info < 24) return info;
    const b = this.buf;
    switch (info) {
      case 24:
        this.need(1);
        return b[this.pos++]!;
      case 25:
        this.need(2);
        this.pos += 2;
        return b.readUInt16BE(this.pos - 2);
      case 26:
        this.need(4);
        this.pos += 4;
        return b.readUInt32BE(this.pos - 4);
      case 27: {
        this.need(8);
        const hi = b.readUInt32BE(this.pos);
        const lo = b.readUInt32BE(this.pos + 4);
        this.pos += 8;
        const n = hi * TWO_32 + lo;
        if (!Number.isSafeInteger(n)) throw new CborError("integer beyond 2^53 cannot be represented");
        return n;
      }
      case 31:
        return -1;
      default:
        throw new CborError(`reserved additional information ${info}`);
    }
  }
  string(major: number, info: number): string | Uint8Array {
    const n = this.arg(info);
    if (n < 0) {
      // Indefinite: definite chunks of the same major type until the break.
      const parts: Buffer[] = [];
      for (;;) {
        this.need(1);
        const ib = this.buf[this.pos++]!;
        if (ib === 0xff) break;
        if (ib >> 5 !== major || (ib & 31) === 31) throw new CborError("bad chunk in an indefinite-length string");
        const len = this.arg(ib & 31);
        this.need(len);
        parts.push(this.buf.subarray(this.pos, (this.pos += len)));
      }
      const all = Buffer.concat(parts);
      return major === 3 ? utf8(all) : Uint8Array.from(all);
    }
    this.need(n);
    const bytes = this.buf.subarray(this.pos, (this.pos += n));
    return major === 3 ? utf8(bytes) : Uint8Array.from(bytes);
  }
  value(depth: number): unknown {
    if (depth > MAX_CBOR_DEPTH) throw new CborError(`nesting deeper than ${MAX_CBOR_DEPTH}`);
    this.need(1);
    const ib = this.buf[this.pos++]!;
    const major = ib >> 5;
    const info = ib & 31;
    switch (major) {
      case 0:
        if (info === 31) throw new CborError("indefinite length on an integer");
        return this.arg(info);
      case 1:
        if (info === 31) throw new CborError("indefinite length on an integer");
        return -1 - this.arg(info);
      case 2: {
        // Byte strings become base64 text, as a []byte field reads in JSON.
        const bytes = this.string(2, info) as Uint8Array;
        return Buffer.from(bytes).toString("base64");
      }
      case 3:
        return this.string(3, info);
      case 4: {
        const n = this.arg(info);
        const out: unknown[] = [];
        if (n < 0) {
          while (!this.#brk()) out.push(this.value(depth + 1));
        } else {
          if (n > this.buf.length - this.pos) throw new CborError("array longer than the data");
          for (let i = 0; i < n; i++) out.push(this.value(depth + 1));
        }
        return out;
      }
      case 5: {
        const n = this.arg(info);
        if (n > this.buf.length - this.pos) throw new CborError("map longer than the data");
        const out: Record<string, unknown> = {};
        for (let i = 0; n < 0 ? !this.#brk() : i < n; i++) {
          this.need(1);
          const kb = this.buf[this.pos]!;
          if (kb >> 5 !== 3) throw new CborError("map keys must be text strings");
          this.pos++;
          const key = this.string(3, kb & 31) as string;
          if (Object.prototype.hasOwnProperty.call(out, key)) throw new CborError(`found duplicate map key ${JSON.stringify(key)}`);
          const item = this.value(depth + 1);
          // defineProperty: "__proto__" is data, never the prototype.
          if (key === "__proto__") Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
          else out[key] = item;
        }
        return out;
      }
      case 6: {
        const tag = this.arg(info);
        if (tag !== 55799) throw new CborError(`unsupported tag ${tag}`);
        return this.value(depth);
      }
      default:
        switch (info) {
          case 20:
            return false;
          case 21:
            return true;
          case 22:
          case 23:
            return null; // null and undefined
          case 25: {
            this.need(2);
            const h = this.buf.readUInt16BE(this.pos);
            this.pos += 2;
            return fromHalf(h);
          }
          case 26:
            this.need(4);
            this.pos += 4;
            return finite(this.buf.readFloatBE(this.pos - 4));
          case 27:
            this.need(8);
            this.pos += 8;
            return finite(this.buf.readDoubleBE(this.pos - 8));
          default:
            throw new CborError(info === 31 ? "unexpected break" : `unsupported simple value ${info}`);
        }
    }
  }
  #brk(): boolean {
    this.need(1);
    if (this.buf[this.pos] !== 0xff) return false;
    this.pos++;
    return true;
  }
}

const decoder = new TextDecoder("utf-8", { fatal: true });
function utf8(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes);
  } catch {
    throw new CborError("invalid UTF-8 in a text string");
  }
}

function finite(v: number): number {
  if (!Number.isFinite(v)) throw new CborError(`${v} has no JSON form`);
  return v;
}

function fromHalf(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) throw new CborError(`${mant === 0 ? "infinity" : "NaN"} has no JSON form`);
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** The one data item in `bytes` (an optional 55799 tag first); trailing bytes are an error. */
export function decodeCbor(bytes: Uint8Array): unknown {
  const r = new In(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
  if (r.buf.length === 0) throw new CborError("empty data");
  const value = r.value(0);
  if (r.pos !== r.buf.length) throw new CborError(`${r.buf.length - r.pos} bytes of extraneous data after the item`);
  return value;
}

/** Every item of a CBOR sequence (RFC 8742), as a watch stream in `application/cbor-seq`. */
export function decodeCborSequence(bytes: Uint8Array): unknown[] {
  const r = new In(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
  const out: unknown[] = [];
  while (r.pos < r.buf.length) out.push(r.value(0));
  return out;
}

/** True when `bytes` starts with the self-described tag, as every body upstream writes does. */
export function isSelfDescribedCbor(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xd9 && bytes[1] === 0xd9 && bytes[2] === 0xf7;
}
