// The hand-written codec against protobufjs reading the same rpc.proto: what
// wire.ts encodes, protobufjs decodes to the same request; what protobufjs
// encodes as etcd's answer, wire.ts decodes to the same object.

import { test } from "node:test";
import assert from "node:assert/strict";
import { loadSync, type MethodDefinition } from "@grpc/proto-loader";
import { etcdMethods, protoPath } from "./rpc.js";
import { wire, wireCodec, WireError } from "./wire.js";

type Def = MethodDefinition<object, object>;
const defs = loadSync(protoPath(), { keepCase: true, longs: Number, enums: String, bytes: Buffer, defaults: true, oneofs: true });
const def = (service: string, name: string) => (defs[`etcdserverpb.${service}`] as unknown as Record<string, Def>)[name]!;

/** protobufjs's reading of a frame wire.ts wrote (the prefix checked and stripped). */
function readRequest(service: string, name: string, frame: Buffer): Record<string, unknown> {
  assert.equal(frame[0], 0, "uncompressed flag");
  assert.equal(frame.readUInt32BE(1), frame.length - 5, "frame length prefix");
  return def(service, name).requestDeserialize(frame.subarray(5)) as Record<string, unknown>;
}

const big = 2 ** 45 + 7;
const bytes = (n: number, fill = 0x61) => Buffer.alloc(n, fill);

test("requests: Range, Txn (every compare target, every op, long values), Compact and Watch read back as written", () => {
  const range = readRequest("KV", "Range", wire.range.encode({ key: bytes(3), range_end: bytes(4, 0x62), limit: 500, revision: big, count_only: true, keys_only: true }));
  assert.deepEqual([range.key, range.range_end, range.limit, range.revision, range.count_only, range.keys_only], [bytes(3), bytes(4, 0x62), 500, big, true, true]);

  for (const size of [0, 1, 127, 128, 300, 16_384, 70_000]) {
    const value = bytes(size, 0x7a);
    const txn = readRequest(
      "KV",
      "Txn",
      wire.txn.encode({
        compare: [
          { key: bytes(5), target: "CREATE", result: "EQUAL", create_revision: 0 },
          { key: bytes(5), target: "MOD", result: "NOT_EQUAL", mod_revision: big },
          { key: bytes(5), target: "VERSION", result: "GREATER", version: 0 },
        ],
        success: [{ request_put: { key: bytes(5), value, prev_kv: true } }, { request_delete_range: { key: bytes(5), range_end: bytes(6), prev_kv: true } }],
        failure: [{ request_range: { key: bytes(5) } }],
      }),
    ) as { compare: Record<string, unknown>[]; success: Record<string, Record<string, unknown>>[]; failure: Record<string, Record<string, unknown>>[] };
    assert.deepEqual(
      txn.compare.map((c) => [c.result, c.target, c.target_union, c[c.target_union as string]]),
      [["EQUAL", "CREATE", "create_revision", 0], ["NOT_EQUAL", "MOD", "mod_revision", big], ["GREATER", "VERSION", "version", 0]],
      `compares with a ${size}-byte value`,
    );
    assert.equal(txn.success[0]!.request_put!.value!.toString(), value.toString(), `put of ${size} bytes`);
    assert.equal(txn.success[0]!.request_put!.prev_kv, true);
    assert.deepEqual(txn.success[1]!.request_delete_range!.range_end, bytes(6));
    assert.deepEqual(txn.failure[0]!.request_range!.key, bytes(5));
  }

  const compact = readRequest("KV", "Compact", wire.compact.encode({ revision: big, physical: true }));
  assert.deepEqual([compact.revision, compact.physical], [big, true]);

  const create = readRequest("Watch", "Watch", wire.watch.encode({ create_request: { key: bytes(2), range_end: bytes(3), start_revision: 42, progress_notify: true, prev_kv: true } }));
  assert.equal(create.request_union, "create_request");
  const c = create.create_request as Record<string, unknown>;
  assert.deepEqual([c.key, c.range_end, c.start_revision, c.progress_notify, c.prev_kv], [bytes(2), bytes(3), 42, true, true]);
  assert.equal(readRequest("Watch", "Watch", wire.watch.encode({ progress_request: {} })).request_union, "progress_request");
  const cancel = readRequest("Watch", "Watch", wire.watch.encode({ cancel_request: { watch_id: 7 } }));
  assert.equal((cancel.cancel_request as { watch_id: number }).watch_id, 7);
});

/** What wire.ts decodes from protobufjs's encoding of `answer`, beside protobufjs's own decoding. */
function both(service: string, name: string, answer: object, decode: (b: Buffer) => unknown): [unknown, Record<string, unknown>] {
  const d = def(service, name);
  const encoded = d.responseSerialize(answer);
  return [decode(encoded), d.responseDeserialize(encoded) as Record<string, unknown>];
}

const header = { cluster_id: 2 ** 60, member_id: 2 ** 63 + 2 ** 40, revision: big, raft_term: 9 };
const kv = (n: number) => ({ key: bytes(4, 0x30 + n), create_revision: n, mod_revision: big + n, version: 3, value: bytes(1200 + n), lease: 0 });

