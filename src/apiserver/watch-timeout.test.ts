// A watch's `timeoutSeconds` (seed 000, "Watch"): the server ends the stream
// cleanly once it elapses, after sending what happened until then.

import { test } from "node:test";
import assert from "node:assert/strict";
import { startTestServer } from "./testing/harness.js";
import { sampleApi } from "./testing/sample-api.js";

const WIDGETS = "/apis/samples.orch.io/v1/namespaces/default/widgets";

test("a watch with timeoutSeconds ends by itself, with the events that came before", async () => {
  const t = await startTestServer({ modules: [sampleApi] });
  try {
    await t.request("POST", WIDGETS, { body: { apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name: "a" } } });
    const started = Date.now();
    const r = await t.request("GET", `${WIDGETS}?watch=1&resourceVersion=0&timeoutSeconds=1`);
    const elapsed = Date.now() - started;
    assert.equal(r.status, 200);
    const events = r.text.trim().split("\n").map((line) => JSON.parse(line) as { type: string; object: { metadata: { name: string } } });
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`), ["ADDED a"]);
    assert.ok(elapsed >= 900 && elapsed < 5000, `ended after ${elapsed} ms`);
  } finally {
    await t.close();
  }
});
