// The request timeout and the watch's --min-request-timeout on a real server:
// a request that runs longer is answered 504 at once (HTTP/1.1 and HTTP/2),
// its handler's late answer goes nowhere, and the server keeps serving;
// `?timeout=` shortens it; watches are exempt and end by --min-request-timeout.

import { test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:http2";
import { startTestServer, type TestResponse } from "../testing/harness.js";
import { sampleApi } from "../testing/sample-api.js";
import { holdingAdmission, SLOW_READ, widget, WIDGETS } from "../testing/held-requests.js";
import { sleep } from "../../machinery/until.js";

const TIMED_OUT = "Timeout: request did not complete within requested timeout - context deadline exceeded";

function assertTimedOut(r: TestResponse, what: string): void {
  assert.equal(r.status, 504, `${what}: ${r.text}`);
  assert.equal(r.json.kind, "Status");
  assert.equal(r.json.reason, "Timeout");
  assert.equal(r.json.message, TIMED_OUT);
  assert.equal(r.headers["retry-after"], undefined, "no Retry-After: not worth retrying at once");
}

async function timed<T>(p: Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const v = await p;
  return [v, Date.now() - started];
}

test("a request over --request-timeout is 504 at once; the handler's late answer is dropped; the server keeps serving", async () => {
  const hold = holdingAdmission();
  const t = await startTestServer({ modules: [sampleApi], admission: hold.admission, limits: { requestTimeoutMs: 800 } });
  try {
    const [read, readMs] = await timed(t.request("GET", SLOW_READ));
    assertTimedOut(read, "slow read");
    assert.ok(readMs >= 700 && readMs < 2500, `answered after ${readMs} ms, not when the handler gave up (3 s)`);
    const [create, createMs] = await timed(t.request("POST", WIDGETS, { body: widget("slow-1") }));
    assertTimedOut(create, "held create");
    assert.ok(createMs < 2500, `answered after ${createMs} ms`);
    // The handler goes on (as upstream's): released, it stores the widget, but its 201 goes nowhere.
    hold.release();
    await sleep(3000); // the slow read's own 504 comes (and is dropped) meanwhile
    assert.equal((await t.request("GET", `${WIDGETS}/slow-1`)).status, 200);
    assert.equal((await t.request("GET", WIDGETS)).status, 200, "still serving");
    assert.equal((await t.request("POST", WIDGETS, { body: widget("fast") })).status, 201);
  } finally {
    hold.release();
    await t.close();
  }
});

test("over HTTP/2 too: 504 on the stream, the connection keeps serving", async () => {
  const t = await startTestServer({ modules: [sampleApi], limits: { requestTimeoutMs: 500 } });
  const session = connect(t.server.url, { ca: t.server.credentials.caCertPem });
  const get = (path: string) => new Promise<{ status: number; body: string }>((resolve, reject) => {
    const stream = session.request({ ":path": path, authorization: `Bearer ${t.server.credentials.adminToken}` });
    let status = 0;
    let body = "";
    stream.on("response", (h) => (status = Number(h[":status"])));
    stream.on("data", (c: Buffer) => (body += c.toString()));
    stream.on("end", () => resolve({ status, body }));
    stream.on("error", reject);
  });
  try {
    const slow = await get(SLOW_READ);
    assert.equal(slow.status, 504);
    assert.equal(JSON.parse(slow.body).message, TIMED_OUT);
    await sleep(3000); // the handler's own answer comes and is dropped
    assert.equal((await get(WIDGETS)).status, 200);
    assert.ok(!session.closed && !session.destroyed);
  } finally {
    session.close();
    await t.close();
  }
});

test("?timeout= shorter than --request-timeout applies; a longer one does not; a bad one is 400", async () => {
  const t = await startTestServer({ modules: [sampleApi], limits: { requestTimeoutMs: 1500 } });
  try {
    const [short, shortMs] = await timed(t.request("GET", `${SLOW_READ}&timeout=300ms`));
    assertTimedOut(short, "?timeout=300ms");
    assert.ok(shortMs < 1200, `answered after ${shortMs} ms`);
    const [long, longMs] = await timed(t.request("GET", `${SLOW_READ}&timeout=1h`));
    assertTimedOut(long, "?timeout=1h");
    assert.ok(longMs >= 1400 && longMs < 2900, `answered after ${longMs} ms: the server's timeout`);
    const bad = await t.request("GET", `${WIDGETS}?timeout=soon`);
    assert.equal(bad.status, 400);
    assert.equal(bad.json.reason, "BadRequest");
    assert.equal(bad.json.message, 'invalid timeout specified in the request URL - time: invalid duration "soon"');
    assert.equal((await t.request("GET", `${WIDGETS}?timeout=5s`)).status, 200);
  } finally {
    await t.close();
  }
});

test("0 turns the request timeout off", async () => {
  const t = await startTestServer({ modules: [sampleApi], limits: { requestTimeoutMs: 0 } });
  try {
    const [r, ms] = await timed(t.request("GET", SLOW_READ));
    assert.equal(r.status, 504);
    assert.match(r.json.message, /Too large resource version/, "the handler's own answer");
    assert.ok(ms >= 2500, `after ${ms} ms`);
  } finally {
    await t.close();
  }
});

test("watches are exempt from the request timeout; without timeoutSeconds one ends in [min, 2*min) of --min-request-timeout", async () => {
  const t = await startTestServer({ modules: [sampleApi], limits: { requestTimeoutMs: 300, minRequestTimeoutMs: 1000 } });
  try {
    const started = Date.now();
    const w = await t.watch(`${WIDGETS}?watch=1`);
    assert.equal(w.status, 200);
    await sleep(600);
    assert.equal((await t.request("POST", WIDGETS, { body: widget("a") })).status, 201);
    assert.equal((await w.next(1))[0].object.metadata.name, "a", "still open past the request timeout");
    await assert.rejects(w.next(1, 4000), /watch ended/);
    const ended = Date.now() - started;
    assert.ok(ended >= 1000 && ended < 2600, `ended after ${ended} ms`);
    // timeoutSeconds still wins over the default.
    const [r, ms] = await timed(t.request("GET", `${WIDGETS}?watch=1&timeoutSeconds=3`));
    assert.equal(r.status, 200);
    assert.ok(ms >= 2900, `timeoutSeconds=3 ended after ${ms} ms`);
  } finally {
    await t.close();
  }
});
