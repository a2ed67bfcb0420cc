// The rows of the seed's resource-version tables (seed 000, "Resource version
// semantics") that server.test.ts does not reach: get at "0", at N and in the
// future; list at N without limit, limited lists with a match, continue with
// "0", and continue with a match. Real HTTPS, real lmdb store.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { sampleApi } from "./testing/sample-api.js";
import { startTestServer, type TestServer } from "./testing/harness.js";

const NS = "rv-tables";
const W = `/apis/samples.orch.io/v1/namespaces/${NS}/widgets`;
const widget = (name: string) => ({ apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name }, spec: { color: "red" } });
const merge = { "content-type": "application/merge-patch+json" };
const names = (list: any): string[] => list.items.map((w: any) => w.metadata.name);

describe("resource-version semantics (seed tables), the rows server.test.ts leaves out", () => {
  let t: TestServer;
  /** The widget "a" as created, and its version after one change of colour. */
  let created: any;
  let changedRv: number;
  const recolor = async (name: string, color: string) => {
    const r = await t.request("PATCH", `${W}/${name}`, { rawBody: JSON.stringify({ spec: { color } }), headers: merge });
    assert.equal(r.status, 200, r.text);
    return r.json;
  };

  before(async () => {
    t = await startTestServer({ modules: [sampleApi] });
    assert.equal((await t.request("POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } } })).status, 201);
    created = (await t.request("POST", W, { body: widget("a") })).json;
    for (const n of ["b", "c"]) assert.equal((await t.request("POST", W, { body: widget(n) })).status, 201);
    changedRv = Number((await recolor("a", "changed")).metadata.resourceVersion);
  });
  after(async () => t.close());

  test("get rv=0 (Any) serves the object from the cache", async () => {
    const r = await t.request("GET", `${W}/a?resourceVersion=0`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.metadata.uid, created.metadata.uid);
    assert.equal(r.json.spec.color, "changed");
    assert.equal((await t.request("GET", `${W}/nope?resourceVersion=0`)).status, 404);
  });

  test("get rv=N is not older than N: an older N still gets the newest state", async () => {
    const r = await t.request("GET", `${W}/a?resourceVersion=${created.metadata.resourceVersion}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.spec.color, "changed", "not the state at N");
    assert.ok(Number(r.json.metadata.resourceVersion) >= changedRv);
  });

  test("get rv=N just ahead of the server waits for it", async () => {
    const current = Number((await t.request("GET", W)).json.metadata.resourceVersion);
    const pending = t.request("GET", `${W}/c?resourceVersion=${current + 1}`);
    const patched = await recolor("c", "later");
    const r = await pending;
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.spec.color, "later", "answered once the write at that version arrived");
    assert.equal(r.json.metadata.resourceVersion, patched.metadata.resourceVersion);
  });

  test("get and list at a future rv: 504 'Too large resource version' with Retry-After", async () => {
    const [get, list] = await Promise.all([
      t.request("GET", `${W}/a?resourceVersion=999999999`),
      t.request("GET", `${W}?resourceVersion=999999999`),
    ]);
    for (const r of [get, list]) {
      assert.equal(r.status, 504, r.text);
      assert.equal(r.json.reason, "Timeout");
      assert.match(r.json.message, /^Timeout: Too large resource version: 999999999, current: \d+$/);
      assert.deepEqual(r.json.details.causes, [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }]);
      assert.equal(r.headers["retry-after"], "1");
    }
  });

  test("list rv=N without limit or match is not older than N", async () => {
    const r = await t.request("GET", `${W}?resourceVersion=${created.metadata.resourceVersion}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(names(r.json), ["a", "b", "c"], "objects created after N are there");
    assert.equal(r.json.items[0].spec.color, "changed", "the newest state, not the state at N");
    assert.ok(Number(r.json.metadata.resourceVersion) >= changedRv, "the list's version is not older than N");
  });

  test("limited lists: Exact serves the state at N, NotOlderThan the newest, rv=0 any", async () => {
    const at = created.metadata.resourceVersion;
    const exact = await t.request("GET", `${W}?resourceVersion=${at}&resourceVersionMatch=Exact&limit=5`);
    assert.equal(exact.status, 200, exact.text);
    assert.equal(exact.json.metadata.resourceVersion, at);
    assert.deepEqual(names(exact.json), ["a"], "b and c came later");
    assert.equal(exact.json.items[0].spec.color, "red");
    const notOlder = await t.request("GET", `${W}?resourceVersion=${at}&resourceVersionMatch=NotOlderThan&limit=5`);
    assert.equal(notOlder.status, 200, notOlder.text);
    assert.deepEqual(names(notOlder.json), ["a", "b", "c"]);
    assert.equal(notOlder.json.items[0].spec.color, "changed");
    for (const match of ["", "&resourceVersionMatch=NotOlderThan"]) {
      const any = await t.request("GET", `${W}?resourceVersion=0${match}&limit=2`);
      assert.equal(any.status, 200, any.text);
      assert.deepEqual(names(any.json), ["a", "b"]);
      assert.equal(any.json.items[0].spec.color, "changed", "Any: the cache's (newest) state");
      assert.ok(any.json.metadata.continue, "a limited Any list pages too");
    }
  });

  test("continue with rv=0 is a continuation at the first page's version", async () => {
    const first = (await t.request("GET", `${W}?limit=2`)).json;
    assert.deepEqual(names(first), ["a", "b"]);
    await recolor("c", "after-first-page");
    await t.request("POST", W, { body: widget("d") });
    const next = await t.request("GET", `${W}?limit=2&resourceVersion=0&continue=${encodeURIComponent(first.metadata.continue)}`);
    assert.equal(next.status, 200, next.text);
    assert.equal(next.json.metadata.resourceVersion, first.metadata.resourceVersion, "the version the first page fixed");
    assert.deepEqual(names(next.json), ["c"], "d came after the first page");
    assert.notEqual(next.json.items[0].spec.color, "after-first-page", "c as it was at that version");
    assert.equal(next.json.metadata.continue, undefined);
  });

  test("continue with resourceVersionMatch is a 400 whatever the version", async () => {
    const token = encodeURIComponent((await t.request("GET", `${W}?limit=1`)).json.metadata.continue);
    for (const q of [`resourceVersion=0&resourceVersionMatch=NotOlderThan`, `resourceVersion=${changedRv}&resourceVersionMatch=Exact`]) {
      const r = await t.request("GET", `${W}?limit=1&continue=${token}&${q}`);
      assert.equal(r.status, 400, `${q}: ${r.text}`);
      assert.equal(r.json.kind, "Status");
      assert.match(r.json.message, /resourceVersionMatch is forbidden when continue is provided/);
    }
  });
});
