// HTTP/2 rapid reset (CVE-2023-44487, listener.ts): a client that opens
// streams and resets them at once loses its session (GOAWAY
// ENHANCE_YOUR_CALM) once it has spent its reset budget; a normal client on
// its own session, cancelling a few requests, keeps working.

import { test } from "node:test";
import assert from "node:assert/strict";
import { connect as h2Connect, constants, type ClientHttp2Session } from "node:http2";
import { startTestServer } from "./testing/harness.js";
import { sampleApi } from "./testing/sample-api.js";

const WIDGETS = "/apis/samples.orch.io/v1/namespaces/default/widgets";

function session(url: string, ca: string, token: string): ClientHttp2Session & { token: string } {
  const s = h2Connect(url, { ca }) as ClientHttp2Session & { token: string };
  s.token = token;
  s.on("error", () => {});
  return s;
}

function get(s: ClientHttp2Session & { token: string }, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = s.request({ ":path": path, authorization: `Bearer ${s.token}` });
    req.on("response", (h) => resolve(Number(h[":status"])));
    req.on("error", reject);
    req.resume();
  });
}

test("a client flooding stream resets loses its session with GOAWAY; a normal client keeps working", { timeout: 60_000 }, async () => {
  const t = await startTestServer({ modules: [sampleApi], limits: { resets: { burst: 50, perSecond: 10 } } });
  const { url, credentials: { caCertPem: ca, adminToken } } = t.server;
  try {
    const normal = session(url, ca, adminToken);
    assert.equal(await get(normal, WIDGETS), 200);
    // A normal client cancels a few requests (kubectl ending watches): well within the budget.
    for (let i = 0; i < 10; i++) normal.request({ ":path": `${WIDGETS}?watch=1`, authorization: `Bearer ${adminToken}` }).close(constants.NGHTTP2_CANCEL);

    const attacker = session(url, ca, adminToken);
    const goaways: number[] = [];
    attacker.on("goaway", (code) => goaways.push(code));
    const closed = new Promise<void>((resolve) => attacker.once("close", () => resolve()));
    await new Promise<void>((resolve) => attacker.once("connect", () => resolve()));
    // 300 resets: past our budget (50), short of nghttp2's own limit (a burst of 1000), so it is ours that acts.
    let sent = 0;
    for (; sent < 300 && !attacker.closed && !attacker.destroyed; sent++) {
      const s = attacker.request({ ":path": WIDGETS, authorization: `Bearer ${adminToken}` });
      s.on("error", () => {});
      s.close(constants.NGHTTP2_CANCEL);
      if (sent % 20 === 19) await new Promise((r) => setImmediate(r));
    }
    await closed;
    assert.ok(goaways.includes(constants.NGHTTP2_ENHANCE_YOUR_CALM), `the server says why (GOAWAY codes ${goaways.join(", ")})`);

    assert.equal(await get(normal, WIDGETS), 200, "the normal client's session still serves");
    assert.equal(normal.closed || normal.destroyed, false);
    const fresh = session(url, ca, adminToken);
    assert.equal(await get(fresh, "/version"), 200, "new sessions are served");
    normal.close();
    fresh.close();
  } finally {
    await t.close();
  }
});
