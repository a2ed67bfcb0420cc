// Slow clients: a connection that sends nothing is closed (a raw TCP one by the
// TLS handshake limit, an HTTP/1.1 one before its first request's headers,
// an HTTP/2 session with no stream by the idle limit), and so is an idle
// keep-alive connection; a long request in progress (a quiet watch) is not.

import { test } from "node:test";
import assert from "node:assert/strict";
import { connect as tcpConnect, type Socket } from "node:net";
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import { connect as h2Connect } from "node:http2";
import { startTestServer } from "./testing/harness.js";
import { sampleApi } from "./testing/sample-api.js";

const WIDGETS = "/apis/samples.orch.io/v1/namespaces/default/widgets";
const LIMITS = { connections: { headerMs: 400, idleMs: 800 } };

/** Milliseconds from now until `socket` closes (rejects after `ms`). */
function closedWithin(socket: Socket | { once(e: "close", f: () => void): unknown }, ms: number): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
  });
}

function tlsOpen(port: number, ca: string, alpn: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: "127.0.0.1", port, ca, servername: "localhost", ALPNProtocols: [alpn] }, () => resolve(s));
    s.on("error", reject);
  });
}

test("a connection that sends nothing is closed: raw TCP, TLS with HTTP/1.1, half a request, HTTP/2", async () => {
  const t = await startTestServer({ modules: [sampleApi], limits: LIMITS });
  const { port, credentials: { caCertPem: ca } } = t.server;
  try {
    const raw = tcpConnect(port, "127.0.0.1");
    raw.on("error", () => {});
    const h1 = await tlsOpen(port, ca, "http/1.1");
    h1.on("error", () => {});
    const partial = await tlsOpen(port, ca, "http/1.1");
    partial.on("error", () => {});
    partial.write("GET /version HTTP/1.1\r\nHost: x\r\n");
    const h2 = h2Connect(t.server.url, { ca });
    h2.on("error", () => {});
    const [rawMs, h1Ms, partialMs, h2Ms] = await Promise.all([closedWithin(raw, 3000), closedWithin(h1, 3000), closedWithin(partial, 3000), closedWithin(h2, 3000)]);
    assert.ok(rawMs >= 300, `raw TCP closed after ${rawMs} ms`);
    assert.ok(h1Ms >= 300, `HTTP/1.1 closed after ${h1Ms} ms`);
    assert.ok(partialMs >= 300, `half a request closed after ${partialMs} ms`);
    assert.ok(h2Ms >= 700, `HTTP/2 closed after ${h2Ms} ms`);
    // The server still serves.
    assert.equal((await t.request("GET", "/version")).status, 200);
  } finally {
    await t.close();
  }
});

test("an idle keep-alive connection is closed after its last answer; one with a quiet watch in progress is not", async () => {
  const t = await startTestServer({ modules: [sampleApi], limits: LIMITS });
  const { port, credentials: { caCertPem: ca, adminToken } } = t.server;
  try {
    const keepAlive = await tlsOpen(port, ca, "http/1.1");
    let answered = "";
    keepAlive.on("data", (c: Buffer) => (answered += c.toString()));
    keepAlive.write("GET /version HTTP/1.1\r\nHost: x\r\n\r\n");
    // Answers arrive in time while requests keep coming, each within the idle limit.
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 500));
      keepAlive.write("GET /version HTTP/1.1\r\nHost: x\r\n\r\n");
    }
    const idleMs = await closedWithin(keepAlive, 3000);
    assert.equal(answered.match(/HTTP\/1\.1 200/g)?.length, 4, answered.slice(0, 200));
    assert.ok(idleMs >= 700, `closed ${idleMs} ms after the last request`);

    // A watch that sees nothing for longer than the idle limit stays open (HTTP/1.1 and HTTP/2).
    const w = await t.watch(`${WIDGETS}?watch=1`);
    const session = h2Connect(t.server.url, { ca });
    const events: string[] = [];
    const stream = session.request({ ":path": `${WIDGETS}?watch=1`, authorization: `Bearer ${adminToken}` });
    stream.on("data", (c: Buffer) => events.push(c.toString()));
    await new Promise((r) => setTimeout(r, 1800));
    assert.equal((await t.request("POST", WIDGETS, { body: { apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name: "late" } } })).status, 201);
    assert.equal((await w.next(1))[0].object.metadata.name, "late");
    await new Promise((r) => setTimeout(r, 200));
    assert.match(events.join(""), /"late"/);
    assert.ok(!session.closed);
    w.close();
    // Its stream closed, the session is idle and closed in turn.
    stream.close();
    assert.ok((await closedWithin(session, 3000)) >= 700);
  } finally {
    await t.close();
  }
});
