// A browser's bearer token in a WebSocket subprotocol (websocket-token.ts):
// parsing as upstream's protocol authenticator does, dropping it before the
// node agent, and the real server authenticating a pods/exec upgrade by it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:https";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";
import { bearerProtocolToken, withoutBearerProtocol } from "./websocket-token.js";

const b64 = (s: string) => Buffer.from(s).toString("base64url");
const ws = (protocols: string, upgrade = "websocket") => ({ headers: { upgrade, connection: "Upgrade", "sec-websocket-protocol": protocols } });

test("the token of base64url.bearer.authorization.k8s.io.<token>, beside another subprotocol", () => {
  assert.equal(bearerProtocolToken(ws(`v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.${b64("abc.def")}`)), "abc.def");
  // Split over several header lines, as RFC 6455 allows.
  assert.equal(bearerProtocolToken(ws(["v5.channel.k8s.io", `base64url.bearer.authorization.k8s.io.${b64("t")}`] as never)), "t");
  // No other protocol to answer with, two tokens, bad base64url, invalid UTF-8, an empty token, not a WebSocket: none.
  assert.equal(bearerProtocolToken(ws(`base64url.bearer.authorization.k8s.io.${b64("t")}`)), undefined);
  assert.equal(bearerProtocolToken(ws(`v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.${b64("a")}, base64url.bearer.authorization.k8s.io.${b64("b")}`)), undefined);
  assert.equal(bearerProtocolToken(ws("v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.a+b/")), undefined);
  assert.equal(bearerProtocolToken(ws(`v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.${Buffer.from([0xff, 0xfe]).toString("base64url")}`)), undefined);
  assert.equal(bearerProtocolToken(ws("v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.")), undefined);
  assert.equal(bearerProtocolToken(ws(`v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.${b64("t")}`, "SPDY/3.1")), undefined);
  assert.equal(bearerProtocolToken({ headers: {} }), undefined);
});

test("the node agent sees the subprotocols without the token", () => {
  assert.equal(withoutBearerProtocol(`v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.${b64("secret")}, v4.channel.k8s.io`), "v5.channel.k8s.io, v4.channel.k8s.io");
  assert.equal(withoutBearerProtocol(`base64url.bearer.authorization.k8s.io.${b64("secret")}`), "");
});

describe("pods/exec upgrades authenticated by the subprotocol token", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: builtinModules(), dashboard: false });
  });
  after(async () => t?.close());

  const upgrade = (protocols: string[]) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${t.server.url}/api/v1/namespaces/default/pods/nosuchpod/exec?command=echo&command=hi&stdout=true`, {
        headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-protocol": protocols.join(", ") },
        rejectUnauthorized: false,
        agent: false,
      });
      req.on("upgrade", (res, socket) => {
        socket.destroy();
        resolve({ status: res.statusCode ?? 0, body: "" });
      });
      req.on("response", (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });

  test("the admin token passes authentication (the missing pod is then a 404); a wrong one, or none, is a 401", async () => {
    const good = await upgrade(["v5.channel.k8s.io", `base64url.bearer.authorization.k8s.io.${b64(t.server.credentials.adminToken)}`]);
    assert.equal(good.status, 404, good.body);
    assert.equal(JSON.parse(good.body).message, 'pods "nosuchpod" not found');
    const wrong = await upgrade(["v5.channel.k8s.io", `base64url.bearer.authorization.k8s.io.${b64("not-the-token")}`]);
    assert.equal(wrong.status, 401);
    assert.equal((await upgrade(["v5.channel.k8s.io"])).status, 401);
    // The token alone, with no protocol to answer with: refused, as upstream.
    assert.equal((await upgrade([`base64url.bearer.authorization.k8s.io.${b64(t.server.credentials.adminToken)}`])).status, 401);
  });
});
