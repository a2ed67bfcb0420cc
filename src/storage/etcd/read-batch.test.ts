// The read batcher with fake calls: who goes alone, who waits and rides
// together, that no read joins a call sent before it was asked, and errors.

import { test } from "node:test";
import assert from "node:assert/strict";
import { ReadBatcher } from "./read-batch.js";
import type { RangeRequest, RangeResponse, TxnRequest, TxnResponse } from "./rpc.js";

const header = (revision: number) => ({ revision, member_id: 1, raft_term: 1 });
const answer = (key: Uint8Array, revision: number): RangeResponse => ({
  header: header(revision),
  kvs: [{ key: Buffer.from(key), value: Buffer.from(`v:${Buffer.from(key)}`), create_revision: 1, mod_revision: 1, version: 1 }],
  more: false,
  count: 1,
});

/** Calls that stay pending until released, recording what each carried. */
function fakeEtcd() {
  const calls: { kind: "range" | "txn"; keys: string[]; release: (fail?: Error) => void }[] = [];
  let revision = 10;
  const range = (request: RangeRequest) =>
    new Promise<RangeResponse>((resolve, reject) => {
      calls.push({ kind: "range", keys: [Buffer.from(request.key).toString()], release: (fail) => (fail ? reject(fail) : resolve(answer(request.key, ++revision))) });
    });
  const txn = (request: TxnRequest) =>
    new Promise<TxnResponse>((resolve, reject) => {
      const ops = request.success.map((op) => ("request_range" in op ? op.request_range : assert.fail("only ranges")));
      assert.equal(request.compare.length, 0);
      calls.push({
        kind: "txn",
        keys: ops.map((r) => Buffer.from(r.key).toString()),
        release: (fail) => {
          if (fail) return reject(fail);
          const rev = ++revision;
          // Nested headers left empty: the batcher must take the outer one.
          resolve({ header: header(rev), succeeded: true, responses: ops.map((r) => ({ response_range: { ...answer(r.key, rev), header: header(0) } })) });
        },
      });
    });
  return { calls, range, txn };
}

const settle = () => new Promise((r) => setImmediate(r));
const key = (s: string) => Buffer.from(s);

test("reads go alone while calls are free; those arriving meanwhile wait and go as one Txn, each with its own answer and the Txn's revision", async () => {
  const etcd = fakeEtcd();
  const b = new ReadBatcher({ range: etcd.range, txn: etcd.txn, maxInFlight: 1 });
  const first = b.range({ key: key("a") });
  const rest = ["b", "c", "d"].map((k) => b.range({ key: key(k) }));
  await settle();
  assert.deepEqual(etcd.calls.map((c) => [c.kind, c.keys]), [["range", ["a"]]], "only the first read is sent while it is in flight");
  etcd.calls[0]!.release();
  assert.equal((await first).kvs[0]!.value.toString(), "v:a");
  await settle();
  assert.deepEqual(etcd.calls.map((c) => [c.kind, c.keys]), [["range", ["a"]], ["txn", ["b", "c", "d"]]]);
  // A read asked after the Txn was sent must not ride on it: it waits for the next call.
  const late = b.range({ key: key("e") });
  await settle();
  assert.equal(etcd.calls.length, 2);
  etcd.calls[1]!.release();
  const answers = await Promise.all(rest);
  assert.deepEqual(answers.map((a) => a.kvs[0]!.value.toString()), ["v:b", "v:c", "v:d"]);
  assert.deepEqual(answers.map((a) => a.header.revision), [12, 12, 12], "the outer header's revision");
  await settle();
  assert.deepEqual(etcd.calls[2]!.keys, ["e"]);
  etcd.calls[2]!.release();
  assert.equal((await late).header.revision, 13);
});

test("a Txn holds at most maxOps reads; a failed call fails every read it carried, and the next ones still go", async () => {
  const etcd = fakeEtcd();
  const b = new ReadBatcher({ range: etcd.range, txn: etcd.txn, maxInFlight: 1, maxOps: 2 });
  const reads = ["a", "b", "c", "d", "e"].map((k) => b.range({ key: key(k) }).then((r) => r.kvs[0]!.value.toString(), (e: Error) => `error: ${e.message}`));
  await settle();
  etcd.calls[0]!.release();
  await settle();
  assert.deepEqual(etcd.calls[1]!.keys, ["b", "c"]);
  etcd.calls[1]!.release(new Error("etcd unavailable"));
  await settle();
  assert.deepEqual(etcd.calls[2]!.keys, ["d", "e"]);
  etcd.calls[2]!.release();
  assert.deepEqual(await Promise.all(reads), ["v:a", "error: etcd unavailable", "error: etcd unavailable", "v:d", "v:e"]);
});

test("with two calls in flight, the third read waits", async () => {
  const etcd = fakeEtcd();
  const b = new ReadBatcher({ range: etcd.range, txn: etcd.txn, maxInFlight: 2 });
  const reads = ["a", "b", "c"].map((k) => b.range({ key: key(k) }));
  await settle();
  assert.deepEqual(etcd.calls.map((c) => c.keys), [["a"], ["b"]]);
  etcd.calls[1]!.release();
  await settle();
  assert.deepEqual(etcd.calls.map((c) => c.keys), [["a"], ["b"], ["c"]]);
  etcd.calls[0]!.release();
  etcd.calls[2]!.release();
  await Promise.all(reads);
});

test("identical counts in one batch are asked once and each asker gets the answer", async () => {
  const etcd = fakeEtcd();
  const b = new ReadBatcher({ range: etcd.range, txn: etcd.txn, maxInFlight: 1 });
  const first = b.range({ key: key("x") });
  const probes = [b.range({ key: key("p"), count_only: true }), b.range({ key: key("q") }), b.range({ key: key("p"), count_only: true }), b.range({ key: key("p"), range_end: key("r"), count_only: true })];
  await settle();
  etcd.calls[0]!.release();
  await first;
  await settle();
  assert.deepEqual(etcd.calls[1]!.keys, ["p", "q", "p"], "the second count of p alone is not sent; the one with a range end is another read");
  etcd.calls[1]!.release();
  const answers = await Promise.all(probes);
  assert.deepEqual(answers.map((a) => a.kvs[0]!.value.toString()), ["v:p", "v:q", "v:p", "v:p"]);
  assert.deepEqual(answers.map((a) => a.header.revision), [12, 12, 12, 12]);
});

test("identical keys-only reads in one batch are asked once; a keys-only read and a count of one key are two reads", async () => {
  const etcd = fakeEtcd();
  const b = new ReadBatcher({ range: etcd.range, txn: etcd.txn, maxInFlight: 1 });
  const first = b.range({ key: key("x") });
  const reads = [b.range({ key: key("p"), keys_only: true }), b.range({ key: key("p"), keys_only: true }), b.range({ key: key("p"), count_only: true }), b.range({ key: key("p") })];
  await settle();
  etcd.calls[0]!.release();
  await first;
  await settle();
  assert.deepEqual(etcd.calls[1]!.keys, ["p", "p", "p"], "the second keys-only read of p is not sent");
  etcd.calls[1]!.release();
  const answers = await Promise.all(reads);
  assert.deepEqual(answers.map((a) => a.header.revision), [12, 12, 12, 12]);
});
