// Sharded watches (seed 000, "Sharded list and watch", gate ShardedListAndWatch):
// a watch with a shard selector gets exactly the events of the objects the
// same sharded list returns, `||` joins ranges, the gate off ignores the
// selector, and an object's shard is FNV-1a of its field: the same after a
// restart and on two API servers sharing one etcd.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { etcdSkipReason, startEtcd } from "../storage/etcd/testing/etcd-server.js";
import { sampleApi } from "./testing/sample-api.js";
import { startTestServer, type TestServer, type TestWatch } from "./testing/harness.js";

const W = "/apis/samples.orch.io/v1/namespaces/default/widgets";
const widget = (name: string, namespace = "default") => ({ apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name, namespace }, spec: { color: "red" } });
const merge = { "content-type": "application/merge-patch+json" };
const range = (field: string, start: string, end: string) => `shardRange(object.metadata.${field}, '${start}', '${end}')`;
const LOW = range("uid", "0x0000000000000000", "0x8000000000000000");
const HIGH = range("uid", "0x8000000000000000", "0x10000000000000000");
const Q1 = range("uid", "0x0000000000000000", "0x4000000000000000");
const Q4 = range("uid", "0xc000000000000000", "0x10000000000000000");
const OUTER = `${Q1} || ${Q4}`;
const q = (selector: string) => `shardSelector=${encodeURIComponent(selector)}`;

const gates = (on: boolean) => ({ ShardedListAndWatch: String(on) });

async function namesIn(t: TestServer, path: string, selector: string): Promise<string[]> {
  const r = await t.request("GET", `${path}?${q(selector)}`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.metadata.shardInfo?.selector, selector);
  return r.json.items.map((w: any) => w.metadata.name);
}

/**
 * The watch's events as "TYPE name rv" up to a bookmark at or past `rv`: a
 * bookmark says everything up to its version was sent, so nothing is missed
 * and nothing is waited for by the clock.
 */
async function eventsUntil(w: TestWatch, rv: number): Promise<string[]> {
  const seen: string[] = [];
  for (;;) {
    const [e] = await w.next(1);
    if (e.type !== "BOOKMARK") seen.push(`${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`);
    else if (Number(e.object.metadata.resourceVersion) >= rv) return seen;
  }
}

/** 64-bit FNV-1a of the UTF-8 bytes, written out here from the seed's definition (not the server's code). */
function fnv1a64(s: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(s, "utf8")) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h;
}

