// The proxy's link rewriting, as data: upstream's URL rules (absolute paths
// and the backend's own host get the proxy path, relative links, other hosts
// and already-prefixed paths do not), the HTML tags and attributes it
// touches, byte-for-byte pass-through of everything else, tags split across
// chunks at every position, raw-text elements, and gzip/deflate bodies.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { deflateRawSync, deflateSync, gunzipSync, gzipSync, inflateRawSync, inflateSync } from "node:zlib";
import { HtmlLinkRewriter, htmlBodyRewriter, isHtml, rewriteUrl, type UrlRewriteContext } from "./proxy-rewrite.js";

const P = "/api/v1/namespaces/ns/pods/https:web:443/proxy";
const ctx: UrlRewriteContext = { prefix: P, backendHosts: ["10.1.0.5", "10.1.0.5:443"], requestHost: "api.example:6443" };
const url = (u: string) => rewriteUrl(u, ctx);

test("URLs: absolute paths and the backend's host get the proxy path; relative links, other hosts and prefixed paths stay", () => {
  assert.equal(url("/rewriteme"), `${P}/rewriteme`);
  assert.equal(url("/"), `${P}/`);
  assert.equal(url("/a/b/?x=1&y=2#top"), `${P}/a/b/?x=1&y=2#top`, "query and fragment kept, trailing slash kept");
  assert.equal(url("/a/../b"), `${P}/b`, "the joined path is cleaned, as path.Join");
  assert.equal(url("https://10.1.0.5/x"), `${P}/x`, "the backend's own URL: scheme and host go");
  assert.equal(url("http://10.1.0.5:443/x"), `${P}/x`);
  assert.equal(url("//10.1.0.5/x"), `${P}/x`);
  assert.equal(url("https://api.example:6443/x"), `https://api.example:6443${P}/x`, "the API server's address as the client wrote it stays");
  assert.equal(url("https://example.com/x"), "https://example.com/x", "another host");
  assert.equal(url("rel/page.html"), "rel/page.html", "relative");
  assert.equal(url("../up"), "../up");
  assert.equal(url("?q=1"), "?q=1");
  assert.equal(url("#frag"), "#frag");
  assert.equal(url("mailto:someone@example.com"), "mailto:someone@example.com");
  assert.equal(url("javascript:void(0)"), "javascript:void(0)");
  assert.equal(url(`${P}/already`), `${P}/already`, "not prefixed twice");
  assert.equal(url("/has space"), "/has space", "what a URL parser refuses is left alone");
  assert.equal(url(""), "");
});

async function rewriteChunks(chunks: (string | Buffer)[]): Promise<string> {
  const out = Readable.from(chunks.map((c) => (typeof c === "string" ? Buffer.from(c, "utf8") : c)), { objectMode: false }).pipe(new HtmlLinkRewriter(url));
  return (await buffer(out)).toString("utf8");
}

test("HTML: upstream's URL attributes are rewritten, everything else passes byte for byte", async () => {
  assert.equal(await rewriteChunks(['<a href="/rewriteme">test</a>']), `<a href="${P}/rewriteme">test</a>`, "the conformance spec's page");
  const page = [
    "<!DOCTYPE html>\n<HTML><Head><TITLE>x <a href=\"/no\"></TITLE></Head>",
    "<body background=/bg.png>\n<IMG SRC='/i.png' alt=\"/not-a-url\" data-src=\"/nor-this\">",
    "<form action=\"/submit\" method=post><input type=image src=/btn.png formaction=\"/go\"></form>",
    "<!-- <a href=\"/commented\"> -->",
    "<script src=\"/app.js\"></script><script>document.write('<a href=\"/in-script\">')</script>",
    "<style>a[href=\"/x\"]{}</style><link rel=stylesheet href=\"rel.css\"><a href=\"https://example.com/\">e</a>",
    "<a href=\"/q?a=1&amp;b=2\">amp</a><a href=&#47;entity>e</a><div title=it's>ü</div></body></HTML>",
  ].join("");
  const expected = [
    "<!DOCTYPE html>\n<HTML><Head><TITLE>x <a href=\"/no\"></TITLE></Head>",
    `<body background="${P}/bg.png">\n<IMG SRC="${P}/i.png" alt="/not-a-url" data-src="/nor-this">`,
    `<form action="${P}/submit" method=post><input type=image src="${P}/btn.png" formaction="${P}/go"></form>`,
    "<!-- <a href=\"/commented\"> -->",
    `<script src="${P}/app.js"></script><script>document.write('<a href="/in-script">')</script>`,
    "<style>a[href=\"/x\"]{}</style><link rel=stylesheet href=\"rel.css\"><a href=\"https://example.com/\">e</a>",
    `<a href="${P}/q?a=1&amp;b=2">amp</a><a href="${P}/entity">e</a><div title=it's>ü</div></body></HTML>`,
  ].join("");
  assert.equal(await rewriteChunks([page]), expected);
  // Split at every position (a tag, a comment, an end tag, a multi-byte character across chunks): the same answer.
  const bytes = Buffer.from(page, "utf8");
  for (let cut = 1; cut < bytes.length; cut++) {
    assert.equal(await rewriteChunks([bytes.subarray(0, cut), bytes.subarray(cut)]), expected, `split at ${cut}`);
  }
  // One byte at a time.
  assert.equal(await rewriteChunks([...bytes].map((b) => Buffer.from([b]))), expected);
});

test("HTML: an unfinished tag at the end, a lone '<' and plaintext pass through", async () => {
  assert.equal(await rewriteChunks(["a < b <a href=\"/x"]), "a < b <a href=\"/x");
  assert.equal(await rewriteChunks(["<plaintext><a href=\"/x\">"]), "<plaintext><a href=\"/x\">");
  assert.equal(await rewriteChunks(["x<"]), "x<");
});

test("bodies: gzip and deflate (zlib or raw) are decoded, rewritten and encoded the same way; other encodings are not touched", async () => {
  const html = Buffer.from('<a href="/rewriteme">test</a>');
  const want = `<a href="${P}/rewriteme">test</a>`;
  const run = async (encoding: string, body: Buffer) => buffer(Readable.from([body.subarray(0, 3), body.subarray(3)]).pipe(htmlBodyRewriter(encoding, url)!));
  assert.equal((await run("", html)).toString(), want);
  assert.equal(gunzipSync(await run("gzip", gzipSync(html))).toString(), want);
  assert.equal(inflateSync(await run("deflate", deflateSync(html))).toString(), want, "zlib-wrapped deflate");
  assert.equal(inflateRawSync(await run("deflate", deflateRawSync(html))).toString(), want, "raw deflate, as Go's servers send it");
  assert.equal((await buffer(Readable.from([]).pipe(htmlBodyRewriter("gzip", url)!))).length, 0, "an empty body stays empty");
  assert.equal(htmlBodyRewriter("br", url), undefined);
  assert.ok(isHtml("text/html; charset=utf-8") && isHtml("Text/HTML") && !isHtml("text/plain") && !isHtml(undefined));
});
