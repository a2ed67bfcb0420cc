// The etcd backend against real etcd: the shared conformance suite (one etcd,
// a fresh key prefix per store), then what only etcd has: compacted revisions
// learnt from etcd, restarts, unreachable members, fail-over, progress order.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { CompactedError, StorageUnavailableError, TooLargeError } from "../errors.js";
import { MAX_VALUE_BYTES, type Storage, type Watch, type WatchEvent } from "../storage.js";
import { nextEvents, runStorageConformance } from "../testing/storage.case.js";
import { openEtcdStorage, type EtcdLogger, type EtcdStorage, type EtcdStorageOptions } from "./index.js";
import { etcdSkipReason, startEtcd, type EtcdServer } from "./testing/etcd-server.js";

const skip = etcdSkipReason();
const bytes = (s: string) => new TextEncoder().encode(s);
const text = (v: Uint8Array | undefined) => (v === undefined ? undefined : Buffer.from(v).toString());
let stores = 0;
const uniquePrefix = () => `/t${process.pid}-${++stores}`;

/** A logger that keeps its lines, so tests can check what was said (and that it was said once). */
function recordingLogger(): EtcdLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(m), warn: (m) => lines.push(m) };
}

async function waitFor(condition: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function open(options: Partial<EtcdStorageOptions> & { endpoints: string[] }): Promise<EtcdStorage> {
  return openEtcdStorage({ prefix: uniquePrefix(), logger: recordingLogger(), ...options });
}

if (skip !== undefined) {
  test("etcd storage", { skip }, () => {});
} else {
  let shared: Promise<EtcdServer> | undefined;
  const sharedEtcd = () => (shared ??= startEtcd());
  runStorageConformance("etcd", async () => open({ endpoints: (await sharedEtcd()).endpoints }), {
    teardown: async () => (await shared)?.stop(),
  });
  // The clients before our own framing stay selectable for a release (ORCH_ETCD_CLIENT=h2, =grpc-js): they pass the same suite.
  for (const client of ["h2", "grpc-js"] as const) {
    let sharedOld: Promise<EtcdServer> | undefined;
    runStorageConformance(
      `etcd, ${client} client`,
      async () => open({ endpoints: (await (sharedOld ??= startEtcd())).endpoints, client }),
      { teardown: async () => (await sharedOld)?.stop() },
    );
  }

  describe("etcd specifics", () => {
    let etcd: EtcdServer;
    before(async () => {
      etcd = await startEtcd();
    });
    after(async () => {
      await etcd?.stop();
    });

    test("compacted reads, watches and stats carry etcd's compacted revision, even to another client", async () => {
      const a = await open({ endpoints: etcd.endpoints });
      const b = await open({ endpoints: etcd.endpoints });
      try {
        const k1 = await a.create("/k", bytes("1"));
        const k2 = await a.update("/k", bytes("2"), k1.modRevision);
        const k3 = await a.update("/k", bytes("3"), k2.modRevision);
        await a.compact(k3.modRevision);
        // b never compacted: it must learn the revision from etcd, not from itself.
        const err = await b.get("/k", { revision: k1.modRevision }).then(
          () => assert.fail("read at a compacted revision succeeded"),
          (e: unknown) => e,
        );
        assert.ok(err instanceof CompactedError, `got ${err}`);
        assert.equal(err.compactedRevision, k3.modRevision);
        assert.equal(err.requestedRevision, k1.modRevision);
        const listErr = await b.list("/", { revision: k2.modRevision }).catch((e: unknown) => e);
        assert.ok(listErr instanceof CompactedError && listErr.compactedRevision === k3.modRevision);

        const w = b.watch("/", { fromRevision: k1.modRevision });
        const watchErr = await nextEvents(w, 1).catch((e: unknown) => e);
        assert.ok(watchErr instanceof CompactedError, `got ${watchErr}`);
        assert.equal(watchErr.compactedRevision, k3.modRevision);
        w.close();
        assert.equal((await b.stats()).compactedRevision, k3.modRevision);

        // Compacting again at an older revision is etcd's "compacted" answer.
        await assert.rejects(b.compact(k2.modRevision), CompactedError);
      } finally {
        await a.close();
        await b.close();
      }
    });

    test("values read in a list or a watch do not keep the response they came in alive", async () => {
      const s = await open({ endpoints: etcd.endpoints });
      try {
        const start = await s.currentRevision();
        for (let i = 0; i < 40; i++) await s.create(`/own/${i}`, new Uint8Array(3000).fill(65 + (i % 26)));
        const w = s.watch("/own/", { fromRevision: start });
        const values = [...(await s.list("/own/")).items.map((kv) => kv.value)];
        for (const e of await nextEvents(w, 40)) if (e.type === "put") values.push(e.kv.value);
        w.close();
        // A list of 40 × 3 KB arrives as one 120 KB message; a value holding it would keep all 40 alive.
        for (const v of values) assert.ok(v.buffer.byteLength <= Math.max(2 * v.length, Buffer.poolSize), `a ${v.length}-byte value holds ${v.buffer.byteLength} bytes`);
      } finally {
        await s.close();
      }
    });

    test("a watch with prevKv false gets no previous values (etcd sends none); the default watch gets them", async () => {
      const s = await open({ endpoints: etcd.endpoints });
      try {
        const start = await s.currentRevision();
        const a = await s.create("/pv/a", bytes("1"));
        await s.update("/pv/a", bytes("2"), a.modRevision);
        await s.delete("/pv/a");
        const summary = (events: WatchEvent[]) => events.map((e) => (e.type === "progress" ? "progress" : `${e.type}:${e.prevKv === undefined ? "-" : new TextDecoder().decode(e.prevKv.value)}`));
        const without = s.watch("/pv/", { fromRevision: start, prevKv: false });
        const withPrev = s.watch("/pv/", { fromRevision: start });
        try {
          assert.deepEqual(summary(await nextEvents(without, 3)), ["put:-", "put:-", "delete:"]);
          assert.deepEqual(summary(await nextEvents(withPrev, 3)), ["put:-", "put:1", "delete:2"]);
        } finally {
          without.close();
          withPrev.close();
        }
      } finally {
        await s.close();
      }
    });

    test("a watch from a past revision delivers the replayed events before its progress event", async () => {
      const s = await open({ endpoints: etcd.endpoints });
      try {
        const start = await s.currentRevision();
        for (let i = 0; i < 50; i++) await s.create(`/p/${i}`, bytes("x"));
        await s.create("/elsewhere", bytes("y"));
        const now = await s.currentRevision();
        const w = s.watch("/p/", { fromRevision: start });
        try {
          // Asked at once, while etcd still replays history for this watcher. An etcd that may answer ahead
          // of queued events (before 3.4.31 / 3.5.13) has the answer held until events reach it: one more.
          w.requestProgress();
          const provable = s.progressProvable?.() !== false;
          if (!provable) await s.create("/p/after", bytes("z"));
          const events = await nextEvents(w, provable ? 51 : 52);
          assert.deepEqual(events.slice(0, -1).map((e) => e.type), Array(provable ? 50 : 51).fill("put"));
          const last = events.at(-1)!;
          assert.equal(last.type, "progress");
          assert.ok(last.revision >= now);
        } finally {
          w.close();
        }
      } finally {
        await s.close();
      }
    });

    test("under concurrent writes, a progress event never overtakes the events it covers", async () => {
      // etcd 3.4.23 answers progress requests on a path that can overtake queued
      // events (about 50 such answers in 5 s of this load, measured); watch.ts must hold them back.
      const s = await open({ endpoints: etcd.endpoints });
      const w = s.watch("/", { fromRevision: await s.currentRevision() });
      const acked: number[] = [];
      let stop = false;
      let next = 0;
      const writers = Array.from({ length: 16 }, async () => {
        while (!stop) acked.push((await s.create(`/k${next++}`, bytes("v"))).modRevision);
      });
      const delivered = new Set<number>();
      const overtaken: string[] = [];
      let progress = 0;
      const reader = (async () => {
        for await (const e of w) {
          if (e.type !== "progress") {
            delivered.add(e.revision);
            continue;
          }
          progress++;
          for (const r of acked) if (r <= e.revision && !delivered.has(r)) overtaken.push(`${r} before progress@${e.revision}`);
        }
      })();
      try {
        const end = Date.now() + 2000;
        while (Date.now() < end) {
          w.requestProgress();
          await new Promise((r) => setTimeout(r, 5));
        }
      } finally {
        stop = true;
        await Promise.all(writers);
        w.close();
        await reader;
        await s.close();
      }
      assert.ok(progress > 5, `progress events: ${progress}`);
      assert.deepEqual(overtaken.slice(0, 5), [], `${overtaken.length} events were overtaken`);
    });

    test("concurrent reads of the latest revision (batched into Txns) each get their own key, and see every write done before them", async () => {
      const s = await open({ endpoints: etcd.endpoints });
      try {
        const written = await Promise.all(Array.from({ length: 300 }, (_, i) => s.create(`/b/${i}`, bytes(`v${i}`))));
        const newest = Math.max(...written.map((kv) => kv.modRevision));
        const reads = await Promise.all(Array.from({ length: 300 }, (_, i) => s.get(`/b/${(i * 7) % 300}`)));
        reads.forEach((r, i) => {
          assert.equal(Buffer.from(r.kv!.value).toString(), `v${(i * 7) % 300}`);
          assert.ok(r.revision >= newest, `read ${i} at ${r.revision}, before the last write ${newest}`);
        });
        const missing = await Promise.all([s.get("/b/none"), s.get("/b/none2"), s.currentRevision()]);
        assert.equal(missing[0].kv, undefined);
        assert.ok(missing[2] >= newest);
        // A write, then reads issued after it completed, while others are still in flight: all see it.
        const flood = Array.from({ length: 100 }, () => s.get("/b/1"));
        const updated = await s.update("/b/1", bytes("new"), written[1]!.modRevision);
        const after = await Promise.all(Array.from({ length: 50 }, () => s.get("/b/1")));
        await Promise.all(flood);
        for (const r of after) assert.equal(r.kv!.modRevision, updated.modRevision);
      } finally {
        await s.close();
      }
    });

    for (const client of ["frames", "h2"] as const) {
      test(`${client} client: an answer that came in time counts though the process was too busy to read it before the deadline`, async () => {
        // Reads get at most 300 ms an attempt here, and a call 400 ms in all.
        const s = await open({ endpoints: etcd.endpoints, client, dialTimeoutMs: 300, requestTimeoutMs: 400 });
        try {
          const created = await s.create("/busy", bytes("1"));
          /** Send the call, then keep the thread busy past its deadline while etcd answers. */
          const busy = async <T>(call: () => Promise<T>): Promise<T> => {
            const pending = call();
            pending.catch(() => {});
            await new Promise((r) => setImmediate(r));
            await new Promise((r) => setImmediate(r));
            const until = Date.now() + 700;
            while (Date.now() < until);
            return pending;
          };
          assert.equal(text((await busy(() => s.get("/busy"))).kv?.value), "1");
          const updated = await busy(() => s.update("/busy", bytes("2"), created.modRevision));
          assert.equal(updated.modRevision > created.modRevision, true, "the write is known applied, not 'may or may not have been'");
        } finally {
          await s.close();
        }
      });
    }

    test("values over MAX_VALUE_BYTES fail with TooLarge without contacting etcd", async () => {
      // Nothing listens on this endpoint; a call would end in StorageUnavailableError instead.
      const s = await open({ endpoints: ["http://127.0.0.1:9"], dialTimeoutMs: 200, requestTimeoutMs: 500 });
      try {
        await assert.rejects(s.create("/big", new Uint8Array(MAX_VALUE_BYTES + 1)), TooLargeError);
        await assert.rejects(s.update("/big", new Uint8Array(MAX_VALUE_BYTES + 1), 5), TooLargeError);
      } finally {
        await s.close();
      }
    });

    test("without a key prefix (as `orch apiserver` runs): revision, stats, reads and writes work", async () => {
      const s = await openEtcdStorage({ endpoints: etcd.endpoints, logger: recordingLogger() });
      try {
        const kv = await s.create(`${uniquePrefix()}/k`, new Uint8Array([1]));
        assert.ok((await s.currentRevision()) >= kv.modRevision);
        const stats = await s.stats();
        assert.ok(stats.keyCount >= 1);
        assert.ok(stats.revision >= kv.modRevision);
      } finally {
        await s.close();
      }
    });

    test("calls fail over from a dead endpoint to a live one", async () => {
      const logger = recordingLogger();
      const s = await open({ endpoints: ["http://127.0.0.1:9", ...etcd.endpoints], dialTimeoutMs: 500, logger });
      try {
        const kv = await s.create("/f", bytes("1"));
        assert.equal(new TextDecoder().decode((await s.get("/f")).kv!.value), "1");
        assert.ok(kv.modRevision > 0);
        assert.equal(s.healthy(), true);
        const w = s.watch("/", { fromRevision: kv.modRevision - 1 });
        try {
          const [e] = await nextEvents(w, 1);
          assert.equal(e!.type === "put" && e!.kv.key, "/f");
        } finally {
          w.close();
        }
      } finally {
        await s.close();
      }
    });
  });

  describe("etcd outages", () => {
    test("unreachable etcd: open resolves, calls reject with StorageUnavailableError, one line is logged", async () => {
      const logger = recordingLogger();
      const t0 = Date.now();
      const s = await open({ endpoints: ["http://127.0.0.1:9"], dialTimeoutMs: 300, requestTimeoutMs: 800, logger });
      try {
        assert.ok(Date.now() - t0 < 3000, "open does not hang");
        assert.equal(s.healthy(), false);
        const t1 = Date.now();
        await assert.rejects(s.get("/x"), StorageUnavailableError);
        await assert.rejects(s.create("/x", bytes("1")), StorageUnavailableError);
        await assert.rejects(s.checkHealth(300), StorageUnavailableError);
        assert.ok(Date.now() - t1 < 5000, `calls give up after their deadline (${Date.now() - t1} ms)`);
        const unavailable = logger.lines.filter((l) => l.includes("unavailable"));
        assert.equal(unavailable.length, 1, `one line per state change, got:\n${logger.lines.join("\n")}`);
        assert.match(unavailable[0]!, /127\.0\.0\.1:9/);
      } finally {
        await s.close();
      }
    });

    test("etcd restarts: the watch resumes without loss or duplicates, writes succeed again", async () => {
      const etcd = await startEtcd();
      const logger = recordingLogger();
      const s = await open({ endpoints: etcd.endpoints, requestTimeoutMs: 2500, dialTimeoutMs: 500, logger });
      let w: Watch | undefined;
      try {
        const first = await s.create("/r/0", bytes("0"));
        w = s.watch("/r/", { fromRevision: first.modRevision - 1 });
        const [e0] = await nextEvents(w, 1);
        assert.equal(e0!.revision, first.modRevision);

        await etcd.kill("SIGKILL");
        await assert.rejects(s.create("/r/down", bytes("x")), StorageUnavailableError);
        await waitFor(() => !s.healthy(), "healthy() turns false while etcd is down");
        await etcd.restart();

        const written: number[] = [];
        for (let i = 1; i <= 5; i++) written.push((await s.create(`/r/${i}`, bytes(String(i)))).modRevision);
        const events = await nextEvents(w, 5, 10_000);
        assert.deepEqual(events.map((e: WatchEvent) => e.revision), written);
        assert.equal(s.healthy(), true);
        assert.ok(logger.lines.some((l) => l.includes("reachable again")), logger.lines.join("\n"));
      } finally {
        w?.close();
        await s.close();
        await etcd.stop();
      }
    });

    test("a write while etcd is down, then etcd back: the store needs no reopening", async () => {
      const etcd = await startEtcd();
      const s: Storage = await open({ endpoints: etcd.endpoints, requestTimeoutMs: 5000, dialTimeoutMs: 500 });
      try {
        await s.create("/a", bytes("1"));
        await etcd.kill("SIGTERM");
        // Started while etcd is down; etcd comes back before the deadline; the write goes through.
        const pending = s.create("/b", bytes("2"));
        await new Promise((r) => setTimeout(r, 300));
        await etcd.restart();
        const kv = await pending;
        assert.equal(kv.key, "/b");
        assert.equal(await s.count("/"), 2);
      } finally {
        await s.close();
        await etcd.stop();
      }
    });
  });
}
