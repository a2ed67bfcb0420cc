// Decoded objects within a budget (cached.ts, "Decoded objects"): records keep
// the decoded objects of the values decoded last; older ones let theirs go and
// decode again from their bytes when read. An API server over the real lmdb
// store serves JSON gets, lists and watch events of such records from their
// bytes, without decoding them again.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { decodeRecord, decodedObjects } from "./cached.js";
import type { KeyValue } from "../storage.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { builtinModules } from "../../api/index.js";

const kv = (key: string, value: object, modRevision: number): KeyValue => ({ key, value: Buffer.from(JSON.stringify(value)), createRevision: modRevision, modRevision });

/** Runs `body` with the thread's budget set to `limitBytes`, then puts it back. */
async function withBudget<T>(limitBytes: number, body: () => Promise<T> | T): Promise<T> {
  const saved = decodedObjects.limitBytes;
  decodedObjects.limitBytes = limitBytes;
  try {
    return await body();
  } finally {
    decodedObjects.limitBytes = saved;
  }
}

test("records past the budget let their decoded objects go and decode them again when read", async () => {
  await withBudget(20_000, () => {
    let decodes = 0;
    const decode = (v: KeyValue) => (decodes++, { ...(JSON.parse(Buffer.from(v.value).toString()) as object), rv: v.modRevision });
    const filler = "x".repeat(900);
    const records = Array.from({ length: 40 }, (_, i) => decodeRecord(kv(`/k/${i}`, { i, filler }, i + 1), decode));
    assert.equal(decodes, 40);
    // About 1,900 bytes charged each (twice the JSON): the last ten fit.
    const again = decodedObjects.decodedAgain;
    assert.deepEqual(records[39]!.object, { i: 39, filler, rv: 40 });
    assert.equal(decodes, 40, "the record decoded last still holds its object");
    assert.deepEqual(records[0]!.object, { i: 0, filler, rv: 1 }, "the first record decodes the same object again");
    assert.equal(decodes, 41);
    assert.equal(decodedObjects.decodedAgain, again + 1);
    const first = records[0]!.object;
    assert.equal(records[0]!.object, first, "and holds it again, until the budget lets it go");
    assert.ok(decodedObjects.bytes <= 20_000, `${decodedObjects.bytes} bytes charged`);
  });
});

test("a record without stored bytes keeps its object whatever the budget", async () => {
  await withBudget(0, async () => {
    const { cachedRecord } = await import("./cached.js");
    const object = { made: true };
    const record = cachedRecord({ key: "/k/dry-run", object, revision: 0 });
    decodeRecord(kv("/k/other", { filler: "y".repeat(2000) }, 7), (v) => JSON.parse(Buffer.from(v.value).toString()) as object);
    assert.equal(record.object, object);
  });
});

describe("an API server whose records let their objects go", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    for (let i = 0; i < 20; i++) {
      const r = await t.request("POST", "/api/v1/namespaces/default/configmaps", {
        body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}`, labels: { n: String(i % 2) } }, data: { filler: "z".repeat(3000) } },
      });
      assert.equal(r.status, 201, r.text);
    }
  });
  after(async () => {
    await t?.close();
  });

  test("JSON gets, lists and watch events come from the stored bytes; a selector decodes", async () => {
    // No object held: every read that needs one decodes it again.
    await withBudget(0, async () => {
      const before = decodedObjects.decodedAgain;
      const list = await t.request("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=0");
      assert.equal(list.status, 200);
      assert.equal(list.json.items.length, 20);
      assert.equal(list.json.items[3].data.filler.length, 3000);
      assert.match(list.json.items[3].metadata.resourceVersion, /^\d+$/);
      const one = await t.request("GET", "/api/v1/namespaces/default/configmaps/cm-5?resourceVersion=0");
      assert.equal(one.status, 200);
      assert.equal(one.json.metadata.name, "cm-5");
      const w = await t.watch(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
      try {
        const changed = await t.request("PATCH", "/api/v1/namespaces/default/configmaps/cm-6", {
          body: { data: { more: "1" } },
          headers: { "content-type": "application/merge-patch+json" },
        });
        assert.equal(changed.status, 200, changed.text);
        const [event] = await w.next(1, 5000);
        assert.equal(event.type, "MODIFIED");
        assert.equal(event.object.metadata.name, "cm-6");
        assert.equal(event.object.data.more, "1");
      } finally {
        w.close();
      }
      const reads = decodedObjects.decodedAgain - before;
      // The patch reads cm-6's object to apply itself to; nothing else needed one.
      assert.ok(reads <= 1, `${reads} objects decoded again for reads served from bytes`);
      const selected = await t.request("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=0&labelSelector=n%3D1");
      assert.equal(selected.status, 200);
      assert.equal(selected.json.items.length, 10);
      assert.ok(decodedObjects.decodedAgain - before >= 20, `a label selector reads every object (${decodedObjects.decodedAgain - before} decoded again, ${reads} before it)`);
    });
  });
});
