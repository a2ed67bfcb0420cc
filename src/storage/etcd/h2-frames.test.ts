// The framed unary transport against a node:http2 server playing gRPC (nghttp2
// encodes its headers with Huffman strings and the dynamic table, as etcd's Go
// server may): answers of every size (several DATA frames, both directions
// waiting on flow-control windows), many calls at once, custom and error
// statuses, a deadline, a reset, a server going away, and a refused connect.
// The etcd storage suites run on this transport too (it is the default).

import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import * as http2 from "node:http2";
import * as net from "node:net";
import type { AddressInfo } from "node:net";
import { FramedChannel } from "./h2-frames.js";
import type { Method } from "./rpc.js";
import { grpcFrame } from "../../machinery/grpc-outcome.js";

const echo: Method<Buffer, Buffer> = { path: "/test.Echo/Echo", serialize: (b) => b, deserialize: (b) => Buffer.from(b) };
const method = (path: string): Method<Buffer, Buffer> => ({ ...echo, path });

let server: http2.Http2Server;
let url = "";
const sessions = new Set<http2.ServerHttp2Session>();
let seenHeaders: http2.IncomingHttpHeaders[] = [];

before(async () => {
  // A small window on the server's side: our requests must wait for WINDOW_UPDATEs.
  server = http2.createServer({ settings: { initialWindowSize: 16_384 } });
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  server.on("stream", (stream, headers) => {
    seenHeaders.push(headers);
    // The reset below is reported on the server's stream too.
    stream.on("error", () => {});
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      const body = Buffer.concat(chunks);
      const message = body.subarray(5);
      const path = headers[":path"];
      if (path === "/test.Echo/Never") return;
      if (path === "/test.Echo/Reset") {
        stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
        return;
      }
      if (path === "/test.Echo/Fail") {
        stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "9", "grpc-message": encodeURIComponent("etcdserver: mvcc: required revision has been compacted") }, { endStream: true });
        return;
      }
      // Varying custom headers and trailers: Huffman strings and dynamic table entries in our decoder.
      const n = message.length;
      stream.respond({ ":status": 200, "content-type": "application/grpc", "x-size": String(n), "x-note": `answer of ${n} bytes` }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0", "x-trailer": `t${n}` }));
      stream.end(grpcFrame(message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  for (const s of sessions) s.destroy();
  server.close();
});

async function channel(): Promise<FramedChannel> {
  const c = new FramedChannel(url, undefined, { hasleader: "true" });
  await c.connect(Date.now() + 2000);
  return c;
}

test("answers of 0 bytes to 3 MB come back whole, 200 calls at once, with our headers sent", async () => {
  const c = await channel();
  try {
    seenHeaders = [];
    const sizes = [0, 1, 100, 16_379, 16_380, 70_000, 1_000_000, 3_000_000];
    for (const size of sizes) {
      const payload = Buffer.alloc(size, size % 251);
      assert.ok((await c.unary(echo, payload, Date.now() + 10_000)).equals(payload), `${size} bytes`);
    }
    const many = await Promise.all(Array.from({ length: 200 }, (_, i) => c.unary(echo, Buffer.from(`call ${i}`), Date.now() + 10_000)));
    assert.deepEqual(many.map((b) => b.toString()), Array.from({ length: 200 }, (_, i) => `call ${i}`));
    const h = seenHeaders[0]!;
    assert.equal(h[":method"], "POST");
    assert.equal(h["content-type"], "application/grpc");
    assert.equal(h["te"], "trailers");
    assert.equal(h["hasleader"], "true");
    assert.match(String(h["grpc-timeout"]), /^\d+m$/);
  } finally {
    c.close();
  }
});

test("a gRPC error status, a reset and a deadline fail the call with grpc-js's codes; the connection serves on", async () => {
  const c = await channel();
  try {
    await assert.rejects(c.unary(method("/test.Echo/Fail"), Buffer.alloc(1), Date.now() + 2000), { code: 9, details: "etcdserver: mvcc: required revision has been compacted" });
    await assert.rejects(c.unary(method("/test.Echo/Reset"), Buffer.alloc(1), Date.now() + 2000), { code: 14, details: "Stream refused by server" });
    await assert.rejects(c.unary(method("/test.Echo/Never"), Buffer.alloc(1), Date.now() + 200), { code: 4, details: "Deadline exceeded" });
    assert.equal((await c.unary(echo, Buffer.from("still"), Date.now() + 2000)).toString(), "still");
  } finally {
    c.close();
  }
});

test("the server going away: calls in flight fail, the next connect opens a new connection", async () => {
  const c = await channel();
  try {
    const pending = c.unary(method("/test.Echo/Never"), Buffer.alloc(1), Date.now() + 5000);
    await new Promise((r) => setTimeout(r, 50));
    for (const s of sessions) s.destroy();
    await assert.rejects(pending, { code: 14 });
    await assert.rejects(c.unary(echo, Buffer.alloc(1), Date.now() + 2000), (err: { code: number; details: string }) => err.code === 14 && err.details.startsWith("No connection established"));
    await c.connect(Date.now() + 2000);
    assert.equal((await c.unary(echo, Buffer.from("again"), Date.now() + 2000)).toString(), "again");
  } finally {
    c.close();
  }
});

test("a GOAWAY: the calls the server did not take are refused as not sent (safe to retry)", async () => {
  const c = await channel();
  try {
    assert.equal((await c.unary(echo, Buffer.from("x"), Date.now() + 2000)).toString(), "x");
    const notTaken = c.unary(method("/test.Echo/Never"), Buffer.alloc(1), Date.now() + 5000);
    await new Promise((r) => setTimeout(r, 50));
    // The server says it took nothing after stream 1: the call on stream 3 was not processed.
    for (const s of sessions) s.goaway(http2.constants.NGHTTP2_NO_ERROR, 1);
    const notSent = (err: { code: number; details: string }) => err.code === 14 && err.details.startsWith("No connection established");
    await assert.rejects(notTaken, notSent);
    await assert.rejects(c.unary(echo, Buffer.alloc(1), Date.now() + 2000), notSent);
    await c.connect(Date.now() + 2000);
    assert.equal((await c.unary(echo, Buffer.from("fresh"), Date.now() + 2000)).toString(), "fresh");
  } finally {
    c.close();
  }
});

test("nothing listening: connect resolves, and the call fails as never sent", async () => {
  const probe = http2.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const c = new FramedChannel(`http://127.0.0.1:${port}`, undefined, {});
  try {
    await c.connect(Date.now() + 2000);
    await assert.rejects(c.unary(echo, Buffer.alloc(1), Date.now() + 2000), (err: { code: number; details: string }) => err.code === 14 && /^No connection established. Last error: .*ECONNREFUSED/.test(err.details));
  } finally {
    c.close();
  }
});

/** A peer that speaks just enough HTTP/2 to be connected to (its SETTINGS), never answers a ping, and optionally sends a PING of its own every `chatterMs`. */
async function silentPeer(chatterMs?: number): Promise<{ url: string; close(): void }> {
  const sockets = new Set<net.Socket>();
  const peer = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.write(Buffer.from([0, 0, 0, 0x4, 0, 0, 0, 0, 0]));
    if (chatterMs !== undefined) {
      const timer = setInterval(() => socket.write(Buffer.from([0, 0, 8, 0x6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8])), chatterMs);
      socket.on("close", () => clearInterval(timer));
    }
  });
  await new Promise<void>((resolve) => peer.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(peer.address() as AddressInfo).port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      peer.close();
    },
  };
}

test("keepalive: a peer that answers nothing is dropped, one that sends anything is alive", async () => {
  const timing = { intervalMs: 50, timeoutMs: 100 };
  const mute = await silentPeer();
  const c = new FramedChannel(mute.url, undefined, {}, timing);
  try {
    await c.connect(Date.now() + 2000);
    const started = Date.now();
    await assert.rejects(c.unary(echo, Buffer.alloc(1), Date.now() + 5000), { code: 14, details: "Connection dropped: keepalive ping not answered" });
    assert.ok(Date.now() - started < 2000);
  } finally {
    c.close();
    mute.close();
  }
  // Its pings are not answers to ours, but frames read: the connection stays.
  const chatty = await silentPeer(20);
  const d = new FramedChannel(chatty.url, undefined, {}, timing);
  try {
    await d.connect(Date.now() + 2000);
    const pending = d.unary(echo, Buffer.alloc(1), Date.now() + 600);
    await assert.rejects(pending, { code: 4, details: "Deadline exceeded" }, "still connected when the deadline came");
  } finally {
    d.close();
    chatty.close();
  }
});
