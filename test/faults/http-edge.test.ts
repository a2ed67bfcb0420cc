// Issue 18, point 7 (the HTTP parts): request edge cases answered as upstream
// 1.23 answers them, on the real server and store (docs/reliability.md,
// "Request edge cases"): `watch=bogus` watches, `timeoutSeconds=-1` ends a
// watch at once, a lone UTF-16 surrogate is stored as U+FFFD, and a client that
// goes away mid-body is one short log line, not an internal error with a stack.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:tls";
import { builtinModules } from "../../src/api/index.js";
import { startTestServer, type TestServer } from "../../src/apiserver/testing/harness.js";

const CM = "/api/v1/namespaces/default/configmaps";

describe("request edge cases", () => {
  let t: TestServer;
  const lines: string[] = [];
  before(async () => {
    t = await startTestServer({ modules: builtinModules(), log: (line) => lines.push(line) });
    const r = await t.request("POST", CM, { body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "one" }, data: { a: "b" } } });
    assert.equal(r.status, 201, r.text);
  });
  after(async () => {
    await t?.close();
  });

  test("watch=bogus (any value but 0 and false) is a watch; watch=false and watch=0 are lists", async () => {
    for (const value of ["bogus", "", "yes", "TRUE"]) {
      const started = Date.now();
      const r = await t.request("GET", `${CM}?watch=${value}&timeoutSeconds=1`);
      assert.equal(r.status, 200, r.text);
      const events = r.text.trim().split("\n").map((l) => JSON.parse(l));
      assert.equal(events[0].type, "ADDED", `watch=${value}: ${r.text.slice(0, 200)}`);
      assert.equal(events[0].object.metadata.name, "one");
      assert.ok(Date.now() - started >= 900, `watch=${value} streamed until its timeout`);
    }
    for (const value of ["false", "FALSE", "0"]) {
      const r = await t.request("GET", `${CM}?watch=${value}`);
      assert.equal(r.status, 200);
      assert.equal(r.json.kind, "ConfigMapList", `watch=${value} lists`);
    }
  });

  test("watch=1&timeoutSeconds=-1 ends at once (0 leaves the server's default)", async () => {
    const started = Date.now();
    const r = await t.request("GET", `${CM}?watch=1&timeoutSeconds=-1`);
    assert.equal(r.status, 200);
    assert.ok(Date.now() - started < 1000, `ended after ${Date.now() - started} ms`);
  });

  test("a lone UTF-16 surrogate escape is stored as U+FFFD (upstream's decoder), pairs kept", async () => {
    const raw = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"surrogates"},"data":{"lone":"a\\ud800b","low":"\\udc00","pair":"\\ud83d\\ude00","escaped":"\\\\ud800"}}';
    const r = await t.request("POST", CM, { rawBody: raw });
    assert.equal(r.status, 201, r.text);
    const got = await t.request("GET", `${CM}/surrogates`);
    assert.deepEqual(got.json.data, { lone: "a\ufffdb", low: "\ufffd", pair: "\u{1f600}", escaped: "\\ud800" });
    // Keys too: this one then fails the config-key check, which names it with U+FFFD.
    const key = await t.request("POST", CM, { rawBody: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"k"},"data":{"k\\udfff":"v"}}' });
    assert.equal(key.status, 422);
    assert.match(key.json.message, /data\[k\ufffd\]/);
    // YAML bodies too (double-quoted escapes).
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: surrogates-yaml\ndata:\n  lone: "x\\ud800"\n';
    const y = await t.request("POST", CM, { rawBody: yaml, headers: { "content-type": "application/yaml" } });
    assert.equal(y.status, 201, y.text);
    assert.equal(y.json.data.lone, "x\ufffd");
  });

  test("a client that goes away mid-body is logged in one line, without a stack, and the server serves on", async () => {
    lines.length = 0;
    const socket = connect({ host: "127.0.0.1", port: t.server.port, rejectUnauthorized: false, ALPNProtocols: ["http/1.1"] });
    await new Promise<void>((resolve, reject) => socket.once("secureConnect", resolve).once("error", reject));
    socket.write(
      `POST ${CM} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.server.credentials.adminToken}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"apiVersion":`,
    );
    await new Promise((r) => setTimeout(r, 300));
    socket.destroy();
    const deadline = Date.now() + 3000;
    while (!lines.some((l) => l.includes("client went away")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const mine = lines.filter((l) => l.includes(CM));
    assert.ok(mine.some((l) => /^client went away during POST \/api\/v1\/namespaces\/default\/configmaps: aborted$/.test(l)), mine.join("\n"));
    assert.ok(!lines.some((l) => l.includes("internal error") || l.includes("    at ")), lines.join("\n"));
    assert.equal((await t.request("GET", `${CM}/one`)).status, 200);
  });
});
