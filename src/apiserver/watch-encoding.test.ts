// The watch cache serializes each event once for all its watchers: the frame
// is memoized on the cache entry per format, event type and API version
// (http/respond.ts, objectEventFrame). Counted here by watching the memo of
// the event's entry fill: one entry per frame, however many watchers.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { ApiObject } from "../machinery/index.js";
import type { Cached } from "../storage/cacher/cacher.js";
import { sampleApi } from "./testing/sample-api.js";
import { startTestServer, type TestServer } from "./testing/harness.js";

const GROUP = "samples.orch.io";
const W = `/apis/${GROUP}/v1/namespaces/default/widgets`;
const BETA = `/apis/${GROUP}/v1beta1/namespaces/default/widgets`;

describe("watch frames are serialized once per event for every watcher", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: [sampleApi] });
  });
  after(async () => t.close());

  test("five watchers in two API versions: each version's frame is built once, not once per watcher", async () => {
    const created = (await t.request("POST", W, { body: { apiVersion: `${GROUP}/v1`, kind: "Widget", metadata: { name: "shared" }, spec: { color: "red" } } })).json;
    const from = `?watch=1&resourceVersion=${created.metadata.resourceVersion}&fieldSelector=metadata.name%3Dshared`;
    const watchers = await Promise.all([W, W, W, BETA, BETA].map((path) => t.watch(path + from)));

    // Each event's cache entry, its memo instrumented the moment the cache has it (before any watcher encodes).
    const memoWrites: string[] = [];
    const entries: Cached<ApiObject>[] = [];
    const unsubscribe = t.server.stores.for({ group: GROUP, resource: "widgets" })!.cacher.subscribe((e) => {
      const memo = e.current.encoded;
      memo.set = (key, value) => (memoWrites.push(`${e.type} ${key}`), Map.prototype.set.call(memo, key, value) as typeof memo);
      entries.push(e.current);
    });
    try {
      const patch = { rawBody: JSON.stringify({ spec: { color: "blue" } }), headers: { "content-type": "application/merge-patch+json" } };
      assert.equal((await t.request("PATCH", `${W}/shared`, patch)).status, 200);
      const events = (await Promise.all(watchers.map((w) => w.next(1)))).map(([e]) => e);
      assert.deepEqual(
        events.map((e) => [e.type, e.object.apiVersion, e.object.spec.color]),
        [...Array(3).fill(["MODIFIED", `${GROUP}/v1`, "blue"]), ...Array(2).fill(["MODIFIED", `${GROUP}/v1beta1`, "blue"])],
      );
      assert.equal(entries.length, 1, "one cache event");
      const frames = memoWrites.filter((w) => w.includes(" frame:"));
      assert.deepEqual(frames.sort(), [`MODIFIED frame:json:MODIFIED:${GROUP}/v1`, `MODIFIED frame:json:MODIFIED:${GROUP}/v1beta1`], "each frame built once, not once per watcher");
      const memo = entries[0]!.encoded;
      assert.ok(memo.get(`frame:json:MODIFIED:${GROUP}/v1`)?.toString().includes(`"apiVersion":"${GROUP}/v1"`));
    } finally {
      unsubscribe();
      for (const w of watchers) w.close();
    }
  });
});
