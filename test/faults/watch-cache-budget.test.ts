// Issue 18, point 2: the watch cache's memory budget (docs/reliability.md,
// "Watch cache"). The churn, shortened: 8 clients merge-patching 8
// ControllerRevisions of 1.4 MB each as fast as they can. Without a byte bound
// the 75 s window held every version and the heap ran out (4.1 GB); with the
// budget the windows stay under it, the oldest events go first, and a watch
// asking for shed history is answered 410 Expired. Prints the figures.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../src/api/index.js";
import { startTestServer, type TestServer } from "../../src/apiserver/testing/harness.js";
import { eventCost } from "../../src/storage/cacher/index.js";

const CR = "/apis/apps/v1/namespaces/default/controllerrevisions";
const CLIENTS = 8;
const SIZE = 1.4 * 1024 * 1024;
const BUDGET = 24 * 1024 * 1024;
const CHURN_MS = Number(process.env["ORCH_CHURN_MS"] ?? 20_000);
const MB = 1024 * 1024;

describe("watch cache memory budget under churn", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: builtinModules(), watchCacheBudgetBytes: BUDGET });
  });
  after(async () => {
    await t?.close();
  });

  test(`${CLIENTS} clients merge-patching ${CLIENTS} × 1.4 MB ControllerRevisions stay under a ${BUDGET / MB} MB budget`, async () => {
    const blob = "x".repeat(SIZE);
    let firstRevision = "";
    for (let i = 0; i < CLIENTS; i++) {
      const r = await t.request("POST", CR, { body: { apiVersion: "apps/v1", kind: "ControllerRevision", metadata: { name: `big-${i}` }, revision: 1, data: { blob } } });
      assert.equal(r.status, 201, r.text.slice(0, 200));
      if (i === 0) firstRevision = r.json.metadata.resourceVersion;
    }
    const budget = t.server.watchCacheBudget;
    let heapPeak = 0;
    let rssPeak = 0;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      heapPeak = Math.max(heapPeak, m.heapUsed);
      rssPeak = Math.max(rssPeak, m.rss);
    }, 100);
    const end = Date.now() + CHURN_MS;
    let patches = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, i) => {
        for (let n = 0; Date.now() < end; n++) {
          const r = await t.request("PATCH", `${CR}/big-${i}`, {
            rawBody: JSON.stringify({ metadata: { annotations: { n: String(n) } } }), headers: { "content-type": "application/merge-patch+json" },
          });
          assert.equal(r.status, 200, r.text.slice(0, 200));
          patches++;
        }
      }),
    );
    clearInterval(sampler);
    const written = patches * SIZE;
    console.log(
      `churn: ${patches} patches in ${CHURN_MS / 1000} s (${(written / MB).toFixed(0)} MB of versions written); ` +
        `window held at most ${(budget.peak / MB).toFixed(1)} MB of ${(budget.limit / MB).toFixed(0)} MB, ${budget.shed} events shed; ` +
        `heap peak ${(heapPeak / MB).toFixed(0)} MB, rss peak ${(rssPeak / MB).toFixed(0)} MB`,
    );
    assert.ok(budget.peak <= budget.limit + eventCost(SIZE + 4096), `peak ${budget.peak} over the budget ${budget.limit}`);
    assert.ok(budget.used <= budget.limit);
    assert.ok(budget.shed > 0, "the churn wrote more than the budget: events were shed");
    assert.ok(patches * eventCost(SIZE) > 2 * budget.limit, `the churn must outgrow the budget (wrote ${written})`);
    // What the window holds is bounded, so the heap is: the budget plus the live objects and working room.
    assert.ok(heapPeak < budget.limit + 400 * MB, `heap peak ${(heapPeak / MB).toFixed(0)} MB`);

    // History shed for the budget is 410 Expired, not replayed from the backend.
    const old = await t.request("GET", `${CR}?watch=1&resourceVersion=${firstRevision}&timeoutSeconds=1`);
    const expired = old.status === 410 || /"code":410/.test(old.text);
    assert.ok(expired, `a watch from the first revision: ${old.status} ${old.text.slice(0, 300)}`);
    assert.match(old.text, /too old resource version|Expired/);
    // Recent history is still served from the window.
    const list = await t.request("GET", CR);
    const recent = Number(list.json.metadata.resourceVersion) - 1;
    const w = await t.request("GET", `${CR}?watch=1&resourceVersion=${recent}&timeoutSeconds=1`);
    assert.equal(w.status, 200);
    assert.match(w.text, /"type":"MODIFIED"/);
  });
});