test("answers: Range, Txn, Status and Watch (events, progress with watch id -1, cancel) decode as protobufjs decodes them", () => {
  const [range, rangeRef] = both("KV", "Range", { header, kvs: [kv(1), kv(2)], more: true, count: 1234 }, wire.range.decode);
  const r = range as { header: { revision: number; member_id: number }; kvs: unknown[]; more: boolean; count: number };
  assert.equal(r.header.revision, big);
  assert.equal(r.header.member_id, (rangeRef.header as { member_id: number }).member_id, "uint64 above 2^63 read as unsigned");
  assert.deepEqual(r.kvs, rangeRef.kvs);
  assert.deepEqual([r.more, r.count], [true, 1234]);

  const [txn, txnRef] = both(
    "KV",
    "Txn",
    {
      header,
      succeeded: true,
      responses: [{ response_put: { header, prev_kv: kv(3) } }, { response_delete_range: { header, deleted: 1, prev_kvs: [kv(4)] } }, { response_range: { header, kvs: [kv(5)], more: false, count: 1 } }],
    },
    wire.txn.decode,
  );
  const t = txn as { succeeded: boolean; responses: Record<string, { prev_kv?: unknown; prev_kvs?: unknown; kvs?: unknown; deleted?: number } | null>[] };
  const tRef = txnRef as typeof t;
  assert.equal(t.succeeded, true);
  assert.deepEqual(t.responses[0]!.response_put!.prev_kv, tRef.responses[0]!.response_put!.prev_kv);
  assert.equal(t.responses[0]!.response_range, null);
  assert.deepEqual(t.responses[1]!.response_delete_range!.prev_kvs, tRef.responses[1]!.response_delete_range!.prev_kvs);
  assert.equal(t.responses[1]!.response_delete_range!.deleted, 1);
  assert.deepEqual(t.responses[2]!.response_range!.kvs, tRef.responses[2]!.response_range!.kvs);

  const [status] = both("Maintenance", "Status", { header, version: "3.4.23", dbSize: 2 ** 33, leader: 2 ** 62, raftIndex: 5 }, wire.status.decode);
  const s = status as { version: string; dbSize: number; leader: number };
  assert.deepEqual([s.version, s.dbSize, s.leader], ["3.4.23", 2 ** 33, 2 ** 62]);

  const [events, eventsRef] = both(
    "Watch",
    "Watch",
    { header, watch_id: 0, events: [{ type: "PUT", kv: kv(6), prev_kv: kv(5) }, { type: "DELETE", kv: { key: bytes(4), mod_revision: big + 9 } }] },
    wire.watch.decode,
  );
  const e = events as { events: { type: string; kv: unknown; prev_kv: unknown }[]; created: boolean; canceled: boolean };
  const eRef = eventsRef as typeof e;
  assert.deepEqual(e.events.map((x) => x.type), ["PUT", "DELETE"]);
  assert.deepEqual(e.events[0]!.kv, eRef.events[0]!.kv);
  assert.deepEqual(e.events[0]!.prev_kv, eRef.events[0]!.prev_kv);
  assert.equal(e.events[1]!.prev_kv, null);
  assert.deepEqual([e.created, e.canceled], [false, false]);

  const [progress] = both("Watch", "Watch", { header, watch_id: -1 }, wire.watch.decode);
  assert.equal((progress as { watch_id: number }).watch_id, -1, "int64 -1 (ten-byte varint) read as signed");

  const [cancelled] = both("Watch", "Watch", { header, watch_id: 3, canceled: true, compact_revision: 77, cancel_reason: "mvcc: required revision has been compacted" }, wire.watch.decode);
  const x = cancelled as { canceled: boolean; compact_revision: number; cancel_reason: string };
  assert.deepEqual([x.canceled, x.compact_revision, x.cancel_reason], [true, 77, "mvcc: required revision has been compacted"]);
});

test("a truncated or malformed answer is an error, not a wrong value", () => {
  const encoded = def("KV", "Range").responseSerialize({ header, kvs: [kv(1)], more: false, count: 1 });
  for (const cut of [1, 10, encoded.length - 1]) {
    assert.throws(() => wire.range.decode(encoded.subarray(0, cut)), WireError, `cut at ${cut} of ${encoded.length}`);
  }
  // Wire type 3 (a group) appears in no etcd message.
  assert.throws(() => wire.range.decode(Buffer.from([(9 << 3) | 3])), WireError);
});

test("the node:http2 transport finds each hot-path codec under its method's gRPC path, and none for the others", () => {
  const methods = etcdMethods();
  for (const name of ["range", "put", "deleteRange", "txn", "compact", "status", "watch"] as const) {
    assert.equal(wireCodec(methods[name].path), wire[name], name);
  }
  for (const name of ["snapshot", "memberAdd", "memberList", "memberRemove"] as const) assert.equal(wireCodec(methods[name].path), undefined, name);
});
