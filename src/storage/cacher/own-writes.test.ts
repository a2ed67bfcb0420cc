// ownWrites() as the admission plugins read it, on a real etcd and on the
// embedded lmdb store: a write is visible to reads once committed, before its
// own answer comes back (lmdb answers after the flush; on etcd a Range can be
// answered before a Txn). A client that saw such a version in a consistent GET
// through the door must find it in the next ownWrites() read, as a consistent
// read would show it. (Quota admission charged a quota without the status the
// client had just read: src/controllers/resourcequota, "count/replicasets.apps".)

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { guaranteedUpdate } from "../guaranteed-update.js";
import type { KeyValue, Storage, Watch } from "../storage.js";
import { CachedStorage } from "./cached-storage.js";
import { TWO_CLIENT_BACKENDS, type TwoClients } from "../testing/two-clients.js";

type Thing = { v: string; rv?: number };
const PREFIX = "/registry/things/";
const enc = (v: string) => new TextEncoder().encode(JSON.stringify({ v }));

/**
 * The backend with a gate: while it is shut, a write commits but its answer
 * waits, and so does everything its watches deliver (the write's event and
 * progress past it): the moment between a commit and its answer, held open.
 */
function gated(inner: Storage) {
  let gate: Promise<void> = Promise.resolve();
  let open = () => {};
  let committed: () => void = () => {};
  const held = <T>(answer: Promise<T>): Promise<T> => answer.then(async (out) => (committed(), await gate, out));
  const watch = (w: Watch): Watch => ({
    requestProgress: () => w.requestProgress(),
    close: () => w.close(),
    async *[Symbol.asyncIterator]() {
      for await (const e of w) {
        await gate;
        yield e;
      }
    },
  });
  const backend: Storage = new Proxy(inner, {
    get(target, prop) {
      if (prop === "update") return (key: string, value: Uint8Array, rev: number) => held(target.update(key, value, rev));
      if (prop === "delete") return (key: string, options?: Parameters<Storage["delete"]>[1]) => held(target.delete(key, options));
      if (prop === "guaranteedUpdate") return (key: string, tryUpdate: Parameters<Storage["guaranteedUpdate"]>[1], options?: Parameters<Storage["guaranteedUpdate"]>[2]) => guaranteedUpdate(backend, key, tryUpdate, options);
      if (prop === "watch") return (prefix: string, options: Parameters<Storage["watch"]>[1]) => watch(target.watch(prefix, options));
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    backend,
    /** Shut the gate; resolves once the next write has committed (its answer still held). */
    shut(): Promise<void> {
      gate = new Promise((resolve) => (open = resolve));
      return new Promise((resolve) => (committed = resolve));
    },
    open: () => open(),
  };
}

for (const b of TWO_CLIENT_BACKENDS) describe(`ownWrites() after a version a GET showed (${b.name})`, { skip: b.skip }, () => {
  let backend: TwoClients;
  before(async () => {
    backend = await b.open();
  });
  after(() => backend.close());

  async function door(prefix: string, consistentGets: boolean) {
    const g = gated(backend.ours);
    const d = new CachedStorage<Thing>({
      backend: g.backend,
      prefix,
      decode: (kv: KeyValue) => ({ ...(JSON.parse(new TextDecoder().decode(kv.value)) as Thing), rv: kv.modRevision }),
      withRevision: (obj, rv) => ({ ...obj, rv }),
      consistentGets,
    });
    await d.start();
    return { d, g };
  }

  /** Create `key` through the door and wait for the cache to apply its event: on etcd 3.4 a read at the create's version was seen, now and then, to come back without the key (a progress answer ahead of the event, suspected; not this test's subject). */
  async function created(d: CachedStorage<Thing>, key: string, v: string) {
    const applied = new Promise<void>((resolve) => {
      const off = d.subscribe((e) => {
        if (e.key === key) (off(), resolve());
      });
    });
    const record = await d.create(key, enc(v));
    await applied;
    return record;
  }

  for (const consistentGets of [false, true]) {
    test(`an update seen before its answer came back (consistentGets ${consistentGets})`, async () => {
      const prefix = `${PREFIX}u${consistentGets ? 1 : 0}/`;
      const { d, g } = await door(prefix, consistentGets);
      try {
        const first = await created(d, `${prefix}q`, "v1");
        const committed = g.shut();
        const writing = d.guaranteedUpdate(first.key, () => enc("v2"));
        await committed;
        const seen = await d.get(first.key, { mode: "MostRecent" });
        assert.equal(seen?.object.v, "v2", "the GET reads the committed write");
        const at = d.ownWrites();
        assert.ok(at.mode === "NotOlderThan" && at.rv >= seen!.revision, `ownWrites() ${JSON.stringify(at)} is behind the version shown (${seen!.revision})`);
        const reading = d.list(prefix, at);
        setTimeout(() => g.open(), 50);
        assert.deepEqual((await reading).items.map((c) => c.object.v), ["v2"], "the next ownWrites() read shows what the GET showed");
        await writing;
      } finally {
        g.open();
        d.stop();
      }
    });

    test(`a delete seen before its answer came back (consistentGets ${consistentGets})`, async () => {
      const prefix = `${PREFIX}d${consistentGets ? 1 : 0}/`;
      const { d, g } = await door(prefix, consistentGets);
      try {
        const first = await created(d, `${prefix}q`, "v1");
        const committed = g.shut();
        const deleting = d.delete(first.key);
        await committed;
        assert.equal(await d.get(first.key, { mode: "MostRecent" }), undefined, "the GET reads the committed delete");
        const reading = d.get(first.key, d.ownWrites());
        setTimeout(() => g.open(), 50);
        assert.equal(await reading, undefined, "the next ownWrites() read does not bring the object back");
        await deleting;
      } finally {
        g.open();
        d.stop();
      }
    });
  }
});