describe("sharded watch (gate ShardedListAndWatch)", () => {
  test("gate on: each sharded watch gets exactly the events of its sharded list's objects; || joins ranges", async () => {
    const t = await startTestServer({ modules: [sampleApi], gates: gates(true), bookmarkIntervalMs: 100 });
    try {
      for (let i = 0; i < 8; i++) assert.equal((await t.request("POST", W, { body: widget(`before-${i}`) })).status, 201);
      const watch = (selector?: string) => t.watch(`${W}?watch=1&allowWatchBookmarks=true${selector ? `&${q(selector)}` : ""}`);
      const [all, low, high, outer] = await Promise.all([watch(), watch(LOW), watch(HIGH), watch(OUTER)]);
      for (const w of [all, low, high, outer]) assert.equal(w.status, 200);

      const write = async (method: string, path: string, options?: Parameters<TestServer["request"]>[2]) => {
        const r = await t.request(method, path, options);
        assert.ok(r.status === 200 || r.status === 201, r.text);
      };
      for (let i = 0; i < 16; i++) await write("POST", W, { body: widget(`during-${i}`) });
      // Membership from the sharded lists, taken while every object exists.
      const [lowNames, highNames, outerNames, q1Names, q4Names] = await Promise.all([LOW, HIGH, OUTER, Q1, Q4].map((s) => namesIn(t, W, s)));
      for (let i = 0; i < 8; i++) await write("PATCH", `${W}/before-${i}`, { rawBody: JSON.stringify({ spec: { color: `c${i}` } }), headers: merge });
      for (let i = 0; i < 4; i++) {
        for (const name of [`before-${i}`, `during-${i}`]) await write("DELETE", `${W}/${name}`);
      }
      // A consistent list's version covers every write above (a DELETE answers with the object's previous version).
      const last = Number((await t.request("GET", W)).json.metadata.resourceVersion);

      const everything = await eventsUntil(all, last);
      assert.equal(everything.length, 8 + 16 + 8 + 8, "synthetic ADDED, creations, changes and deletions");
      const allNames = [...lowNames, ...highNames].sort();
      assert.equal(allNames.length, 24);
      assert.deepEqual(new Set(allNames).size, 24, "the two halves do not overlap");
      assert.ok(lowNames.length > 0 && highNames.length > 0, "24 random uids fill both halves");
      assert.deepEqual(outerNames.sort(), [...q1Names, ...q4Names].sort(), "a || b lists the union of a and b");

      for (const [w, names, label] of [[low, lowNames, "low"], [high, highNames, "high"], [outer, outerNames, "outer"]] as const) {
        const mine = new Set(names);
        const expected = everything.filter((e) => mine.has(e.split(" ")[1]!));
        assert.deepEqual(await eventsUntil(w, last), expected, `${label}: its objects' events, in order, and no others`);
      }
      for (const w of [all, low, high, outer]) w.close();

      const bad = await t.request("GET", `${W}?watch=1&${q("shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')")}`);
      assert.equal(bad.status, 400, "a malformed selector on a watch is refused before it starts");
      assert.match(bad.json.message, /invalid shard selector: unsupported field path "object.metadata.name"/);
    } finally {
      await t.close();
    }
  });

  test("gate off: a watch ignores the selector and gets every event", async () => {
    const t = await startTestServer({ modules: [sampleApi], gates: gates(false), bookmarkIntervalMs: 100 });
    try {
      const w = await t.watch(`${W}?watch=1&allowWatchBookmarks=true&${q(LOW)}`);
      assert.equal(w.status, 200);
      const created: string[] = [];
      for (let i = 0; i < 6; i++) {
        const r = (await t.request("POST", W, { body: widget(`off-${i}`) })).json;
        created.push(`ADDED off-${i} ${r.metadata.resourceVersion}`);
      }
      assert.deepEqual(await eventsUntil(w, Number(created.at(-1)!.split(" ")[2])), created);
      w.close();
    } finally {
      await t.close();
    }
  });

  test("an object's shard is FNV-1a of its field: as computed independently, and the same after a restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "orch-sharded-watch-"));
    const first = await startTestServer({ modules: [sampleApi], gates: gates(true), dataDir });
    let restarted: TestServer | undefined;
    try {
      assert.equal(fnv1a64("a"), 0xaf63dc4c8601ec8cn, "the reference hash meets FNV-1a's published test vector");
      const namespaces = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"].map((n) => `ns-${n}`);
      for (const ns of namespaces) {
        assert.equal((await first.request("POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } } })).status, 201);
        assert.equal((await first.request("POST", `/apis/samples.orch.io/v1/namespaces/${ns}/widgets`, { body: widget(`in-${ns}`, ns) })).status, 201);
      }
      const ALL = "/apis/samples.orch.io/v1/widgets";
      const byNamespace = range("namespace", "0x0000000000000000", "0x8000000000000000");
      const lowNamespaces = namespaces.filter((ns) => fnv1a64(ns) < 0x8000000000000000n).map((ns) => `in-${ns}`).sort();
      assert.ok(lowNamespaces.length > 0 && lowNamespaces.length < namespaces.length, "the chosen namespaces fall on both sides");
      assert.deepEqual(await namesIn(first, ALL, byNamespace), lowNamespaces, "namespace shards match the reference hash");

      const items: any[] = (await first.request("GET", ALL)).json.items;
      const lowByUid = items.filter((w) => fnv1a64(w.metadata.uid) < 0x8000000000000000n).map((w) => w.metadata.name);
      assert.deepEqual(await namesIn(first, ALL, LOW), lowByUid, "uid shards match the reference hash");

      await first.close(); // the data folder stays: it was given
      restarted = await startTestServer({ modules: [sampleApi], gates: gates(true), dataDir });
      assert.deepEqual(await namesIn(restarted, ALL, LOW), lowByUid, "the same shard after a restart");
      assert.deepEqual(await namesIn(restarted, ALL, byNamespace), lowNamespaces);
    } finally {
      await (restarted ?? first).close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("two API servers sharing one etcd put every object in the same shard", { skip: etcdSkipReason() ?? false }, async () => {
    const etcd = await startEtcd();
    const storage = { backend: "etcd" as const, etcdServers: etcd.endpoints, etcdPrefix: "/sharded" };
    const servers: TestServer[] = [];
    try {
      servers.push(await startTestServer({ modules: [sampleApi], gates: gates(true), storage, bookmarkIntervalMs: 100 }));
      servers.push(await startTestServer({ modules: [sampleApi], gates: gates(true), storage, bookmarkIntervalMs: 100 }));
      const [one, two] = servers as [TestServer, TestServer];
      const start = Number((await two.request("GET", W)).json.metadata.resourceVersion);
      const lowOnTwo = await two.watch(`${W}?watch=1&allowWatchBookmarks=true&resourceVersion=${start}&${q(LOW)}`);
      const written = new Map<string, string>();
      let last = 0;
      for (let i = 0; i < 12; i++) {
        const r = await one.request("POST", W, { body: widget(`e-${i}`) });
        assert.equal(r.status, 201, r.text);
        last = Number(r.json.metadata.resourceVersion);
        written.set(`e-${i}`, `ADDED e-${i} ${last}`);
      }
      const lowOne = await namesIn(one, W, LOW);
      const lowTwo = await namesIn(two, W, LOW);
      assert.deepEqual(lowTwo, lowOne, "both replicas list the same shard");
      assert.equal((await namesIn(two, W, HIGH)).length + lowTwo.length, 12);
      const expected = [...written].filter(([name]) => lowOne.includes(name)).map(([, event]) => event);
      assert.deepEqual(await eventsUntil(lowOnTwo, last), expected, "the watch on the other replica: that shard's events");
      lowOnTwo.close();
    } finally {
      for (const s of servers) await s.close();
      await etcd.stop();
    }
  });
});
