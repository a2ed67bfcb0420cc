// Progress answers from an etcd that does not order them after pending events
// (Debian's 3.4.23 here: the bug is fixed in 3.4.31 / 3.5.13). The etcd tests
// run against the real etcd, but whether an answer overtakes events depends on
// etcd's internal queues and cannot be produced on demand, so this test plays
// the watch stream's responses itself, in the order such an etcd can send them,
// through a stand-in for the connection (the only fake, and the reason for it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type { WatchEvent } from "../storage.js";
import { EtcdWatch } from "./watch.js";
import type { MvccKeyValue, WatchResponse } from "./rpc.js";

class ScriptedStream extends EventEmitter {
  readonly written: unknown[] = [];
  write(message: unknown): void {
    this.written.push(message);
  }
  pause(): void {}
  resume(): void {}
  cancel(): void {}
}

const header = (revision: number) => ({ cluster_id: 0, member_id: 0, revision, raft_term: 0 });
const response = (over: Partial<WatchResponse>): WatchResponse => ({ header: null, watch_id: 0, created: false, canceled: false, compact_revision: 0, cancel_reason: "", events: [], ...over });
const kv = (revision: number): MvccKeyValue => ({ key: Buffer.from(`/p/k${revision}`), create_revision: revision, mod_revision: revision, version: 1, value: Buffer.from("v") });
const tick = () => new Promise((r) => setTimeout(r, 5));

test("an etcd progress answer ahead of the events still on their way is never delivered as progress, however many rounds it takes", async () => {
  const stream = new ScriptedStream();
  const watch = new EtcdWatch({
    connection: { openStream: () => ({ stream, endpoint: 0 }), streamAlive: () => {} } as never,
    key: Buffer.from("/p/"),
    rangeEnd: Buffer.from("/p0"),
    fromRevision: 10,
    prevKv: true,
    signal: undefined,
    toKeyValue: (m) => ({ key: m.key.toString(), value: m.value, createRevision: m.create_revision, modRevision: m.mod_revision }),
    onCompacted: () => {},
    progressIsOrdered: () => false,
    resumeTimeoutMs: 10_000,
    onClose: () => {},
  });
  const seen: WatchEvent[] = [];
  const reading = (async () => {
    for await (const e of watch) seen.push(e);
  })();
  stream.emit("data", response({ created: true, header: header(10) }));
  // Writes keep coming: every answer says 100 while the events delivered are still far behind it.
  let revision = 10;
  for (let round = 0; round < 25; round++) {
    watch.requestProgress();
    stream.emit("data", response({ watch_id: -1, header: header(100) }));
    stream.emit("data", response({ events: [{ type: "PUT", kv: kv(++revision), prev_kv: null }], header: header(100) }));
    await tick(); // the confirmation round's request goes out on a timer
  }
  const progress = () => seen.filter((e) => e.type === "progress").map((e) => e.revision);
  assert.deepEqual(progress(), [], `no progress believed past the events delivered (last event ${revision})`);
  // The events do reach the answer's revision: now it is proven and delivered.
  for (; revision < 100; ) stream.emit("data", response({ events: [{ type: "PUT", kv: kv(++revision), prev_kv: null }], header: header(100) }));
  watch.requestProgress();
  stream.emit("data", response({ watch_id: -1, header: header(100) }));
  await tick();
  assert.deepEqual(progress().slice(-1), [100]);
  const events = seen.filter((e) => e.type === "put").map((e) => e.revision);
  assert.deepEqual(events, Array.from({ length: 90 }, (_, i) => 11 + i), "every event once, in order");
  // Every progress revision comes after the events up to it.
  for (const [i, e] of seen.entries()) {
    if (e.type !== "progress") continue;
    assert.ok(seen.slice(i + 1).every((later) => later.type === "progress" || later.revision > e.revision), `an event at or below progress ${e.revision} came after it`);
  }
  watch.close();
  await reading;
});
