// ConsistentGetFromCache on a real etcd and on the embedded lmdb store: a
// consistent get reads only the key's latest modRevision and answers with the
// watch cache's copy when it is that version. What must hold: the answer is
// never older than a write that finished before the get began, even when
// another client (another API server on etcd; a write not made through the
// door on lmdb) made the write and the cache has not seen it yet; a deleted
// key is absent; and with the switch off the full value is read as before.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { KeyValue, Storage } from "../storage.js";
import { CachedStorage } from "./cached-storage.js";
import { TWO_CLIENT_BACKENDS, type TwoClients } from "../testing/two-clients.js";

type Thing = { v: string; rv: number };
const PREFIX = "/registry/things/";
const enc = (v: string) => new TextEncoder().encode(JSON.stringify({ v }));
const decode = (kv: KeyValue): Thing => ({ ...(JSON.parse(new TextDecoder().decode(kv.value)) as { v: string }), rv: kv.modRevision });

/** `storage` with its get/latestModRevision calls counted. */
function counting(storage: Storage): { storage: Storage; calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  const wrapped = new Proxy(storage, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls[String(prop)] = (calls[String(prop)] ?? 0) + 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { storage: wrapped, calls };
}

for (const b of TWO_CLIENT_BACKENDS) describe(`consistent get from the watch cache (${b.name})`, { skip: b.skip }, () => {
  let backend: TwoClients;
  let ours: Storage;
  let theirs: Storage;
  before(async () => {
    backend = await b.open();
    ({ ours, theirs } = backend);
  });
  after(() => backend.close());

  async function door(consistentGets: boolean, prefix: string) {
    const backend = counting(ours);
    const d = new CachedStorage<Thing>({ backend: backend.storage, prefix, decode, consistentGets });
    await d.start();
    return { door: d, calls: backend.calls };
  }

  test("a cached current version costs a keys-only read and no full read; the cached record itself is returned", async () => {
    const prefix = `${PREFIX}a/`;
    await theirs.create(`${prefix}x`, enc("one"));
    const { door: d, calls } = await door(true, prefix);
    try {
      const first = await d.get(`${prefix}x`, { mode: "MostRecent" });
      assert.equal(first?.object.v, "one");
      const second = await d.get(`${prefix}x`, { mode: "MostRecent" });
      assert.equal(second, first, "the cache's own record, not a fresh decode");
      assert.equal(calls["get"] ?? 0, 0);
      assert.equal(calls["latestModRevision"], 2);
      // Absent everywhere: a full read says so (the cache holds nothing to check).
      assert.equal(await d.get(`${prefix}none`, { mode: "MostRecent" }), undefined);
      assert.equal(calls["get"], 1);
    } finally {
      d.stop();
    }
  });

  test("another client's write or delete that finished before the get is always seen, cache caught up or not", async () => {
    const prefix = `${PREFIX}b/`;
    const kv = await theirs.create(`${prefix}x`, enc("v0"));
    const { door: d } = await door(true, prefix);
    try {
      assert.equal((await d.get(`${prefix}x`, { mode: "MostRecent" }))?.object.v, "v0");
      let rev = kv.modRevision;
      for (let i = 1; i <= 30; i++) {
        rev = (await theirs.update(`${prefix}x`, enc(`v${i}`), rev)).modRevision;
        const got = await d.get(`${prefix}x`, { mode: "MostRecent" });
        assert.equal(got?.object.v, `v${i}`);
        assert.equal(got?.revision, rev);
      }
      await theirs.delete(`${prefix}x`);
      assert.equal(await d.get(`${prefix}x`, { mode: "MostRecent" }), undefined, "deleted by another client: absent at once");
    } finally {
      d.stop();
    }
  });

  test("switched off (ConsistentGetFromCache=false): every consistent get is a full read", async () => {
    const prefix = `${PREFIX}c/`;
    await theirs.create(`${prefix}x`, enc("one"));
    const { door: d, calls } = await door(false, prefix);
    try {
      const first = await d.get(`${prefix}x`, { mode: "MostRecent" });
      const second = await d.get(`${prefix}x`, { mode: "MostRecent" });
      assert.equal(second?.object.v, "one");
      assert.notEqual(second, first, "decoded afresh each time");
      assert.equal(calls["get"], 2);
      assert.equal(calls["latestModRevision"] ?? 0, 0);
    } finally {
      d.stop();
    }
  });

  test("concurrent gets of one key all answer it (on etcd their keys-only ranges share one batch)", async () => {
    const prefix = `${PREFIX}d/`;
    await theirs.create(`${prefix}x`, enc("one"));
    const { door: d } = await door(true, prefix);
    try {
      await d.get(`${prefix}x`, { mode: "MostRecent" });
      const got = await Promise.all(Array.from({ length: 64 }, () => d.get(`${prefix}x`, { mode: "MostRecent" })));
      assert.ok(got.every((g) => g?.object.v === "one"));
    } finally {
      d.stop();
    }
  });
});
