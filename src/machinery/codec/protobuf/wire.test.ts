import { test } from "node:test";
import assert from "node:assert/strict";
import { Reader, Writer, isProtobufError } from "./wire.js";
import { hex, seededRandom, toHex } from "./testing.js";

function written(fn: (w: Writer) => void): string {
  const w = new Writer(8); // small, so growth is exercised
  fn(w);
  return toHex(w.finish());
}

test("varints as upstream writes them: unsigned, int32 sign-extended to 10 bytes, int64 two's complement", () => {
  const cases: Array<[string, (w: Writer) => void]> = [
    ["00", (w) => w.uint32(0)],
    ["01", (w) => w.uint32(1)],
    ["7f", (w) => w.uint32(127)],
    ["8001", (w) => w.uint32(128)],
    ["ac02", (w) => w.uint32(300)],
    ["ffffffff0f", (w) => w.uint32(0xffffffff)],
    ["ffffffffffffffffff01", (w) => w.int32(-1)],
    ["80808080f8ffffffff01", (w) => w.int32(-2147483648)],
    ["ffffffff07", (w) => w.int32(2147483647)],
    ["ffffffffffffffffff01", (w) => w.int64(-1)],
    ["fbffffffffffffffff01", (w) => w.int64(-5)],
    ["8080808010", (w) => w.int64(2 ** 32)],
    ["ffffffffffffff0f", (w) => w.int64(2 ** 53 - 1)],
    ["81808080808080f0ff01", (w) => w.int64(-(2 ** 53) + 1)],
    ["8092b8c398feffffff01", (w) => w.int64(-62135596800)],
  ];
  for (const [want, fn] of cases) assert.equal(written(fn), want);
});

test("reader reads back what the writer wrote, for random int32 and int64 values", () => {
  const random = seededRandom(7);
  const ints32: number[] = [];
  const ints64: number[] = [];
  for (let i = 0; i < 2000; i++) {
    ints32.push(Math.floor((random() - 0.5) * 2 ** 32) | 0);
    ints64.push(Math.round((random() - 0.5) * 2 * Number.MAX_SAFE_INTEGER) + 0, Math.round((random() - 0.5) * 2 ** Math.floor(random() * 53)) + 0);
  }
  const w = new Writer(16);
  for (const v of ints32) w.int32(v);
  for (const v of ints64) w.int64(v);
  const r = new Reader(w.finish());
  for (const v of ints32) assert.equal(r.int32(), v);
  for (const v of ints64) assert.equal(r.int64(), v);
  assert.equal(r.pos, r.end);
});

test("strings are UTF-8 with a length prefix; long and non-ASCII ones too", () => {
  assert.equal(written((w) => w.string("")), "00");
  assert.equal(written((w) => w.string("web")), "03776562");
  assert.equal(written((w) => w.string("é")), "02c3a9");
  assert.equal(written((w) => w.string("🚀")), "04f09f9a80");
  const long = "x".repeat(300);
  assert.equal(written((w) => w.string(long)), "ac02" + "78".repeat(300));
  for (const s of ["", "a", "ключ", "日本語🚀", "y".repeat(40) + "é", "z".repeat(5000)]) {
    const w = new Writer(4);
    w.string(s);
    assert.equal(new Reader(w.finish()).string(), s);
  }
});

test("fork/join writes the length and moves the content when it needs more than one byte", () => {
  for (const size of [0, 1, 127, 128, 16383, 16384, 70000]) {
    const w = new Writer(8);
    w.uint32(0x0a);
    const mark = w.fork();
    const inner = w.fork();
    for (let i = 0; i < size; i++) w.uint32(i & 0x7f);
    w.join(inner);
    w.join(mark);
    const r = new Reader(w.finish());
    assert.equal(r.uint32(), 0x0a);
    const outerEnd = r.len();
    const innerEnd = r.len();
    assert.equal(innerEnd - r.pos, size);
    assert.equal(outerEnd, innerEnd);
    for (let i = 0; i < size; i++) assert.equal(r.buf[r.pos + i], i & 0x7f);
  }
});

test("doubles are little-endian fixed64", () => {
  assert.equal(written((w) => w.double(1.5)), "000000000000f83f");
  assert.equal(new Reader(hex("000000000000f83f")).double(), 1.5);
});

test("truncated and overlong input fails with a ProtobufError, never a RangeError", () => {
  const bad: Array<[string, (r: Reader) => unknown]> = [
    ["80", (r) => r.uint32()],
    ["ffffffffffffffffffff01", (r) => r.int64()],
    ["05 6162", (r) => r.string()],
    ["0000", (r) => r.double()],
    ["ffffffff1f", (r) => r.uint32()],
  ];
  for (const [bytes, fn] of bad) {
    assert.throws(
      () => fn(new Reader(hex(bytes))),
      (err: unknown) => isProtobufError(err) && err.code === "ProtobufDecode",
      bytes,
    );
  }
});

test("unknown fields of every wire type are skipped", () => {
  // varint, fixed64, length-delimited, group (start 3 … end 4) and fixed32, then a string.
  const r = new Reader(hex("08 96 01", "11 0102030405060708", "1a 02 6869", "23 08 01 24", "2d 01020304", "32 01 7a"));
  for (let i = 0; i < 5; i++) {
    const key = r.uint32();
    r.skip(key & 7);
  }
  assert.equal(r.uint32(), 0x32);
  assert.equal(r.string(), "z");
});
