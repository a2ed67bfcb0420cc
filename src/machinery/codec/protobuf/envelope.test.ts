import { test } from "node:test";
import assert from "node:assert/strict";
import {
  decodeEnvelope,
  decodeMessage,
  decodeWatchEvent,
  decodeWatchStream,
  encodeEnvelope,
  encodeMessage,
  encodeWatchEvent,
  encodeWatchFrame,
  hasProtobufMagic,
  isProtobufError,
  listEnvelopeParts,
  encodeListEnvelope,
  listItemPrefix,
  PROTOBUF_MAGIC,
  readEnvelope,
  STATUS_TYPE,
  WatchFrameReader,
} from "./index.js";
import { benchPod, builtinRegistry, hex, seededRandom, toHex } from "./testing.js";

const registry = builtinRegistry();
const CORE = "io.k8s.api.core.v1";
const lookup = (apiVersion: string, kind: string) =>
  apiVersion !== "v1" ? undefined : kind === "Status" ? STATUS_TYPE : registry.get(`${CORE}.${kind}`) ? `${CORE}.${kind}` : undefined;

const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default", resourceVersion: "7" }, data: { k: "v" } };

function decodeError(fn: () => unknown, match: RegExp): void {
  assert.throws(fn, (err: unknown) => isProtobufError(err) && err.code === "ProtobufDecode" && match.test(err.message));
}

test("an enveloped body starts with the magic k8s\\0", () => {
  const body = encodeEnvelope(cm, `${CORE}.ConfigMap`, registry);
  assert.deepEqual([...body.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
  assert.deepEqual([...PROTOBUF_MAGIC], [0x6b, 0x38, 0x73, 0x00]);
  assert.ok(hasProtobufMagic(body));
  const env = readEnvelope(body);
  assert.equal(env.apiVersion, "v1");
  assert.equal(env.kind, "ConfigMap");
  assert.equal(env.contentEncoding, "");
  assert.equal(env.contentType, "");
  assert.equal(toHex(env.raw), toHex(encodeMessage(cm, `${CORE}.ConfigMap`, registry)));
  assert.deepEqual(decodeEnvelope(body, registry, lookup), cm);
});

test("input without the magic is rejected with upstream's message; empty input too", () => {
  const message = encodeMessage(cm, `${CORE}.ConfigMap`, registry);
  decodeError(() => decodeEnvelope(message, registry, lookup), /does not appear to be a protobuf message, expected prefix \[107 56 115 0\]/);
  decodeError(() => decodeEnvelope(Buffer.from(JSON.stringify(cm)), registry, lookup), /expected prefix/);
  decodeError(() => decodeEnvelope(new Uint8Array(0), registry, lookup), /empty data/);
  decodeError(() => decodeEnvelope(hex("6b387300"), registry, lookup), /empty body/);
  decodeError(() => decodeEnvelope(hex("6b3873"), registry, lookup), /expected prefix/);
});

test("garbage after the magic fails cleanly, never with a RangeError or a hang", () => {
  const random = seededRandom(42);
  const valid = encodeEnvelope(
    { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "i", ports: [{ containerPort: 1 }] }] } },
    `${CORE}.Pod`,
    registry,
  );
  let failures = 0;
  for (let i = 0; i < 3000; i++) {
    let bytes: Uint8Array;
    if (i % 3 === 0) {
      bytes = new Uint8Array(4 + Math.floor(random() * 64));
      bytes.set(PROTOBUF_MAGIC);
      for (let j = 4; j < bytes.length; j++) bytes[j] = Math.floor(random() * 256);
    } else if (i % 3 === 1) {
      bytes = valid.slice(0, 4 + Math.floor(random() * (valid.length - 4))); // truncated
    } else {
      bytes = valid.slice();
      for (let k = 0; k < 3; k++) bytes[4 + Math.floor(random() * (bytes.length - 4))] = Math.floor(random() * 256); // flipped bytes
    }
    try {
      decodeEnvelope(bytes, registry, lookup);
    } catch (err) {
      assert.ok(isProtobufError(err), `not a ProtobufError: ${String(err)}`);
      failures++;
    }
  }
  assert.ok(failures > 1000);
});

test("unknown kinds, content encodings and content types are refused", () => {
  decodeError(() => decodeEnvelope(encodeEnvelope({ ...cm, kind: "Widget" }, `${CORE}.ConfigMap`, registry), registry, lookup), /no kind "Widget" is registered for version "v1"/);
  const gzip = hex("6b387300", "0a 0c 0a 02 7631 12 06 576964676574", "12 00", "1a 04 677a6970");
  decodeError(() => decodeEnvelope(gzip, registry, lookup), /contentEncoding "gzip"/);
  const noKind = hex("6b387300", "0a 04 0a 02 7631", "12 00");
  decodeError(() => decodeEnvelope(noKind, registry, lookup), /Kind/);
});

