// Stored values that cannot be decoded (seed 000, "States and transitions",
// the corrupt row, gate AllowUnsafeMalformedObjectDeletion): reads say so
// instead of hiding them, and with the gate on a delete with
// ignoreStoreReadErrorWithClusterBreakingPotential removes them. The values
// are corrupted by writing bytes straight into the real store.

import { test } from "node:test";
import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "./testing/harness.js";
import { sampleApi } from "./testing/sample-api.js";

const WIDGETS = "/apis/samples.orch.io/v1/namespaces/default/widgets";
const KEY = "/registry/samples.orch.io/widgets/default/";
const UNSAFE = { ignoreStoreReadErrorWithClusterBreakingPotential: true };

async function corrupt(t: TestServer, name: string): Promise<void> {
  const { kv } = await t.server.storage.get(KEY + name);
  await t.server.storage.update(KEY + name, new TextEncoder().encode("{not json"), kv!.modRevision);
  for (let i = 0; i < 100 && (await t.request("GET", `${WIDGETS}/${name}?resourceVersion=0`)).status !== 500; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function withCorruptWidgets(enabled: boolean, body: (t: TestServer) => Promise<void>): Promise<void> {
  const t = await startTestServer({ modules: [sampleApi], gates: { AllowUnsafeMalformedObjectDeletion: String(enabled) } });
  try {
    for (const name of ["a", "b", "c"]) {
      const r = await t.request("POST", WIDGETS, { body: { apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name, finalizers: ["example.com/hold"] } } });
      assert.equal(r.status, 201);
    }
    await corrupt(t, "b");
    await corrupt(t, "c");
    await body(t);
  } finally {
    await t.close();
  }
}

for (const enabled of [true, false]) {
  test(`a corrupt object reads as a 500 naming it, from the cache and the store (gate ${enabled ? "on" : "off"})`, async () => {
    await withCorruptWidgets(enabled, async (t) => {
      for (const query of ["", "?resourceVersion=0"]) {
        const r = await t.request("GET", `${WIDGETS}/b${query}`);
        assert.equal(r.status, 500);
        assert.equal(r.json.reason, "InternalError");
        assert.match(r.json.message, /corrupt object, Key: \/registry\/samples\.orch\.io\/widgets\/default\/b/);
      }
      assert.equal((await t.request("GET", `${WIDGETS}/a`)).status, 200, "readable neighbours still read");
      const normal = await t.request("DELETE", `${WIDGETS}/b`);
      assert.equal(normal.status, 500, "a normal delete cannot read what it deletes");
      assert.match(normal.json.message, /corrupt object/);
    });
  });
}

test("gate on: a list names every corrupt key (StorageReadError); the unsafe delete removes them", async () => {
  await withCorruptWidgets(true, async (t) => {
    const list = await t.request("GET", WIDGETS);
    assert.equal(list.status, 500);
    assert.equal(list.json.reason, "StorageReadError");
    assert.equal(list.json.message, "failed to read one or more widgets from the storage");
    assert.deepEqual(list.json.details.causes.map((c: { field: string; reason: string }) => `${c.reason} ${c.field}`), [
      `UnexpectedServerResponse ${KEY}b`,
      `UnexpectedServerResponse ${KEY}c`,
    ]);

    const readable = await t.request("DELETE", `${WIDGETS}/a`, { body: UNSAFE });
    assert.equal(readable.status, 422, "the option is only for corrupt objects");
    assert.match(readable.json.message, /ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is exclusively used to delete corrupt object\(s\)/);
    assert.equal((await t.request("GET", `${WIDGETS}/a`)).json.metadata.deletionTimestamp, undefined, "the readable object is untouched");

    const mixed = await t.request("DELETE", `${WIDGETS}/b`, { body: { ...UNSAFE, propagationPolicy: "Foreground" } });
    assert.equal(mixed.status, 422);
    assert.match(mixed.json.message, /propagationPolicy: Invalid value: "Foreground": can not be set together with ignoreStoreReadErrorWithClusterBreakingPotential/);

    for (const name of ["b", "c"]) {
      const r = await t.request("DELETE", `${WIDGETS}/${name}${name === "c" ? "?ignoreStoreReadErrorWithClusterBreakingPotential=true" : ""}`, name === "b" ? { body: UNSAFE } : {});
      assert.equal(r.status, 200, r.text);
      assert.deepEqual([r.json.kind, r.json.status, r.json.details.name], ["Status", "Success", name]);
      assert.equal((await t.request("GET", `${WIDGETS}/${name}`)).status, 404, "gone, finalizers notwithstanding");
    }
    let after = await t.request("GET", WIDGETS);
    for (let i = 0; i < 100 && after.status !== 200; i++) after = await t.request("GET", WIDGETS);
    assert.deepEqual(after.json.items.map((w: { metadata: { name: string } }) => w.metadata.name), ["a"]);
  });
});

test("gate off: a list fails on the first corrupt value, and the unsafe option is ignored", async () => {
  await withCorruptWidgets(false, async (t) => {
    const list = await t.request("GET", WIDGETS);
    assert.equal(list.status, 500);
    assert.equal(list.json.reason, "InternalError");
    assert.match(list.json.message, /corrupt object, Key: \/registry\/samples\.orch\.io\/widgets\/default\/b/);
    const r = await t.request("DELETE", `${WIDGETS}/b`, { body: UNSAFE });
    assert.equal(r.status, 500, "without the gate this is a normal delete, which cannot read the object");
    assert.equal((await t.request("GET", `${WIDGETS}/b`)).status, 500, "still there");
  });
});
