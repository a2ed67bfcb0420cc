// The dashboard's files at /ui/ (static.ts): the page revalidated, hashed
// assets cached for a year, the best encoding the client accepts, answers
// without a token (the files hold no data), refusals of other methods and
// unknown paths, and the server still answering the API behind them.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from "node:zlib";
import { dashboard } from "./static.js";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";

const PAGE = '<!doctype html><script type="module" src="assets/main-ABC123.js"></script>';
const SCRIPT = "console.log('dashboard');".repeat(50);

function builtDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "orch-ui-"));
  mkdirSync(join(dir, "assets"));
  writeFileSync(join(dir, "index.html"), PAGE);
  writeFileSync(join(dir, "index.html.gz"), gzipSync(PAGE));
  writeFileSync(join(dir, "assets", "main-ABC123.js"), SCRIPT);
  writeFileSync(join(dir, "assets", "main-ABC123.js.gz"), gzipSync(SCRIPT));
  writeFileSync(join(dir, "assets", "main-ABC123.js.br"), brotliCompressSync(SCRIPT));
  return dir;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

describe("the dashboard's static files", () => {
  let dir: string;
  let server: Server;
  let port: number;
  const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
    new Promise<Reply>((resolve, reject) => {
      // host, port and path apart: a URL would resolve the dot segments before they reach the server.
      const req = request({ host: "127.0.0.1", port, path, method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on("error", reject);
      req.end();
    });

  before(async () => {
    dir = builtDir();
    const ui = dashboard(dir);
    server = createServer((req, res) => {
      if (!ui.serve(req, res)) {
        res.writeHead(418);
        res.end("not the dashboard's");
      }
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  });
  after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the page: revalidated on each load (no-cache, ETag, 304), with a content security policy", async () => {
    const r = await get("/ui/");
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), PAGE);
    assert.equal(r.headers["content-type"], "text/html; charset=utf-8");
    assert.equal(r.headers["cache-control"], "no-cache");
    assert.match(String(r.headers["content-security-policy"]), /default-src 'self'/);
    const again = await get("/ui/", { "if-none-match": String(r.headers.etag) });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    assert.equal((await get("/ui/index.html")).body.toString(), PAGE);
  });

  test("hashed assets: cached for a year, brotli or gzip as accepted, identity otherwise", async () => {
    const br = await get("/ui/assets/main-ABC123.js", { "accept-encoding": "gzip, deflate, br" });
    assert.equal(br.status, 200);
    assert.equal(br.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.equal(br.headers["content-encoding"], "br");
    assert.equal(br.headers.vary, "Accept-Encoding");
    assert.equal(brotliDecompressSync(br.body).toString(), SCRIPT);
    const gz = await get("/ui/assets/main-ABC123.js", { "accept-encoding": "gzip, br;q=0" });
    assert.equal(gz.headers["content-encoding"], "gzip");
    assert.equal(gunzipSync(gz.body).toString(), SCRIPT);
    const plain = await get("/ui/assets/main-ABC123.js", { "accept-encoding": "identity" });
    assert.equal(plain.headers["content-encoding"], undefined);
    assert.equal(plain.body.toString(), SCRIPT);
    assert.equal(plain.headers["content-type"], "text/javascript; charset=utf-8");
    const head = await get("/ui/assets/main-ABC123.js", {}, "HEAD");
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
  });

  test("/ui redirects to /ui/; unknown files are 404; writes are 405; traversal finds nothing; other paths are not its", async () => {
    const redirect = await get("/ui");
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.location, "/ui/");
    assert.equal((await get("/ui/assets/nope.js")).status, 404);
    assert.equal((await get("/ui/../../etc/passwd")).status, 404);
    assert.equal((await get("/ui/assets/..%2f..%2findex.html")).status, 404);
    const post = await get("/ui/", {}, "POST");
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, "GET, HEAD");
    assert.equal((await get("/uix")).status, 418);
    assert.equal((await get("/api")).status, 418);
  });

  test("not built: /ui/ says how to build it", async () => {
    const empty = mkdtempSync(join(tmpdir(), "orch-ui-empty-"));
    const ui = dashboard(empty);
    assert.equal(ui.built, false);
    let status = 0;
    let text = "";
    const res = { writeHead: (s: number) => (status = s), end: (b: Buffer) => (text = b.toString()) } as never;
    assert.equal(ui.serve({ url: "/ui/", method: "GET", headers: {} } as never, res), true);
    assert.equal(status, 404);
    assert.match(text, /npm run build/);
    rmSync(empty, { recursive: true, force: true });
  });
});

describe("the API server serves the dashboard at /ui/ without a token, the API still with one", () => {
  let t: TestServer;
  let dir: string;
  before(async () => {
    dir = builtDir();
    t = await startTestServer({ modules: builtinModules(), dashboard: dir });
  });
  after(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("/ui/ answers anyone; /api still asks for credentials", async () => {
    assert.equal(t.server.dashboardUrl, `${t.server.url}/ui/`);
    const page = await t.request("GET", "/ui/", { headers: { authorization: "" } });
    assert.equal(page.status, 200);
    assert.equal(page.text, PAGE);
    const api = await t.request("GET", "/api/v1/namespaces", { headers: { authorization: "" } });
    assert.equal(api.status, 401);
    assert.equal((await t.request("GET", "/api/v1/namespaces")).status, 200);
  });
});