test("an envelope may carry JSON (contentType application/json), as runtime.Unknown allows", () => {
  const json = Buffer.from('{"metadata":{"name":"j"}}');
  const body = hex("6b387300", "0a 0f 0a 02 7631 12 09 436f6e6669674d6170", `12 ${json.length.toString(16)} ${json.toString("hex")}`, "1a 00", "22 10", Buffer.from("application/json").toString("hex"));
  assert.deepEqual(decodeEnvelope(body, registry, lookup), { metadata: { name: "j" }, apiVersion: "v1", kind: "ConfigMap" });
});

test("Status errors encode and decode (meta/v1 Status with details and causes)", () => {
  const status = {
    apiVersion: "v1",
    kind: "Status",
    metadata: {},
    status: "Failure",
    message: 'pods "x" not found',
    reason: "NotFound",
    details: { name: "x", kind: "pods", causes: [{ reason: "FieldValueRequired", message: "Required value", field: "spec.containers" }] },
    code: 404,
  };
  assert.deepEqual(decodeEnvelope(encodeEnvelope(status, STATUS_TYPE, registry), registry, lookup), status);
});

test("lists: metadata (1) then items (2), items without apiVersion and kind", () => {
  const list = {
    apiVersion: "v1",
    kind: "ConfigMapList",
    metadata: { resourceVersion: "9", continue: "tok", remainingItemCount: 0 },
    items: [
      { metadata: { name: "a" }, data: { x: "" } },
      { metadata: { name: "b" }, binaryData: { bin: "AAEC" } },
    ],
  };
  const raw = readEnvelope(encodeEnvelope(list, `${CORE}.ConfigMapList`, registry)).raw;
  assert.equal(
    toHex(raw),
    toHex(
      hex(
        "0a 0a 12 01 39 1a 03 746f6b 20 00", // ListMeta: resourceVersion (2), continue (3), remainingItemCount (4) 0, a *int64
        "12 0c 0a 03 0a 01 61 12 05 0a 01 78 12 00", // item (2): metadata name "a", data (2) "x" → ""
        "12 11 0a 03 0a 01 62 1a 0a 0a 03 62696e 12 03 000102", // item: name "b", binaryData (3) "bin" → 00 01 02
      ),
    ),
  );
  assert.deepEqual(decodeEnvelope(encodeEnvelope(list, `${CORE}.ConfigMapList`, registry), registry, lookup), list);
});

test("watch events: WatchEvent{type, object{raw}} with the enveloped object in raw, framed by a 4-byte big-endian length", () => {
  const event = { type: "ADDED", object: cm };
  const message = encodeWatchEvent(event, `${CORE}.ConfigMap`, registry);
  const enveloped = encodeEnvelope(cm, `${CORE}.ConfigMap`, registry);
  const rawExt = Buffer.concat([hex("0a"), varintBytes(enveloped.length), enveloped]);
  const expected = Buffer.concat([hex("0a 05 4144444544"), hex("12"), varintBytes(rawExt.length), rawExt]);
  assert.equal(toHex(message), toHex(expected));
  const frame = encodeWatchFrame(event, `${CORE}.ConfigMap`, registry);
  assert.equal(toHex(frame), toHex(Buffer.concat([Uint8Array.of(0, 0, expected.length >> 8, expected.length & 0xff), expected])));
  assert.deepEqual(decodeWatchEvent(message, registry, lookup), event);
});

function varintBytes(n: number): Uint8Array {
  const out: number[] = [];
  while (n > 127) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Uint8Array.from(out);
}

test("the frame reader reassembles frames split anywhere, and several in one chunk", () => {
  const events = [
    { type: "ADDED", object: cm },
    { type: "MODIFIED", object: { ...cm, data: { k: "x".repeat(300) } } },
    { type: "ERROR", object: { apiVersion: "v1", kind: "Status", status: "Failure", reason: "Expired", code: 410, message: "too old resource version" } },
    { type: "DELETED", object: cm },
  ];
  const stream = Buffer.concat(events.map((e) => encodeWatchFrame(e, e.object.kind === "Status" ? STATUS_TYPE : `${CORE}.ConfigMap`, registry)));
  for (const chunkSize of [1, 2, 3, 7, 64, stream.length]) {
    const reader = new WatchFrameReader();
    const got: unknown[] = [];
    for (let i = 0; i < stream.length; i += chunkSize) for (const frame of reader.push(stream.subarray(i, i + chunkSize))) got.push(decodeWatchEvent(frame, registry, lookup));
    reader.end();
    assert.deepEqual(got, events, `chunks of ${chunkSize}`);
  }
});

