// HPACK against RFC 7541's own examples (Appendix C: Huffman strings, and
// three requests sharing one dynamic table), and our literal encoder read
// back by the decoder.

import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeHuffman, encodeLiteralHeaders, HpackDecoder, HpackError } from "./hpack.js";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");

test("Huffman strings of RFC 7541 C.4 and C.6 decode", () => {
  const cases: [string, string][] = [
    ["f1e3 c2e5 f23a 6ba0 ab90 f4ff", "www.example.com"],
    ["a8eb 1064 9cbf", "no-cache"],
    ["25a8 49e9 5ba9 7d7f", "custom-key"],
    ["25a8 49e9 5bb8 e8b4 bf", "custom-value"],
    ["6402", "302"],
    ["aec3 771a 4b", "private"],
    ["d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff", "Mon, 21 Oct 2013 20:13:21 GMT"],
    ["9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3", "https://www.example.com"],
  ];
  for (const [code, text] of cases) {
    const bytes = hex(code);
    assert.equal(decodeHuffman(bytes, 0, bytes.length), text);
  }
});

test("bad Huffman padding and EOS are refused", () => {
  // "0" is 00000 (5 bits): padded with zeros instead of ones.
  assert.throws(() => decodeHuffman(Buffer.from([0x00]), 0, 1), HpackError);
  // A whole byte of padding (8 one-bits) is too long.
  assert.throws(() => decodeHuffman(Buffer.from([0x07, 0xff]), 0, 2), HpackError);
  // EOS itself: 30 one-bits.
  assert.throws(() => decodeHuffman(Buffer.from([0xff, 0xff, 0xff, 0xff]), 0, 4), HpackError);
});

test("RFC 7541 C.4: three requests with Huffman strings share the dynamic table", () => {
  const d = new HpackDecoder();
  assert.deepEqual(d.decode(hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff")), [
    [":method", "GET"], [":scheme", "http"], [":path", "/"], [":authority", "www.example.com"],
  ]);
  assert.deepEqual(d.decode(hex("8286 84be 5886 a8eb 1064 9cbf")), [
    [":method", "GET"], [":scheme", "http"], [":path", "/"], [":authority", "www.example.com"], ["cache-control", "no-cache"],
  ]);
  assert.deepEqual(d.decode(hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf")), [
    [":method", "GET"], [":scheme", "https"], [":path", "/index.html"], [":authority", "www.example.com"], ["custom-key", "custom-value"],
  ]);
});

test("a table size update evicts, and one past our limit is a compression error", () => {
  const d = new HpackDecoder(4096);
  d.decode(hex("4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf")); // custom-key: custom-value, indexed as 62
  assert.deepEqual(d.decode(hex("be")), [["custom-key", "custom-value"]]);
  assert.throws(() => d.decode(hex("20 be")), /past the dynamic table/, "size 0 empties the table");
  assert.throws(() => new HpackDecoder(100).decode(hex("3f e1 1f")), /over the 100 allowed/);
  assert.throws(() => d.decode(hex("c0")), HpackError, "an index past both tables");
});

test("our literal header blocks decode to what was encoded", () => {
  const fields: [string, string][] = [
    [":method", "POST"], [":scheme", "http"], [":path", "/etcdserverpb.KV/Txn"], [":authority", "127.0.0.1:2379"],
    ["content-type", "application/grpc"], ["te", "trailers"], ["hasleader", "true"], ["grpc-timeout", "12345m"],
    ["x-long", "v".repeat(300)],
  ];
  const d = new HpackDecoder();
  const block = encodeLiteralHeaders(fields);
  assert.deepEqual(d.decode(block), fields);
  assert.deepEqual(d.decode(block), fields, "nothing was added to the table");
  assert.equal(block[0], 0x83, ":method POST is the static table's entry 3");
});
