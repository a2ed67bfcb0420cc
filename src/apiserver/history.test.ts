// History beyond the watch cache: watches and Exact lists older than the
// cache window are served from the store's history, and get 410 Gone once
// that history is compacted (seed 000, "Watch behavior" 2, "Chunked lists" 3).

import { test } from "node:test";
import assert from "node:assert/strict";
import { sampleApi } from "./testing/sample-api.js";
import { startTestServer } from "./testing/harness.js";

const W = "/apis/samples.orch.io/v1/namespaces/default/widgets";
const widget = (name: string, color = "red") => ({ apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name }, spec: { color } });
const merge = { "content-type": "application/merge-patch+json" };

test("beyond the cache window the store's history serves watches and lists, then 410 once compacted", async () => {
  const t = await startTestServer({ modules: [sampleApi], cacheWindowMs: 50 });
  try {
    const a = (await t.request("POST", W, { body: widget("h-a") })).json;
    await t.request("POST", W, { body: widget("h-b") });
    const page = (await t.request("GET", `${W}?limit=1`)).json;
    await new Promise((r) => setTimeout(r, 100));
    // New events push the old ones out of the 50 ms window.
    await t.request("PATCH", `${W}/h-a`, { rawBody: JSON.stringify({ spec: { color: "blue" } }), headers: merge });
    await t.request("DELETE", `${W}/h-b`);

    const w = await t.watch(`${W}?watch=1&resourceVersion=${a.metadata.resourceVersion}`);
    const events = await w.next(3);
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`), ["ADDED h-b", "MODIFIED h-a", "DELETED h-b"]);
    w.close();
    const old = await t.request("GET", `${W}?resourceVersion=${a.metadata.resourceVersion}&resourceVersionMatch=Exact`);
    assert.deepEqual(old.json.items.map((x: any) => `${x.metadata.name}:${x.spec.color}`), ["h-a:red"]);
    const next = await t.request("GET", `${W}?limit=1&continue=${encodeURIComponent(page.metadata.continue)}`);
    assert.equal(next.status, 200, next.text);
    assert.deepEqual(next.json.items.map((x: any) => x.metadata.name), ["h-b"], "the continuation still sees the first page's version");

    await t.server.compact(await t.server.storage.currentRevision());
    // As upstream: the watch answers 200 and ends with one ERROR event carrying 410 Expired.
    const gone = await t.request("GET", `${W}?watch=1&resourceVersion=${a.metadata.resourceVersion}`);
    assert.equal(gone.status, 200, gone.text);
    const event = JSON.parse(gone.text);
    assert.equal(event.type, "ERROR");
    assert.equal(event.object.code, 410);
    assert.equal(event.object.reason, "Expired");
    const expired = await t.request("GET", `${W}?limit=1&continue=${encodeURIComponent(page.metadata.continue)}`);
    assert.equal(expired.status, 410);
    assert.match(expired.json.message, /continue parameter is too old/);
    const exactGone = await t.request("GET", `${W}?resourceVersion=${a.metadata.resourceVersion}&resourceVersionMatch=Exact`);
    assert.equal(exactGone.status, 410);
  } finally {
    await t.close();
  }
});