test("the frame reader refuses oversized frames and a stream that ends mid-frame", () => {
  const reader = new WatchFrameReader({ maxFrameBytes: 10 });
  assert.throws(() => reader.push(hex("00 00 00 0b")), (err: unknown) => isProtobufError(err) && /exceeds the limit/.test(err.message));
  const partial = new WatchFrameReader();
  assert.deepEqual(partial.push(hex("00 00 00 05 0a 01")), []);
  assert.equal(partial.buffered, 6);
  assert.throws(() => partial.end(), (err: unknown) => isProtobufError(err) && /ended inside a frame/.test(err.message));
});

test("decodeWatchStream yields events from an async byte stream", async () => {
  const frames = [encodeWatchFrame({ type: "ADDED", object: cm }, `${CORE}.ConfigMap`, registry), encodeWatchFrame({ type: "BOOKMARK", object: { ...cm, data: undefined } }, `${CORE}.ConfigMap`, registry)];
  const all = Buffer.concat(frames);
  async function* source() {
    yield all.subarray(0, 5);
    yield all.subarray(5, 40);
    yield all.subarray(40);
  }
  const got = [];
  for await (const e of decodeWatchStream(source(), registry, lookup)) got.push(e);
  assert.deepEqual(got.map((e) => e.type), ["ADDED", "BOOKMARK"]);
  assert.deepEqual(got[1]!.object, { apiVersion: "v1", kind: "ConfigMap", metadata: cm.metadata });
});

test("encode errors name the field: wrong JSON types are refused, not written", () => {
  const bad: Array<[object, RegExp]> = [
    [{ spec: { containers: [{ name: 1 }] } }, /spec\.containers\[0\]\.name: expected a string, got number/],
    [{ spec: { priority: 2 ** 31 } }, /spec\.priority: expected a 32-bit integer, got 2147483648/],
    [{ spec: { containers: "no" } }, /spec\.containers: expected an array/],
    [{ metadata: { labels: { a: 1 } } }, /metadata\.labels\["a"\]: expected a string/],
    [{ metadata: { creationTimestamp: "yesterday" } }, /metadata\.creationTimestamp: "yesterday" is not an RFC 3339 time/],
    [{ spec: { containers: [{ name: "c", livenessProbe: { httpGet: { port: 1.5 } } }] } }, /livenessProbe\.httpGet\.port: expected an integer or a string, got 1\.5/],
  ];
  for (const [obj, match] of bad) {
    assert.throws(
      () => encodeMessage(obj, `${CORE}.Pod`, registry),
      (err: unknown) => isProtobufError(err) && err.code === "ProtobufEncode" && match.test(err.message),
      String(match),
    );
  }
  // The shared writer recovers after an error.
  assert.deepEqual(decodeMessage(encodeMessage({ metadata: { name: "ok" } }, `${CORE}.Pod`, registry), `${CORE}.Pod`, registry), { metadata: { name: "ok" } });
});

test("decode errors name the field", () => {
  // Pod.metadata (1) holding name (1) as a varint instead of a string.
  decodeError(() => decodeMessage(hex("0a 02 08 01"), `${CORE}.Pod`, registry), /metadata\.name: wrong wire type 0/);
  // Pod.spec length runs past the end.
  decodeError(() => decodeMessage(hex("12 05 0a"), `${CORE}.Pod`, registry), /length 5 runs past the end/);
});

test("a list written in parts (head, item prefixes, items, tail) is the same bytes as the whole list", () => {
  const registry = builtinRegistry();
  const POD = "io.k8s.api.core.v1.Pod";
  for (const count of [0, 1, 3, 200]) {
    const list = { apiVersion: "v1", kind: "PodList", metadata: { resourceVersion: "42", continue: count > 1 ? "abc" : "" }, items: Array.from({ length: count }, (_, i) => benchPod(i)) };
    const items = list.items.map((p) => encodeMessage(p, POD, registry));
    const parts = listEnvelopeParts(list, `${POD}List`, items.map((b) => b.length), registry);
    const streamed = Buffer.concat([parts.head, ...items.flatMap((b) => [listItemPrefix(b.length), b]), parts.tail]);
    assert.equal(toHex(streamed), toHex(encodeEnvelope(list, `${POD}List`, registry)), `${count} items`);
    assert.equal(toHex(encodeListEnvelope(list, `${POD}List`, POD, registry)), toHex(streamed));
  }
  const bare = { apiVersion: "v1", kind: "PodList", items: [benchPod(1)] };
  assert.equal(toHex(encodeListEnvelope(bare, `${POD}List`, POD, registry)), toHex(encodeEnvelope(bare, `${POD}List`, registry)), "no list metadata");
});
