// A create that hands the door the object its bytes decode to (`made`), on a
// real etcd and on the embedded lmdb store: neither the answer nor the cache's
// applying of the write's event decodes the bytes, whichever of the two comes
// first (on etcd the event usually overtakes the Txn's answer, on lmdb the
// answer comes first); a value someone else wrote is still decoded, and a
// create that fails leaves nothing behind that could stand for another value.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { AlreadyExistsError } from "../errors.js";
import type { KeyValue, Storage } from "../storage.js";
import { CachedStorage } from "./cached-storage.js";
import { TWO_CLIENT_BACKENDS, type TwoClients } from "../testing/two-clients.js";

type Thing = { v: string; nested: { n: number }; rv?: number };
const PREFIX = "/registry/things/";
const thing = (v: string): Thing => ({ v, nested: { n: v.length } });
const enc = (t: Thing) => new TextEncoder().encode(JSON.stringify(t));

for (const b of TWO_CLIENT_BACKENDS) describe(`a create's own object as its record (${b.name})`, { skip: b.skip }, () => {
  let backend: TwoClients;
  before(async () => {
    backend = await b.open();
  });
  after(() => backend.close());

  async function door(prefix: string) {
    const decoded: string[] = [];
    const d = new CachedStorage<Thing>({
      backend: backend.ours,
      prefix,
      decode: (kv: KeyValue) => {
        decoded.push(kv.key);
        return { ...(JSON.parse(new TextDecoder().decode(kv.value)) as Thing), rv: kv.modRevision };
      },
      withRevision: (obj, rv) => ({ ...obj, rv }),
    });
    await d.start();
    return { door: d, decoded };
  }

  test("64 concurrent creates: no decode, and each answer is the very record the cache applied", async () => {
    const prefix = `${PREFIX}a/`;
    const { door: d, decoded } = await door(prefix);
    try {
      const made = Array.from({ length: 64 }, (_, i) => thing(`t${i}`));
      const records = await Promise.all(made.map((m, i) => d.create(`${prefix}k${i}`, enc(m), m)));
      for (let i = 0; i < 64; i++) {
        const r = records[i]!;
        assert.equal(r.object.v, `t${i}`);
        assert.equal(r.object.rv, r.revision, "stamped with the write's revision");
        assert.equal(r.object.nested, made[i]!.nested, "the caller's object, not a decode of it");
        assert.equal(await d.get(r.key, d.ownWrites()), r, "the cache holds the answer's record");
        assert.ok(Buffer.from(r.storedValue()!).equals(enc(made[i]!)), "the stored bytes");
      }
      assert.deepEqual(decoded, [], "nothing decoded");
    } finally {
      d.stop();
    }
  });

  test("a key someone else created first: AlreadyExists, and their value is decoded by the cache, not taken for ours", async () => {
    const prefix = `${PREFIX}b/`;
    const { door: d, decoded } = await door(prefix);
    try {
      const theirs = await backend.theirs.create(`${prefix}x`, enc(thing("theirs")));
      const ours = thing("ours");
      await assert.rejects(d.create(`${prefix}x`, enc(ours), ours), (err) => err instanceof AlreadyExistsError);
      const cached = await d.get(`${prefix}x`, { mode: "NotOlderThan", rv: theirs.modRevision });
      assert.equal(cached?.object.v, "theirs");
      assert.deepEqual(decoded, [`${prefix}x`]);
    } finally {
      d.stop();
    }
  });

  test("after a failed create, the same bytes written by someone else are decoded (nothing pending is left)", async () => {
    const prefix = `${PREFIX}c/`;
    const { door: d, decoded } = await door(prefix);
    try {
      const first = await backend.theirs.create(`${prefix}x`, enc(thing("first")));
      const same = thing("same");
      await assert.rejects(d.create(`${prefix}x`, enc(same), same));
      await backend.theirs.delete(`${prefix}x`);
      const again = await backend.theirs.create(`${prefix}x`, enc(same));
      const cached = await d.get(`${prefix}x`, { mode: "NotOlderThan", rv: again.modRevision });
      assert.ok(first.modRevision < again.modRevision);
      assert.equal(cached?.object.v, "same");
      assert.notEqual(cached?.object.nested, same.nested, "decoded from the event, not our failed create's object");
      assert.deepEqual(decoded, [`${prefix}x`, `${prefix}x`]);
    } finally {
      d.stop();
    }
  });

  test("without `made` a create decodes once, as before", async () => {
    const prefix = `${PREFIX}d/`;
    const { door: d, decoded } = await door(prefix);
    try {
      const r = await d.create(`${prefix}x`, enc(thing("plain")));
      assert.equal(await d.get(r.key, d.ownWrites()), r);
      assert.deepEqual(decoded, [`${prefix}x`]);
    } finally {
      d.stop();
    }
  });
});
