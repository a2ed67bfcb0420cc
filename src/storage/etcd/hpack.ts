// HPACK (RFC 7541) for the etcd client's own HTTP/2 framing (h2-frames.ts):
// a full decoder (static and dynamic tables, Huffman-coded strings, table
// size updates), since etcd's Go server compresses its answers' headers as it
// likes; and an encoder of the one kind our requests need, literal fields
// never added to the table and never Huffman-coded (a gRPC request's few
// headers are built once per method and reused, so compressing them would
// save bytes on loopback and cost CPU).

/** RFC 7541 Appendix A: the static table, entries 1-61. */
const STATIC_TABLE: readonly (readonly [string, string])[] = [
  [":authority", ""], [":method", "GET"], [":method", "POST"], [":path", "/"], [":path", "/index.html"],
  [":scheme", "http"], [":scheme", "https"], [":status", "200"], [":status", "204"], [":status", "206"],
  [":status", "304"], [":status", "400"], [":status", "404"], [":status", "500"], ["accept-charset", ""],
  ["accept-encoding", "gzip, deflate"], ["accept-language", ""], ["accept-ranges", ""], ["accept", ""],
  ["access-control-allow-origin", ""], ["age", ""], ["allow", ""], ["authorization", ""], ["cache-control", ""],
  ["content-disposition", ""], ["content-encoding", ""], ["content-language", ""], ["content-length", ""],
  ["content-location", ""], ["content-range", ""], ["content-type", ""], ["cookie", ""], ["date", ""], ["etag", ""],
  ["expect", ""], ["expires", ""], ["from", ""], ["host", ""], ["if-match", ""], ["if-modified-since", ""],
  ["if-none-match", ""], ["if-range", ""], ["if-unmodified-since", ""], ["last-modified", ""], ["link", ""],
  ["location", ""], ["max-forwards", ""], ["proxy-authenticate", ""], ["proxy-authorization", ""], ["range", ""],
  ["referer", ""], ["refresh", ""], ["retry-after", ""], ["server", ""], ["set-cookie", ""],
  ["strict-transport-security", ""], ["transfer-encoding", ""], ["user-agent", ""], ["vary", ""], ["via", ""],
  ["www-authenticate", ""],
];

/**
 * RFC 7541 Appendix B: the code length of each symbol (0-255, then EOS). The
 * code is canonical (codes of one length are consecutive, in symbol order,
 * and each length continues the last code of the shorter one), so the codes
 * themselves follow from the lengths; hpack.test.ts checks a few against the
 * RFC's table.
 */
const HUFFMAN_LENGTHS: readonly number[] = [13,23,28,28,28,28,28,28,28,24,30,28,28,30,28,28,28,28,28,28,28,28,30,28,28,28,28,28,28,28,28,28,6,10,10,12,13,6,8,11,10,10,8,11,8,6,6,6,5,5,5,6,6,6,6,6,6,6,7,8,15,6,12,10,13,6,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,8,7,8,13,19,13,14,6,15,5,6,5,6,5,6,6,6,5,7,7,6,6,6,5,6,7,6,5,5,6,7,7,7,7,7,15,11,14,13,28,20,22,20,20,22,22,22,23,22,23,23,23,23,23,24,23,24,24,22,23,24,23,23,23,23,21,22,23,22,23,23,24,22,21,20,22,22,23,23,21,23,22,22,24,21,22,23,23,21,21,22,21,23,22,23,23,20,22,22,22,23,22,22,23,26,26,20,19,22,23,22,25,26,26,26,27,27,26,24,25,19,21,26,27,27,26,27,24,21,21,26,26,28,27,27,27,20,24,20,21,22,21,21,23,22,22,25,25,24,24,26,23,26,27,26,26,27,27,27,27,27,28,27,27,27,27,27,26, 30];

const EOS = 256;

/** The decoding tree: node i's children are tree[2i] and tree[2i+1]; a leaf holds -1 - symbol, 0 is "none". */
const TREE: Int32Array = buildTree();

function buildTree(): Int32Array {
  const order = HUFFMAN_LENGTHS.map((_, symbol) => symbol).sort((a, b) => HUFFMAN_LENGTHS[a]! - HUFFMAN_LENGTHS[b]! || a - b);
  const tree: number[] = [0, 0];
  let nodes = 1;
  let code = 0;
  let previous = HUFFMAN_LENGTHS[order[0]!]!;
  order.forEach((symbol, i) => {
    const length = HUFFMAN_LENGTHS[symbol]!;
    if (i > 0) code = (code + 1) * 2 ** (length - previous);
    previous = length;
    let node = 0;
    for (let bit = length - 1; bit >= 0; bit--) {
      const slot = 2 * node + (Math.floor(code / 2 ** bit) % 2);
      if (bit === 0) {
        tree[slot] = -1 - symbol;
        break;
      }
      if (tree[slot] === 0) {
        tree[slot] = nodes++;
        tree.push(0, 0);
      }
      node = tree[slot]!;
    }
  });
  return Int32Array.from(tree);
}

export class HpackError extends Error {}

/** A Huffman-coded string (RFC 7541 5.2): padding of at most 7 one-bits, no EOS. */
export function decodeHuffman(buf: Uint8Array, start: number, end: number): string {
  const out: number[] = [];
  let node = 0;
  /** Bits read since the last symbol, and whether all were ones (the only valid padding). */
  let pending = 0;
  let ones = true;
  for (let i = start; i < end; i++) {
    const byte = buf[i]!;
    for (let bit = 7; bit >= 0; bit--) {
      const one = (byte >> bit) & 1;
      const next = TREE[2 * node + one]!;
      pending++;
      ones &&= one === 1;
      if (next < 0) {
        const symbol = -1 - next;
        if (symbol === EOS) throw new HpackError("EOS in a Huffman-coded string");
        out.push(symbol);
        node = 0;
        pending = 0;
        ones = true;
      } else node = next;
    }
  }
  if (pending > 7 || !ones) throw new HpackError("invalid padding of a Huffman-coded string");
  return Buffer.from(out).toString("latin1");
}

