// The door's routing (seed 000, "Resource version semantics"): which requests
// the watch cache answers and which reach the backend. The backend is a real
// lmdb store wrapped to count its calls, so a request routed the wrong way
// shows up as a backend call where none should be (or none where one should).

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CompactedError, FutureRevisionError } from "../errors.js";
import { LmdbStorage } from "../lmdb/index.js";
import { DELETE, type KeyValue, type Storage } from "../storage.js";
import { CachedStorage, type ReadAt } from "./cached-storage.js";
import type { CacheEvent } from "./cached.js";

type Thing = { v: string; rv?: number };
const PREFIX = "/registry/things/";
const enc = (v: string) => new TextEncoder().encode(JSON.stringify({ v }));
const decode = (kv: KeyValue): Thing => ({ ...(JSON.parse(new TextDecoder().decode(kv.value)) as Thing), rv: kv.modRevision });

/** The real store, counting calls per method; `revisioned` counts reads at an explicit revision. */
function counting(storage: Storage) {
  const calls = new Map<string, number>();
  const lastArgs = new Map<string, unknown[]>();
  const wrapped = new Proxy(storage, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const revisioned = (prop === "get" || prop === "list") && (args[1] as { revision?: number } | undefined)?.revision !== undefined;
        const name = `${String(prop)}${revisioned ? "@rev" : ""}`;
        calls.set(name, (calls.get(name) ?? 0) + 1);
        lastArgs.set(name, args);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    storage: wrapped,
    lastArgs: (name: string) => lastArgs.get(name),
    /** Calls since the last take(), by method. */
    take(): Record<string, number> {
      const out = Object.fromEntries(calls);
      calls.clear();
      return out;
    },
  };
}

