// The etcd backend on a 3-member cluster whose leader is SIGKILLed mid-run,
// with the client connected to that leader: every acknowledged write must be
// readable afterwards, revisions must increase, and the watch must resume on
// another member and deliver each acknowledged write exactly once, in order.

import { test } from "node:test";
import assert from "node:assert/strict";
import { StorageUnavailableError } from "../errors.js";
import type { WatchEvent } from "../storage.js";
import { openEtcdStorage, type EtcdLogger, type EtcdStorage } from "./index.js";
import { etcdSkipReason, startEtcdCluster } from "./testing/etcd-server.js";

const WRITERS = 4;
const BEFORE_KILL_MS = 1500;
// Writes in flight when the leader dies can hang until the request timeout
// (etcd forwards them to the dead leader); the window after the kill outlasts it.
const REQUEST_TIMEOUT_MS = 2000;
const AFTER_KILL_MS = 4000;

const skip = etcdSkipReason();
const quiet: EtcdLogger & { lines: string[] } = {
  lines: [],
  info(m) {
    this.lines.push(m);
  },
  warn(m) {
    this.lines.push(m);
  },
};

test("leader killed under load: acknowledged writes survive and the watch sees each exactly once", { skip: skip ?? false, timeout: 60_000 }, async () => {
  const cluster = await startEtcdCluster(3);
  const stores: EtcdStorage[] = [];
  try {
    const leader = await cluster.leader();
    // The leader first: both the writers' calls and the watch stream start on the member we kill.
    const endpoints = [leader.clientUrl, ...cluster.members.filter((m) => m !== leader).map((m) => m.clientUrl)];
    const open = async () => {
      const s = await openEtcdStorage({ endpoints, prefix: "/cluster", requestTimeoutMs: REQUEST_TIMEOUT_MS, dialTimeoutMs: 500, logger: quiet });
      stores.push(s);
      return s;
    };
    const writer = await open();
    const watcher = await open();

    const from = await writer.currentRevision();
    const watch = watcher.watch("/w/", { fromRevision: from });
    const seen: WatchEvent[] = [];
    const watching = (async () => {
      for await (const event of watch) seen.push(event);
    })();

    const acked = new Map<string, number>(); // key → modRevision
    let ambiguous = 0;
    let ackedAfterKill = 0;
    let killed = false;
    let stop = false;
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      let last = 0;
      for (let i = 0; !stop; i++) {
        const key = `/w/${w}/${String(i).padStart(6, "0")}`;
        try {
          const kv = await writer.create(key, new TextEncoder().encode(key));
          assert.ok(kv.modRevision > last, "one writer's revisions increase");
          last = kv.modRevision;
          acked.set(key, kv.modRevision);
          if (killed) ackedAfterKill++;
        } catch (err) {
          // Not acknowledged: it may or may not exist; either is allowed.
          if (!(err instanceof StorageUnavailableError)) throw err;
          ambiguous++;
        }
      }
    });

    await new Promise((r) => setTimeout(r, BEFORE_KILL_MS));
    const ackedBeforeKill = acked.size;
    await leader.kill("SIGKILL");
    killed = true;
    const killedAt = Date.now();
    await new Promise((r) => setTimeout(r, AFTER_KILL_MS));
    stop = true;
    await Promise.all(writers);
    const newLeader = await cluster.leader();
    assert.notEqual(newLeader, leader);
    assert.ok(ackedBeforeKill > 20, `writes before the kill: ${ackedBeforeKill}`);
    assert.ok(ackedAfterKill > 20, `writes after the kill: ${ackedAfterKill} (ambiguous: ${ambiguous})`);

    // Every acknowledged write is readable, with the revision it was acknowledged at.
    const listed = await writer.list("/w/");
    const stored = new Map(listed.items.map((kv) => [kv.key, kv.modRevision]));
    for (const [key, revision] of acked) assert.equal(stored.get(key), revision, `acknowledged ${key}@${revision} is stored`);
    assert.ok(stored.size <= acked.size + ambiguous, "nothing appears that no one wrote");

    // The watch catches up with everything stored, each exactly once, in order.
    const deadline = Date.now() + 15_000;
    while (seen.length < stored.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    watch.close();
    await watching;
    const puts = seen.filter((e): e is Extract<WatchEvent, { type: "put" }> => e.type === "put");
    assert.equal(puts.length, seen.length, "only puts happened");
    for (let i = 1; i < puts.length; i++) assert.ok(puts[i]!.revision > puts[i - 1]!.revision, "watch revisions strictly increase");
    const counts = new Map<string, number>();
    for (const e of puts) counts.set(e.kv.key, (counts.get(e.kv.key) ?? 0) + 1);
    for (const [key, revision] of acked) {
      assert.equal(counts.get(key), 1, `acknowledged ${key}@${revision} seen exactly once`);
    }
    assert.equal(puts.length, stored.size, "the watch saw every stored write once");

    // The killed member comes back and catches up.
    await leader.restart();
    const direct = await openEtcdStorage({ endpoints: [leader.clientUrl], prefix: "/cluster", logger: quiet });
    stores.push(direct);
    assert.equal(await direct.count("/w/"), stored.size);
    console.log(
      `# acked ${acked.size} (before kill ${ackedBeforeKill}, after ${ackedAfterKill}), ambiguous ${ambiguous}, ` +
        `events ${puts.length}, ${quiet.lines.length} log lines, failover window ~${Math.round((Date.now() - killedAt) / 100) / 10}s incl. checks`,
    );
  } finally {
    for (const s of stores) await s.close();
    await cluster.stop();
  }
});
