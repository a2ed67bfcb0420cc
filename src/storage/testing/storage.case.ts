// The storage conformance suite: every backend's test calls
// runStorageConformance with a factory of fresh, isolated stores.
// Revisions are global in etcd, so nothing here assumes absolute revision
// numbers: every assertion is relative to revisions the test itself saw.

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import {
  AlreadyExistsError,
  CompactedError,
  ConflictError,
  FutureRevisionError,
  NotFoundError,
  TooLargeError,
} from "../errors.js";
import { DELETE, MAX_VALUE_BYTES, type KeyValue, type Storage, type Watch, type WatchEvent } from "../storage.js";

export interface ConformanceOptions {
  /** Called once after the whole suite (stop servers, remove folders). */
  teardown?: () => Promise<void>;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const bytes = (s: string) => enc.encode(s);
const text = (kv: KeyValue | undefined) => (kv === undefined ? undefined : dec.decode(kv.value));

/** Collect `n` events (progress events included) from a watch, failing after `ms`. */
export async function nextEvents(watch: Watch, n: number, ms = 5000): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  if (n === 0) return out;
  const it = watch[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms with ${out.length}/${n} events`)), ms);
  });
  try {
    while (out.length < n) {
      const r = await Promise.race([it.next(), timeout]);
      if (r.done) throw new Error(`watch ended after ${out.length}/${n} events`);
      out.push(r.value);
    }
    return out;
  } finally {
    clearTimeout(timer);
  }
}

function describeEvent(e: WatchEvent): string {
  if (e.type === "progress") return `progress@${e.revision}`;
  if (e.type === "delete") return `delete ${e.key}@${e.revision} prev=${text(e.prevKv)}`;
  return `put ${e.kv.key}=${text(e.kv)}@${e.revision} prev=${text(e.prevKv)}`;
}

export function runStorageConformance(
  name: string,
  newStore: () => Promise<Storage>,
  options: ConformanceOptions = {},
): void {
  describe(`storage conformance: ${name}`, () => {
    const opened: Storage[] = [];
    const fresh = async () => {
      const s = await newStore();
      opened.push(s);
      return s;
    };
    after(async () => {
      for (const s of opened) await s.close().catch(() => {});
      await options.teardown?.();
    });

    test("create assigns increasing revisions and rejects duplicates", async () => {
      const s = await fresh();
      const a = await s.create("/r/a", bytes("1"));
      const b = await s.create("/r/b", bytes("2"));
      assert.ok(a.modRevision > 0);
      assert.equal(a.createRevision, a.modRevision);
      assert.ok(b.modRevision > a.modRevision, "every write increments the revision");
      await assert.rejects(s.create("/r/a", bytes("x")), AlreadyExistsError);
      const got = await s.get("/r/a");
      assert.equal(text(got.kv), "1", "a failed create changes nothing");
      assert.ok(got.revision >= b.modRevision);
      assert.equal((await s.get("/r/missing")).kv, undefined);
    });

    test("update is compare-and-swap on modRevision", async () => {
      const s = await fresh();
      const a = await s.create("/r/a", bytes("1"));
      const a2 = await s.update("/r/a", bytes("2"), a.modRevision);
      assert.ok(a2.modRevision > a.modRevision);
      assert.equal(a2.createRevision, a.createRevision, "createRevision survives updates");
      const err = await s.update("/r/a", bytes("3"), a.modRevision).then(
        () => assert.fail("stale update succeeded"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof ConflictError, `expected ConflictError, got ${err}`);
      if (err.current !== undefined) assert.equal(err.current.modRevision, a2.modRevision);
      assert.equal(text((await s.get("/r/a")).kv), "2");
      await assert.rejects(s.update("/r/none", bytes("x"), 1), NotFoundError);
    });

    test("delete returns the previous value, honours preconditions, and recreate starts a new life", async () => {
      const s = await fresh();
      const a = await s.create("/r/a", bytes("1"));
      const a2 = await s.update("/r/a", bytes("2"), a.modRevision);
      await assert.rejects(s.delete("/r/a", { expectedModRevision: a.modRevision }), ConflictError);
      const del = await s.delete("/r/a", { expectedModRevision: a2.modRevision });
      assert.equal(text(del.prevKv), "2");
      assert.ok(del.revision > a2.modRevision);
      assert.equal((await s.get("/r/a")).kv, undefined);
      await assert.rejects(s.delete("/r/a"), NotFoundError);
      const again = await s.create("/r/a", bytes("3"));
      assert.ok(again.createRevision > del.revision, "a recreated key has a new createRevision");
    });

    test("reads at a past revision see the state of that revision", async () => {
      const s = await fresh();
      const a1 = await s.create("/r/a", bytes("a1"));
      const b1 = await s.create("/r/b", bytes("b1"));
      const a2 = await s.update("/r/a", bytes("a2"), a1.modRevision);
      const del = await s.delete("/r/b");
      await s.create("/r/c", bytes("c1"));

      assert.equal(text((await s.get("/r/a", { revision: a1.modRevision })).kv), "a1");
      assert.equal(text((await s.get("/r/a", { revision: a2.modRevision })).kv), "a2");
      assert.equal(text((await s.get("/r/b", { revision: del.revision - 1 })).kv), "b1");
      assert.equal((await s.get("/r/b", { revision: del.revision })).kv, undefined);
      const old = await s.get("/r/a", { revision: b1.modRevision });
      assert.equal(old.revision, b1.modRevision, "the read reports the revision it was served at");

      const listed = await s.list("/r/", { revision: a2.modRevision });
      assert.deepEqual(listed.items.map((kv) => `${kv.key}=${text(kv)}`), ["/r/a=a2", "/r/b=b1"]);
      assert.equal(listed.revision, a2.modRevision);
      assert.equal(listed.items[1]!.modRevision, b1.modRevision, "items keep their own modRevision");

      const now = await s.currentRevision();
      await assert.rejects(s.get("/r/a", { revision: now + 1000 }), FutureRevisionError);
    });

    test("list pages with limit and startKey at one revision, with more and remaining", async () => {
      const s = await fresh();
      for (let i = 0; i < 25; i++) await s.create(`/r/items/k${String(i).padStart(2, "0")}`, bytes(String(i)));
      await s.create("/r/other", bytes("x"));
      const first = await s.list("/r/items/", { limit: 10 });
      assert.equal(first.items.length, 10);
      assert.equal(first.more, true);
      assert.equal(first.remaining, 15);
      assert.equal(first.items[0]!.key, "/r/items/k00");
      // A write between pages must not show up when paging at the first page's revision.
      await s.create("/r/items/k05a", bytes("late"));
      const seen = first.items.map((kv) => kv.key);
      let page = first;
      while (page.more) {
        const startKey = page.items[page.items.length - 1]!.key + "\0";
        page = await s.list("/r/items/", { limit: 10, startKey, revision: first.revision });
        assert.equal(page.revision, first.revision);
        seen.push(...page.items.map((kv) => kv.key));
      }
      assert.equal(page.remaining, 0);
      assert.equal(seen.length, 25);
      assert.ok(!seen.includes("/r/items/k05a"));
      assert.deepEqual([...seen].sort(), seen, "keys come back in order");
      const all = await s.list("/r/items/");
      assert.equal(all.items.length, 26);
      assert.equal(all.more, false);
      assert.equal(all.remaining, 0);
      assert.equal(await s.count("/r/items/"), 26);
      assert.equal(await s.count("/r/"), 27);
    });

    test("a prefix does not reach sibling prefixes", async () => {
      const s = await fresh();
      await s.create("/r/pods/a", bytes("1"));
      await s.create("/r/podsecurity/a", bytes("2"));
      await s.create("/r/pod", bytes("3"));
      const listed = await s.list("/r/pods/");
      assert.deepEqual(listed.items.map((kv) => kv.key), ["/r/pods/a"]);
      const from = listed.revision;
      const w = s.watch("/r/pods/", { fromRevision: 0 });
      try {
        await s.create("/r/podsecurity/b", bytes("x"));
        await s.create("/r/pods/b", bytes("y"));
        const [e] = await nextEvents(w, 1);
        assert.equal(e!.type, "put");
        assert.equal(e!.type === "put" && e!.kv.key, "/r/pods/b");
      } finally {
        w.close();
      }
      const replay = s.watch("/r/pods/", { fromRevision: from });
      try {
        const [e] = await nextEvents(replay, 1);
        assert.equal(e!.type === "put" && e!.kv.key, "/r/pods/b", "history replay is filtered too");
      } finally {
        replay.close();
      }
    });

    test("watch replays history after a revision, then streams live events in order with previous values", async () => {
      const s = await fresh();
      const a1 = await s.create("/r/w/a", bytes("a1"));
      const a2 = await s.update("/r/w/a", bytes("a2"), a1.modRevision);
      const b1 = await s.create("/r/w/b", bytes("b1"));
      const w = s.watch("/r/w/", { fromRevision: a1.modRevision });
      try {
        const replayed = await nextEvents(w, 2);
        assert.deepEqual(replayed.map(describeEvent), [
          `put /r/w/a=a2@${a2.modRevision} prev=a1`,
          `put /r/w/b=b1@${b1.modRevision} prev=undefined`,
        ]);
        const d = await s.delete("/r/w/a");
        const b2 = await s.update("/r/w/b", bytes("b2"), b1.modRevision);
        const live = await nextEvents(w, 2);
        assert.deepEqual(live.map(describeEvent), [
          `delete /r/w/a@${d.revision} prev=a2`,
          `put /r/w/b=b2@${b2.modRevision} prev=b1`,
        ]);
      } finally {
        w.close();
      }
    });

    test("watch from revision 0 sees only new events; progress reports the delivered revision", async () => {
      const s = await fresh();
      await s.create("/r/p/old", bytes("old"));
      const w = s.watch("/r/p/", { fromRevision: 0 });
      try {
        const n = await s.create("/r/p/new", bytes("new"));
        const [e] = await nextEvents(w, 1);
        assert.equal(describeEvent(e!), `put /r/p/new=new@${n.modRevision} prev=undefined`);
        await s.create("/r/unrelated", bytes("u"));
        const now = await s.currentRevision();
        w.requestProgress();
        if (s.progressProvable?.() === false) {
          // etcd before 3.4.31 / 3.5.13: an answer past the watch's last event is held until its events reach it.
          const later = await s.create("/r/p/later", bytes("l"));
          const [put, p] = await nextEvents(w, 2);
          assert.equal(describeEvent(put!), `put /r/p/later=l@${later.modRevision} prev=undefined`);
          assert.equal(p!.type, "progress");
          assert.ok(p!.revision >= now && p!.revision <= later.modRevision, `progress ${p!.revision} after the event that proves ${now}`);
          return;
        }
        const [p] = await nextEvents(w, 1);
        assert.equal(p!.type, "progress");
        assert.ok(p!.revision >= now, `progress ${p!.revision} covers ${now}`);
      } finally {
        w.close();
      }
    });

    test("watch events arrive strictly in revision order under concurrent writers", async () => {
      const s = await fresh();
      const start = await s.currentRevision();
      const w = s.watch("/r/o/", { fromRevision: start });
      try {
        const writers = Array.from({ length: 8 }, async (_, i) => {
          for (let j = 0; j < 10; j++) await s.create(`/r/o/${i}-${j}`, bytes("v"));
        });
        await Promise.all(writers);
        const events = await nextEvents(w, 80);
        for (let i = 1; i < events.length; i++) {
          assert.ok(events[i]!.revision > events[i - 1]!.revision, "revisions strictly increase");
        }
        assert.equal(new Set(events.map((e) => e.type === "put" && e.kv.key)).size, 80);
      } finally {
        w.close();
      }
    });

    test("closing a watch ends its iteration", async () => {
      const s = await fresh();
      const ac = new AbortController();
      const w = s.watch("/r/c/", { fromRevision: 0, signal: ac.signal });
      const done = (async () => {
        let n = 0;
        for await (const _ of w) n++;
        return n;
      })();
      ac.abort();
      assert.equal(await done, 0);
    });

    test("32 concurrent writers doing CAS increments lose no update", async () => {
      const s = await fresh();
      await s.create("/r/counter", bytes("0"));
      const writers = 32;
      const perWriter = 10;
      await Promise.all(
        Array.from({ length: writers }, async () => {
          for (let i = 0; i < perWriter; i++) {
            await s.guaranteedUpdate("/r/counter", (cur) => bytes(String(Number(text(cur)) + 1)));
          }
        }),
      );
      assert.equal(text((await s.get("/r/counter")).kv), String(writers * perWriter));
    });

    test("guaranteedUpdate: no-op writes nothing, DELETE deletes, allowCreate creates", async () => {
      const s = await fresh();
      const a = await s.create("/r/g/a", bytes("1"));
      const noop = await s.guaranteedUpdate("/r/g/a", () => undefined);
      assert.equal(noop.changed, false);
      assert.equal((await s.get("/r/g/a")).kv!.modRevision, a.modRevision, "a no-op keeps the revision");
      const gone = await s.guaranteedUpdate("/r/g/a", () => DELETE);
      assert.equal(gone.changed, true);
      assert.equal((await s.get("/r/g/a")).kv, undefined);
      await assert.rejects(s.guaranteedUpdate("/r/g/a", () => bytes("x")), NotFoundError);
      const made = await s.guaranteedUpdate("/r/g/a", (cur) => (cur === undefined ? bytes("new") : undefined), {
        allowCreate: true,
      });
      assert.equal(text(made.kv), "new");
      await assert.rejects(
        s.guaranteedUpdate("/r/g/a", () => {
          throw new Error("refused");
        }),
        /refused/,
      );
      assert.equal(text((await s.get("/r/g/a")).kv), "new", "a throwing tryUpdate changes nothing");
    });

    test("guaranteedUpdate with a suggestion: a current one saves the read, a stale one is corrected", async () => {
      const s = await fresh();
      const a1 = await s.create("/r/s/a", bytes("1"));
      const a2 = await s.update("/r/s/a", bytes("2"), a1.modRevision);
      const seen: string[] = [];
      const bump = (cur: KeyValue | undefined) => (seen.push(text(cur)!), bytes(String(Number(text(cur)) + 1)));

      // Stale: the compare-and-swap fails and the retry starts from the stored value.
      const out = await s.guaranteedUpdate("/r/s/a", bump, { suggestion: a1 });
      assert.deepEqual(seen, ["1", "2"]);
      assert.equal(text(out.kv), "3");

      // Stale, and the decision is "no change" or a refusal: taken again from a fresh read.
      seen.length = 0;
      const noop = await s.guaranteedUpdate("/r/s/a", (cur) => (seen.push(text(cur)!), text(cur) === "3" ? bytes("4") : undefined), { suggestion: a2 });
      assert.deepEqual(seen, ["2", "3"]);
      assert.equal(text(noop.kv), "4");
      seen.length = 0;
      const refused = await s.guaranteedUpdate(
        "/r/s/a",
        (cur) => {
          seen.push(text(cur)!);
          if (text(cur) !== "4") throw new Error("stale");
          return bytes("5");
        },
        { suggestion: a1 },
      );
      assert.deepEqual(seen, ["1", "4"]);
      assert.equal(text(refused.kv), "5");

      // Current: one call, the write lands; a no-op on a current suggestion stays a no-op.
      seen.length = 0;
      const a5 = (await s.get("/r/s/a")).kv!;
      const kept = await s.guaranteedUpdate("/r/s/a", (cur) => (seen.push(text(cur)!), undefined), { suggestion: a5 });
      assert.deepEqual(seen, ["5"]);
      assert.equal(kept.changed, false);
      assert.equal(kept.kv!.modRevision, a5.modRevision);
      await assert.rejects(s.guaranteedUpdate("/r/s/a", () => { throw new Error("refused"); }, { suggestion: a5 }), /refused/);

      // Stale after a delete: the key is gone, so NotFound (or creation, when allowed).
      await s.delete("/r/s/a");
      await assert.rejects(s.guaranteedUpdate("/r/s/a", bump, { suggestion: a5 }), NotFoundError);
      const made = await s.guaranteedUpdate("/r/s/a", (cur) => (cur === undefined ? bytes("new") : bytes("old")), { suggestion: a5, allowCreate: true });
      assert.equal(text(made.kv), "new");
    });

    test("compaction: older reads and watches fail with the compacted revision, newer ones still work", async () => {
      const s = await fresh();
      const a1 = await s.create("/r/k/a", bytes("a1"));
      const keep = await s.create("/r/k/keep", bytes("k1"));
      const a2 = await s.update("/r/k/a", bytes("a2"), a1.modRevision);
      const a3 = await s.update("/r/k/a", bytes("a3"), a2.modRevision);
      await s.compact(a2.modRevision);

      const err = await s.get("/r/k/a", { revision: a1.modRevision }).then(
        () => assert.fail("read of a compacted revision succeeded"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof CompactedError, `expected CompactedError, got ${err}`);
      assert.ok(err.compactedRevision >= a2.modRevision);
      await assert.rejects(s.list("/r/k/", { revision: a1.modRevision }), CompactedError);

      // The compacted revision itself stays readable, including keys written long before it.
      const atCompaction = await s.list("/r/k/", { revision: a2.modRevision });
      assert.deepEqual(atCompaction.items.map((kv) => `${kv.key}=${text(kv)}`), ["/r/k/a=a2", "/r/k/keep=k1"]);
      assert.equal(text((await s.get("/r/k/keep", { revision: a3.modRevision })).kv), "k1");
      assert.equal((await s.get("/r/k/keep")).kv!.modRevision, keep.modRevision);

      const w = s.watch("/r/k/", { fromRevision: a1.modRevision });
      await assert.rejects(nextEvents(w, 1), CompactedError);
      w.close();

      const ok = s.watch("/r/k/", { fromRevision: a2.modRevision });
      try {
        const [e] = await nextEvents(ok, 1);
        assert.equal(describeEvent(e!), `put /r/k/a=a3@${a3.modRevision} prev=a2`);
      } finally {
        ok.close();
      }
      const stats = await s.stats();
      assert.ok(stats.compactedRevision >= a2.modRevision);
    });

    test("compaction keeps deletes consistent and tolerates repeated calls", async () => {
      const s = await fresh();
      const x = await s.create("/r/d/x", bytes("x"));
      const d = await s.delete("/r/d/x");
      const y = await s.create("/r/d/y", bytes("y"));
      await s.compact(y.modRevision);
      await s.compact(y.modRevision).catch((e: unknown) => {
        // etcd answers a repeated compaction with Compacted; that is fine, the state must not change.
        assert.ok(e instanceof CompactedError);
      });
      assert.equal((await s.get("/r/d/x")).kv, undefined);
      assert.deepEqual((await s.list("/r/d/", { revision: y.modRevision })).items.map((kv) => kv.key), ["/r/d/y"]);
      assert.ok(d.revision > x.modRevision);
    });

    test("values up to the limit round-trip; larger ones fail with TooLarge and store nothing", async () => {
      const s = await fresh();
      const big = new Uint8Array(1024 * 1024 + 17).map((_, i) => i % 251);
      const kv = await s.create("/r/big", big);
      const got = await s.get("/r/big");
      assert.equal(got.kv!.value.length, big.length);
      assert.deepEqual(Buffer.from(got.kv!.value), Buffer.from(big));
      assert.equal(got.kv!.modRevision, kv.modRevision);
      const tooBig = new Uint8Array(MAX_VALUE_BYTES + 1);
      await assert.rejects(s.create("/r/huge", tooBig), TooLargeError);
      await assert.rejects(s.update("/r/big", tooBig, kv.modRevision), TooLargeError);
      assert.equal((await s.get("/r/huge")).kv, undefined);
      assert.equal((await s.get("/r/big")).kv!.modRevision, kv.modRevision);
    });

    test("stats report size, key count and revision", async () => {
      const s = await fresh();
      for (let i = 0; i < 5; i++) await s.create(`/r/s/${i}`, bytes("x".repeat(100)));
      const stats = await s.stats();
      assert.ok(stats.sizeBytes > 0);
      assert.equal(stats.keyCount, 5);
      assert.equal(stats.revision, await s.currentRevision());
    });
  });
}