async function setup(options: { snapshots?: boolean; windowMs?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "orch-cached-storage-"));
  const lmdb = await LmdbStorage.open({ dataDir: dir });
  const backend = counting(lmdb);
  const door = new CachedStorage<Thing>({
    backend: backend.storage,
    prefix: PREFIX,
    decode,
    withRevision: (obj, rv) => ({ ...obj, rv }),
    futureWaitMs: 200,
    ...options,
  });
  await door.start();
  return {
    lmdb,
    door,
    lastArgs: backend.lastArgs,
    /** Backend calls other than the cache's own watch plumbing. */
    calls(): Record<string, number> {
      const all = backend.take();
      delete all["watch"];
      return all;
    },
    async done() {
      door.stop();
      await lmdb.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Write through the raw store and wait for the cache to see it. */
async function write(t: Awaited<ReturnType<typeof setup>>, key: string, v: string): Promise<KeyValue> {
  const { kv } = await t.lmdb.get(PREFIX + key);
  const out = kv === undefined ? await t.lmdb.create(PREFIX + key, enc(v)) : await t.lmdb.update(PREFIX + key, enc(v), kv.modRevision);
  await waitCache(t.door, out.modRevision);
  return out;
}

async function waitCache(door: CachedStorage<Thing>, revision: number): Promise<void> {
  await door.list(PREFIX, { mode: "NotOlderThan", rv: revision });
}

test("get: \"\" reads the backend; \"0\" and NotOlderThan are the cache's", async () => {
  const t = await setup();
  try {
    const a = await write(t, "a", "a1");
    t.calls();
    assert.equal((await t.door.get(PREFIX + "a", { mode: "MostRecent" }))?.object.v, "a1");
    assert.deepEqual(t.calls(), { get: 1 });
    assert.equal((await t.door.get(PREFIX + "a", { mode: "Any" }))?.object.v, "a1");
    assert.equal((await t.door.get(PREFIX + "a", { mode: "NotOlderThan", rv: a.modRevision }))?.object.v, "a1");
    assert.equal(await t.door.get(PREFIX + "missing", { mode: "Any" }), undefined);
    assert.deepEqual(t.calls(), {}, "no backend call");
  } finally {
    await t.done();
  }
});

test("list: \"\" asks the backend only for its revision, then the cache answers; \"0\" and NotOlderThan never reach it", async () => {
  const t = await setup();
  try {
    const a = await write(t, "a", "a1");
    await write(t, "b", "b1");
    t.calls();
    const consistent = await t.door.list(PREFIX, { mode: "MostRecent" });
    assert.deepEqual(consistent.items.map((c) => c.object.v), ["a1", "b1"]);
    assert.deepEqual(t.calls(), { currentRevision: 1 });
    for (const at of [{ mode: "Any" }, { mode: "NotOlderThan", rv: a.modRevision }] satisfies ReadAt[]) {
      const listed = await t.door.list(PREFIX, at);
      assert.deepEqual(listed.items.map((c) => c.object.v), ["a1", "b1"]);
      assert.equal(listed.revision, t.door.revision);
    }
    assert.deepEqual(t.calls(), {});
  } finally {
    await t.done();
  }
});

for (const snapshots of [true, false]) {
  test(`list Exact inside the window: ${snapshots ? "a cache snapshot" : "the backend at that revision"} (ListFromCacheSnapshot ${snapshots ? "on" : "off"})`, async () => {
    const t = await setup({ snapshots });
    try {
      const a = await write(t, "a", "a1");
      await write(t, "a", "a2");
      t.calls();
      const listed = await t.door.list(PREFIX, { mode: "Exact", rv: a.modRevision });
      assert.deepEqual(listed.items.map((c) => c.object.v), ["a1"], "the state at that revision");
      assert.equal(listed.revision, a.modRevision);
      assert.deepEqual(t.calls(), snapshots ? {} : { "list@rev": 1 });
      assert.equal((await t.door.get(PREFIX + "a", { mode: "Exact", rv: a.modRevision }))?.object.v, "a1", "an Exact get is the same read");
      assert.deepEqual(t.calls(), snapshots ? {} : { "list@rev": 1 });
    } finally {
      await t.done();
    }
  });
}

test("list Exact older than the window reads the backend; compacted history is CompactedError", async () => {
  const t = await setup({ snapshots: true, windowMs: 30 });
  try {
    const a = await write(t, "a", "a1");
    await write(t, "b", "b1");
    await new Promise((r) => setTimeout(r, 60));
    const a2 = await write(t, "a", "a2"); // the window now starts at b1: a1's state is no longer reconstructible
    t.calls();
    const listed = await t.door.list(PREFIX, { mode: "Exact", rv: a.modRevision });
    assert.deepEqual(listed.items.map((c) => c.object.v), ["a1"]);
    assert.deepEqual(t.calls(), { "list@rev": 1 });
    await t.lmdb.compact(a2.modRevision);
    await assert.rejects(t.door.list(PREFIX, { mode: "Exact", rv: a.modRevision }), CompactedError);
  } finally {
    await t.done();
  }
});

test("a version the cache has not reached waits, then FutureRevisionError naming both revisions", async () => {
  const t = await setup();
  try {
    const a = await write(t, "a", "a1");
    const future = a.modRevision + 1000;
    for (const at of [{ mode: "NotOlderThan", rv: future }, { mode: "Exact", rv: future }] satisfies ReadAt[]) {
      const err = await t.door.list(PREFIX, at).then(() => assert.fail("served a future version"), (e: unknown) => e);
      assert.ok(err instanceof FutureRevisionError, String(err));
      assert.equal(err.requestedRevision, future);
      assert.equal(err.currentRevision, t.door.revision);
    }
    await assert.rejects(t.door.get(PREFIX + "a", { mode: "NotOlderThan", rv: future }), FutureRevisionError);
    assert.deepEqual(t.calls()["list@rev"], undefined, "never asked the backend for a future revision");
  } finally {
    await t.done();
  }
});

test("watch from a version in the window replays the cache; older replays backend history, then joins the live stream", async () => {
  const t = await setup({ windowMs: 30 });
  try {
    const a1 = await write(t, "a", "a1");
    await write(t, "b", "b1");
    await new Promise((r) => setTimeout(r, 60));
    const a2 = await write(t, "a", "a2"); // pushes a1 and b1 out of the window
    const b2 = await write(t, "b", "b2");
    t.calls();

    const seen = (events: CacheEvent<Thing>[]) => events.map((e) => `${e.type} ${e.key.slice(PREFIX.length)} ${e.current.object.v}`);
    const inWindow: CacheEvent<Thing>[] = [];
    const w1 = await t.door.watch(PREFIX, { mode: "Exact", rv: a2.modRevision }, { event: (e) => inWindow.push(e) });
    assert.deepEqual(seen(inWindow), ["MODIFIED b b2"]);
    assert.deepEqual(t.calls(), {}, "the window served it");

    const older: CacheEvent<Thing>[] = [];
    const w2 = await t.door.watch(PREFIX, { mode: "Exact", rv: a1.modRevision }, { event: (e) => older.push(e) });
    assert.deepEqual(seen(older), ["ADDED b b1", "MODIFIED a a2", "MODIFIED b b2"]);
    assert.equal(t.calls()["list@rev"], 1, "the state at the start came from the backend");
    assert.equal(w2.revision, b2.modRevision);

    // Both join the live stream with nothing lost or repeated; a delete carries the last state at its revision.
    const del = await t.lmdb.delete(PREFIX + "a");
    await waitCache(t.door, del.revision);
    assert.deepEqual(seen(inWindow).slice(1), ["DELETED a a2"]);
    assert.deepEqual(seen(older).slice(3), ["DELETED a a2"]);
    assert.equal(older[3]!.current.object.rv, del.revision);
    w1.close();
    w2.close();

    await t.lmdb.compact(b2.modRevision);
    await assert.rejects(t.door.watch(PREFIX, { mode: "Exact", rv: a1.modRevision }, { event: () => {} }), CompactedError);
  } finally {
    await t.done();
  }
});

test("watch from \"\" or \"0\" starts at the cache's revision with its state, before any live event", async () => {
  const t = await setup();
  try {
    await write(t, "a", "a1");
    t.calls();
    const order: string[] = [];
    const w = await t.door.watch(PREFIX, { mode: "Any" }, {
      start: (revision, state) => order.push(`start ${revision} ${state().map((c) => c.object.v).join(",")}`),
      event: (e) => order.push(`${e.type} ${e.current.object.v}`),
    });
    const b = await write(t, "b", "b1");
    assert.deepEqual(order, [`start ${w.revision} a1`, "ADDED b1"]);
    assert.ok(b.modRevision > w.revision);
    assert.deepEqual(t.calls(), {}, "\"0\" needs no backend call");
    w.close();
  } finally {
    await t.done();
  }
});

test("guaranteedUpdate hands the backend the cached value as its starting point", async () => {
  const t = await setup();
  try {
    const a = await write(t, "a", "a1");
    t.calls();
    const seen: string[] = [];
    const out = await t.door.guaranteedUpdate(PREFIX + "a", (cur) => (seen.push(decode(cur!).v), enc("a2")));
    assert.deepEqual(seen, ["a1"]);
    assert.equal(decode(out.kv!).v, "a2");
    assert.deepEqual(t.calls(), { guaranteedUpdate: 1 });
    const options = t.lastArgs("guaranteedUpdate")![2] as { suggestion?: KeyValue };
    assert.equal(options.suggestion?.modRevision, a.modRevision, "the cache's copy, with its revision");
    assert.equal(options.suggestion?.createRevision, a.createRevision);
    // Written again at once: the door's own last write is the guess, whether or not the cache has applied it.
    const again = await t.door.guaranteedUpdate(PREFIX + "a", (cur) => (seen.push(decode(cur!).v), enc("a3")));
    assert.deepEqual(seen, ["a1", "a2"]);
    assert.equal((t.lastArgs("guaranteedUpdate")![2] as { suggestion?: KeyValue }).suggestion?.modRevision, out.kv!.modRevision);
    assert.equal(decode(again.kv!).v, "a3");
    // A key the cache does not hold: no suggestion, the backend reads it.
    await t.door.guaranteedUpdate(PREFIX + "new", () => enc("n1"), { allowCreate: true });
    assert.equal((t.lastArgs("guaranteedUpdate")![2] as { suggestion?: KeyValue }).suggestion, undefined);
  } finally {
    await t.done();
  }
});

test("own writes: the record answering a create or update is the one the cache applies, decoded once; ownWrites() reads after them", async () => {
  let decodes = 0;
  const dir = mkdtempSync(join(tmpdir(), "orch-cached-storage-own-"));
  const lmdb = await LmdbStorage.open({ dataDir: dir });
  const door = new CachedStorage<Thing>({ backend: lmdb, prefix: PREFIX, decode: (kv) => (decodes++, decode(kv)) });
  try {
    await door.start();
    decodes = 0;
    const created = await door.create(PREFIX + "a", enc("a1"));
    assert.equal(decodes, 1);
    // The admission plugins' read point: after every write of this door, no backend call.
    assert.deepEqual(door.ownWrites(), { mode: "NotOlderThan", rv: created.revision });
    assert.equal(await door.get(PREFIX + "a", door.ownWrites()), created, "the cache holds the create's own record");
    const updated = await door.guaranteedUpdate(PREFIX + "a", () => enc("a2"));
    const record = door.recordOf(updated.kv!);
    assert.equal(await door.get(PREFIX + "a", door.ownWrites()), record);
    assert.equal(record.object.v, "a2");
    assert.equal(decodes, 2, "one decode per write, none for the cache's events");
    // Someone else's write (the store directly) is decoded by the cache as before.
    const other = await lmdb.create(PREFIX + "b", enc("b1"));
    await door.list(PREFIX, { mode: "NotOlderThan", rv: other.modRevision });
    assert.equal(decodes, 3);
    const deleted = await door.guaranteedUpdate(PREFIX + "a", () => DELETE);
    assert.ok(deleted.deleteRevision !== undefined && deleted.deleteRevision > updated.kv!.modRevision);
    assert.deepEqual(door.ownWrites(), { mode: "NotOlderThan", rv: deleted.deleteRevision });
    assert.equal(await door.get(PREFIX + "a", door.ownWrites()), undefined, "the delete is applied before the read");
  } finally {
    door.stop();
    await lmdb.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