/** A header block's fields, in order (names are lower case by HTTP/2's rule). */
export type HeaderList = [string, string][];

/** One connection's decoding context (RFC 7541 2.3): the dynamic table it shares with the peer's encoder. */
export class HpackDecoder {
  /** Newest first. */
  readonly #table: [string, string][] = [];
  #size = 0;
  #maxSize: number;
  /** The most we allow the peer (SETTINGS_HEADER_TABLE_SIZE as we announced it). */
  readonly #limit: number;

  constructor(limit = 4096) {
    this.#limit = limit;
    this.#maxSize = limit;
  }

  /** Decode one complete header block; throws HpackError (a connection error: the contexts are out of step). */
  decode(block: Uint8Array): HeaderList {
    const fields: HeaderList = [];
    let pos = 0;
    const int = (prefixBits: number): number => {
      const mask = (1 << prefixBits) - 1;
      let value = block[pos++]! & mask;
      if (value < mask) return value;
      let shift = 0;
      for (;;) {
        if (pos >= block.length) throw new HpackError("truncated integer");
        const b = block[pos++]!;
        value += (b & 0x7f) * 2 ** shift;
        shift += 7;
        if ((b & 0x80) === 0) return value;
        if (shift > 28) throw new HpackError("integer too large");
      }
    };
    const str = (): string => {
      if (pos >= block.length) throw new HpackError("truncated string");
      const huffman = (block[pos]! & 0x80) !== 0;
      const length = int(7);
      const end = pos + length;
      if (end > block.length) throw new HpackError("truncated string");
      const value = huffman ? decodeHuffman(block, pos, end) : Buffer.from(block.buffer, block.byteOffset + pos, length).toString("latin1");
      pos = end;
      return value;
    };
    while (pos < block.length) {
      const b = block[pos]!;
      if (b & 0x80) {
        fields.push(this.#entry(int(7)));
      } else if (b & 0x40) {
        const index = int(6);
        const name = index === 0 ? str() : this.#entry(index)[0];
        const field: [string, string] = [name, str()];
        fields.push(field);
        this.#add(field);
      } else if (b & 0x20) {
        const size = int(5);
        if (size > this.#limit) throw new HpackError(`table size update to ${size} over the ${this.#limit} allowed`);
        this.#maxSize = size;
        this.#evict(0);
      } else {
        // Literal without indexing (0000) or never indexed (0001): the same to a decoder.
        const index = int(4);
        const name = index === 0 ? str() : this.#entry(index)[0];
        fields.push([name, str()]);
      }
    }
    return fields;
  }

  #entry(index: number): [string, string] {
    if (index === 0) throw new HpackError("index 0");
    if (index <= STATIC_TABLE.length) {
      const [name, value] = STATIC_TABLE[index - 1]!;
      return [name, value];
    }
    const entry = this.#table[index - STATIC_TABLE.length - 1];
    if (entry === undefined) throw new HpackError(`index ${index} past the dynamic table`);
    return entry;
  }

  #add(field: [string, string]): void {
    const size = entrySize(field);
    this.#evict(size);
    // An entry larger than the whole table empties it and is not added (RFC 7541 4.4).
    if (size > this.#maxSize) return;
    this.#table.unshift(field);
    this.#size += size;
  }

  /** Drop the oldest entries until `room` more bytes fit. */
  #evict(room: number): void {
    while (this.#table.length > 0 && this.#size + room > this.#maxSize) this.#size -= entrySize(this.#table.pop()!);
  }
}

/** RFC 7541 4.1: an entry's size is its name's and value's octets plus 32. */
function entrySize([name, value]: [string, string]): number {
  return Buffer.byteLength(name, "latin1") + Buffer.byteLength(value, "latin1") + 32;
}

/**
 * A header block of literal fields "without indexing" (0000 prefix; a static
 * table name by index where there is one), none Huffman-coded. Names must be
 * lower case, values and names Latin-1 (gRPC's are ASCII).
 */
export function encodeLiteralHeaders(fields: readonly (readonly [string, string])[]): Buffer {
  const parts: number[] = [];
  const int = (value: number, prefixBits: number, first: number) => {
    const max = (1 << prefixBits) - 1;
    if (value < max) {
      parts.push(first | value);
      return;
    }
    parts.push(first | max);
    value -= max;
    while (value >= 0x80) {
      parts.push((value % 0x80) | 0x80);
      value = Math.floor(value / 0x80);
    }
    parts.push(value);
  };
  const str = (s: string) => {
    const bytes = Buffer.from(s, "latin1");
    int(bytes.length, 7, 0);
    for (const b of bytes) parts.push(b);
  };
  for (const [name, value] of fields) {
    const exact = STATIC_TABLE.findIndex(([n, v]) => n === name && v === value);
    if (exact >= 0) {
      int(exact + 1, 7, 0x80);
      continue;
    }
    const named = STATIC_TABLE.findIndex(([n]) => n === name);
    if (named >= 0) int(named + 1, 4, 0);
    else {
      parts.push(0);
      str(name);
    }
    str(value);
  }
  return Buffer.from(parts);
}
