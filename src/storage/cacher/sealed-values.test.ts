// Values kept sealed (docs/storage.md): on a real etcd with compressed values,
// the watch cache's records hold the compressed bytes etcd holds, not the
// plain JSON (about a quarter of its size), and give the plain value back
// whenever it is asked for: its bytes, a decode after release, the starting
// point of a guaranteedUpdate. A value that compression does not halve is
// kept plain.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { compressedValues } from "../compressed-values.js";
import { openEtcdStorage } from "../etcd/index.js";
import { etcdSkipReason, startEtcd, type EtcdServer } from "../etcd/testing/etcd-server.js";
import { TransformedStorage } from "../transformed-storage.js";
import type { KeyValue } from "../storage.js";
import { CachedStorage } from "./cached-storage.js";
import type { CacheEvent, Cached } from "./cached.js";

type Thing = { name: string; filler: string[]; rv?: number };
const PREFIX = "/registry/things/";
const text = (v: Uint8Array | undefined) => (v === undefined ? undefined : Buffer.from(v).toString());
/** A thing that compresses well (repeated words, as a pod's JSON repeats its field names). */
const thing = (name: string, size = 60): Uint8Array => Buffer.from(JSON.stringify({ name, filler: Array.from({ length: size }, (_, i) => `container-${i % 7}-ready`) }));
const decode = (kv: KeyValue): Thing => ({ ...(JSON.parse(Buffer.from(kv.value).toString()) as Thing), rv: kv.modRevision });

describe("values kept sealed in the watch cache", { skip: etcdSkipReason() }, () => {
  let etcd: EtcdServer;
  before(async () => {
    etcd = await startEtcd();
  });
  after(async () => {
    await etcd?.stop();
  });

  test("records hold the compressed bytes and give back the plain value: bytes, decode after release, guaranteedUpdate", async () => {
    const raw = await openEtcdStorage({ endpoints: etcd.endpoints, prefix: "/sealed" });
    const backend = new TransformedStorage(await openEtcdStorage({ endpoints: etcd.endpoints, prefix: "/sealed" }), () => compressedValues());
    // Another server's store on the same keys: its writes reach this cache through etcd's watch only.
    const other = new TransformedStorage(await openEtcdStorage({ endpoints: etcd.endpoints, prefix: "/sealed" }), () => compressedValues());
    const door = new CachedStorage<Thing>({ backend, prefix: PREFIX, decode, withRevision: (o, rv) => ({ ...o, rv }) });
    await door.start();
    const events: CacheEvent<Thing>[] = [];
    door.subscribe((e) => events.push(e));
    try {
      const [a, b, small] = [thing("a"), thing("b"), thing("small", 1)];
      await door.create(PREFIX + "a", a);
      const wroteB = await other.create(PREFIX + "b", b);
      await door.create(PREFIX + "small", small);
      const at = { mode: "NotOlderThan", rv: wroteB.modRevision } as const;
      const record = async (name: string): Promise<Cached<Thing>> => (await door.get(PREFIX + name, at))!;
      for (const [name, plain] of [["a", a], ["b", b]] as const) {
        const r = await record(name);
        const inEtcd = (await raw.get(PREFIX + name)).kv!.value;
        assert.equal(r.storedSize, inEtcd.length, `${name}: the record holds the bytes etcd holds`);
        assert.ok(r.storedSize * 3 < plain.length, `${name}: ${r.storedSize} bytes held for a ${plain.length}-byte value`);
        assert.equal(text(r.storedValue()), text(plain), `${name}: the plain value comes back`);
      }
      const s = await record("small");
      assert.equal(s.storedSize, small.length, "a value compression does not halve is kept plain");
      assert.equal(text(s.storedValue()), text(small));

      // An update supersedes a's record: released, it decodes again from the compressed bytes.
      const a2 = thing("a2");
      const updated = await door.guaranteedUpdate(PREFIX + "a", (current) => {
        assert.equal(text(current?.value), text(a), "guaranteedUpdate starts from the plain value");
        return a2;
      });
      assert.ok(updated.changed);
      await door.get(PREFIX + "a", { mode: "NotOlderThan", rv: updated.kv!.modRevision });
      const superseded = events.find((e) => e.key === PREFIX + "a" && e.type === "MODIFIED")?.previous;
      assert.ok(superseded !== undefined, "the update's event carries a's old record");
      assert.equal(superseded.object.name, "a", "the released record decodes again");
      assert.equal((await record("a")).object.name, "a2");
    } finally {
      door.stop();
      await backend.close();
      await other.close();
      await raw.close();
    }
  });
});
