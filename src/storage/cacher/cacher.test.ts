import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LmdbStorage } from "../lmdb/index.js";
import { Cacher, type CacheEvent } from "./cacher.js";

const enc = (v: string) => new TextEncoder().encode(JSON.stringify({ v }));

async function setup(options: { windowMs?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "orch-cacher-"));
  const store = await LmdbStorage.open({ dataDir: dir });
  const cacher = new Cacher<{ v: string }>({
    store,
    prefix: "/registry/things/",
    decode: (kv) => JSON.parse(new TextDecoder().decode(kv.value)) as { v: string },
    ...options,
  });
  return {
    store,
    cacher,
    async done() {
      cacher.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test("the cache loads the prefix, follows changes, and reconstructs past states", async () => {
  const { store, cacher, done } = await setup();
  try {
    const a1 = await store.create("/registry/things/ns/a", enc("a1"));
    await store.create("/registry/other/x", enc("x"));
    await cacher.start();
    assert.equal(cacher.size, 1);
    assert.ok(cacher.revision >= a1.modRevision);

    const events: CacheEvent<{ v: string }>[] = [];
    const unsubscribe = cacher.subscribe((e) => events.push(e));
    const start = cacher.revision;
    const a2 = await store.update("/registry/things/ns/a", enc("a2"), a1.modRevision);
    const b1 = await store.create("/registry/things/ns/b", enc("b1"));
    const del = await store.delete("/registry/things/ns/a");
    assert.ok(await cacher.waitFor(del.revision, 2000));
    unsubscribe();
    assert.deepEqual(events.map((e) => `${e.type} ${e.key} ${e.current.object.v}`), [
      "MODIFIED /registry/things/ns/a a2",
      "ADDED /registry/things/ns/b b1",
      "DELETED /registry/things/ns/a a2",
    ]);
    assert.equal(events[0]!.previous!.object.v, "a1");

    const values = (rv?: number) => cacher.list("/registry/things/", rv)!.map((c) => c.object.v);
    assert.deepEqual(values(), ["b1"]);
    assert.deepEqual(values(start), ["a1"], "snapshot at the start revision");
    assert.deepEqual(values(a2.modRevision), ["a2"]);
    assert.deepEqual(values(b1.modRevision), ["a2", "b1"]);
    assert.equal(cacher.list("/registry/things/", start - 1), undefined, "older than the window: caller reads the store");
    assert.deepEqual(cacher.eventsSince(a2.modRevision)!.map((e) => e.type), ["ADDED", "DELETED"]);
    assert.equal(cacher.list("/registry/things/ns/b")!.length, 1, "sub-prefixes filter");
  } finally {
    await done();
  }
});

test("a consistent read waits for the cache to catch up, even on an idle prefix", async () => {
  const { store, cacher, done } = await setup();
  try {
    await cacher.start();
    const other = await store.create("/registry/other/y", enc("y"));
    const rv = await cacher.consistentRevision();
    assert.ok(rv !== undefined && rv >= other.modRevision, `consistent revision ${rv} covers ${other.modRevision}`);
    assert.equal(await cacher.waitFor(other.modRevision + 1000, 100), false, "a future revision times out");
  } finally {
    await done();
  }
});

test("old events leave the window and take their snapshots with them", async () => {
  const { store, cacher, done } = await setup({ windowMs: 50 });
  try {
    await cacher.start();
    const a = await store.create("/registry/things/a", enc("a"));
    await cacher.waitFor(a.modRevision, 1000);
    await new Promise((r) => setTimeout(r, 80));
    const b = await store.create("/registry/things/b", enc("b"));
    await cacher.waitFor(b.modRevision, 1000);
    assert.ok(cacher.windowStart >= a.modRevision);
    assert.equal(cacher.eventsSince(a.modRevision - 1), undefined);
    assert.equal(cacher.eventsSince(a.modRevision)!.length, 1);
  } finally {
    await done();
  }
});

test("a superseded version lets go of its decoded object and serializations, and decodes again when read", async () => {
  const { store, cacher, done } = await setup();
  try {
    const a1 = await store.create("/registry/things/ns/a", enc("a1"));
    await cacher.start();
    const first = cacher.get("/registry/things/ns/a")!;
    const decoded = first.object;
    first.encoded.set("json:v1", new Uint8Array([1]));
    const events: CacheEvent<{ v: string }>[] = [];
    const unsubscribe = cacher.subscribe((e) => events.push(e));
    const a2 = await store.update("/registry/things/ns/a", enc("a2"), a1.modRevision);
    assert.ok(await cacher.waitFor(a2.modRevision, 2000));
    unsubscribe();
    assert.equal(events[0]!.previous, first);
    assert.equal(first.encoded.size, 0, "serializations dropped");
    assert.notEqual(first.object, decoded, "decoded afresh from its stored bytes");
    assert.deepEqual(first.object, { v: "a1" });
    const current = cacher.get("/registry/things/ns/a")!;
    assert.equal(current.object, current.object, "the live version stays decoded");
    assert.deepEqual(cacher.list("/registry/things/", a1.modRevision)!.map((c) => c.object.v), ["a1"], "the window still serves the old state");
  } finally {
    await done();
  }
});
