import { test } from "node:test";
import assert from "node:assert/strict";
import { Duplex, PassThrough } from "node:stream";
import { SpdyConnection, type SpdyStream } from "./connection.js";
import { dataFrame, FrameReader, GoAwayStatus, HeaderCompressor, HeaderDecompressor, pingFrame, settingsFrame, synStreamFrame, windowUpdateFrame, type Frame } from "./frames.js";

/** Two ends of an in-memory connection. */
function pair(): [Duplex, Duplex] {
  const ab = new PassThrough();
  const ba = new PassThrough();
  return [Duplex.from({ readable: ba, writable: ab }), Duplex.from({ readable: ab, writable: ba })];
}

/** A peer writing raw bytes and reading what the server sends back, frame by frame. */
function rawPeer(onStream: (s: SpdyStream) => void = (s) => s.reply()) {
  const [server, client] = pair();
  const session = new SpdyConnection(server, { onStream });
  const reader = new FrameReader();
  const frames: Frame[] = [];
  let ended = false;
  client.on("data", (d: Buffer) => frames.push(...reader.push(d)));
  client.on("end", () => (ended = true));
  client.on("close", () => (ended = true));
  return { session, client, frames, ended: () => ended, z: new HeaderCompressor() };
}

const tick = (ms = 80) => new Promise((r) => setTimeout(r, ms));

test("header blocks round-trip through one context per direction, names lower case", async () => {
  const c = new HeaderCompressor();
  const d = new HeaderDecompressor();
  assert.deepEqual(await d.decompress(await c.compress([["StreamType", "error"]])), [["streamtype", "error"]]);
  assert.deepEqual(await d.decompress(await c.compress([["streamtype", "stdout"], ["port", "80"]])), [["streamtype", "stdout"], ["port", "80"]]);
});

test("a SYN_STREAM built from the spec is answered with SYN_REPLY; DATA reaches the stream and is acknowledged", async () => {
  const got: Buffer[] = [];
  const p = rawPeer((s) => {
    assert.equal(s.header("streamtype"), "stdin");
    s.reply();
    s.on("data", (d) => got.push(d));
  });
  p.client.write(await synStreamFrame(p.z, 1, [["streamtype", "stdin"]]));
  p.client.write(dataFrame(1, Buffer.from("hello")));
  await tick();
  assert.equal(Buffer.concat(got).toString(), "hello");
  assert.deepEqual(p.frames.map((f) => f.type), ["syn_reply", "window_update", "window_update"]);
});

test("PING is echoed; SETTINGS and WINDOW_UPDATE govern the send window once the peer keeps one", async () => {
  let stream: SpdyStream | undefined;
  const p = rawPeer((s) => {
    s.reply();
    stream = s;
  });
  p.client.write(pingFrame(1));
  p.client.write(await synStreamFrame(p.z, 1, [["streamtype", "stdout"]]));
  p.client.write(settingsFrame([{ id: 7, value: 10 }]));
  await tick();
  stream!.write(Buffer.alloc(25, 1));
  await tick();
  const sent = () => p.frames.filter((f) => f.type === "data").reduce((n, f) => n + (f.type === "data" ? f.data.length : 0), 0);
  assert.equal(sent(), 10, "held at the 10-byte window");
  p.client.write(windowUpdateFrame(1, 100));
  await tick();
  assert.equal(sent(), 25);
  assert.ok(p.frames.some((f) => f.type === "ping"));
});

const malformed: [string, Buffer][] = [
  ["an unknown control frame type", Buffer.from([0x80, 3, 0, 42, 0, 0, 0, 0])],
  ["a control frame of another SPDY version", Buffer.from([0x80, 2, 0, 6, 0, 0, 0, 4, 0, 0, 0, 1])],
  ["a PING of the wrong length", Buffer.from([0x80, 3, 0, 6, 0, 0, 0, 2, 0, 0])],
  ["an oversize control frame", Buffer.from([0x80, 3, 0, 1, 0, 0x10, 0, 0])],
  ["a header block that is not zlib", Buffer.from([0x80, 3, 0, 1, 0, 0, 0, 14, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4])],
  ["DATA on stream 0", dataFrame(0, Buffer.from("x"))],
];
for (const [what, bytes] of malformed) {
  test(`${what}: GOAWAY PROTOCOL_ERROR and the connection closes`, async () => {
    const p = rawPeer();
    p.client.write(bytes);
    await tick(50);
    const goaway = p.frames.find((f) => f.type === "goaway");
    assert.ok(goaway !== undefined && goaway.type === "goaway", `no GOAWAY, got ${JSON.stringify(p.frames.map((f) => f.type))}`);
    assert.equal(goaway.status, GoAwayStatus.ProtocolError);
    assert.ok(p.session.closed);
    assert.ok(p.ended());
  });
}

test("our own client and server sessions talk: streams both ways, FIN ends them", async () => {
  const [a, b] = pair();
  const echoed: Buffer[] = [];
  new SpdyConnection(a, {
    onStream: (s) => {
      s.reply();
      s.on("data", (d) => s.write(d));
      s.on("end", () => s.end());
    },
  });
  const client = new SpdyConnection(b, { client: true });
  const s = client.open([["streamtype", "data"]]);
  s.on("data", (d) => echoed.push(d));
  const closed = new Promise<void>((r) => s.on("close", () => r()));
  s.write(Buffer.from("ping"));
  s.end();
  await closed;
  assert.equal(Buffer.concat(echoed).toString(), "ping");
});
