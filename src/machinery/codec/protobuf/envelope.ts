// The Protobuf body as upstream clients read and write it (seed 000, "Protobuf
// envelope"): magic `k8s\0`, then runtime.Unknown { typeMeta, raw, contentEncoding,
// contentType }. Watch streams (application/vnd.kubernetes.protobuf;stream=watch)
// carry WatchEvent messages without envelope, each behind a 4-byte big-endian
// length, whose object.raw holds the enveloped object (upstream's RawSerializer
// and LengthDelimitedFramer).

import { PROTOBUF_MEDIA_TYPES } from "../../naming.js";
import type { SchemaRegistry } from "../../schema.js";
import { codecFor, type JsonObject } from "./message.js";
import { ProtobufError, Reader, type Writer } from "./wire.js";

/** The four bytes every enveloped body starts with: `k8s` and encoding style 0. */
export const PROTOBUF_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/** Schema name of meta/v1 Status, the body of errors and of watch ERROR events. */
export const STATUS_TYPE = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";

/** Maps an envelope's apiVersion and kind to a schema type name; undefined when not served. */
export type TypeLookup = (apiVersion: string, kind: string) => string | undefined;

/** The fields of runtime.Unknown, with raw as a view into the input. */
export interface Envelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

function fail(detail: string): never {
  throw new ProtobufError("ProtobufDecode", detail);
}

export function hasProtobufMagic(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x6b && bytes[1] === 0x38 && bytes[2] === 0x73 && bytes[3] === 0x00;
}

function typeMetaOf(obj: object): { apiVersion: string; kind: string } {
  const { apiVersion, kind } = obj as { apiVersion?: unknown; kind?: unknown };
  if (typeof apiVersion !== "string" || apiVersion === "") throw new ProtobufError("ProtobufEncode", "object has no apiVersion");
  if (typeof kind !== "string" || kind === "") throw new ProtobufError("ProtobufEncode", "object has no kind");
  return { apiVersion, kind };
}

/** Magic and typeMeta: what every envelope starts with. */
function writeEnvelopeHead(w: Writer, apiVersion: string, kind: string): void {
  w.raw(PROTOBUF_MAGIC);
  w.uint32(0x0a); // typeMeta
  const meta = w.fork();
  w.uint32(0x0a); // apiVersion
  w.string(apiVersion);
  w.uint32(0x12); // kind
  w.string(kind);
  w.join(meta);
}

/** contentEncoding and contentType: empty, and written anyway, as Go does. */
const ENVELOPE_TAIL: Readonly<Uint8Array> = Uint8Array.of(0x1a, 0x00, 0x22, 0x00);

/** Writes magic and envelope around the message `writeBody` writes, byte for byte as upstream's NestedMarshalTo. */
function writeEnvelope(w: Writer, apiVersion: string, kind: string, writeBody: (w: Writer) => void): void {
  writeEnvelopeHead(w, apiVersion, kind);
  w.uint32(0x12); // raw
  const raw = w.fork();
  writeBody(w);
  w.join(raw);
  w.raw(ENVELOPE_TAIL);
}

function varintSize(n: number): number {
  let size = 1;
  while (n > 127) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/**
 * A list body in parts, for writing item by item (seed 000, "Media types" 5):
 * `head` (magic, typeMeta, the raw field's length and the list metadata),
 * then for each item `itemPrefix(bytes.length)` and the item's message bytes,
 * then `tail`. The bytes are the same as encodeEnvelope of the whole list.
 */
export function listEnvelopeParts(
  list: { apiVersion: string; kind: string; metadata?: object },
  listTypeName: string,
  itemLengths: readonly number[],
  registry: SchemaRegistry,
): { head: Uint8Array; tail: Uint8Array } {
  const codec = codecFor(registry);
  const withoutItems = codec.encode(list.metadata === undefined ? {} : { metadata: list.metadata }, listTypeName);
  let bodyLength = withoutItems.length;
  for (const n of itemLengths) bodyLength += 1 + varintSize(n) + n;
  const head = codec.write((w) => {
    writeEnvelopeHead(w, list.apiVersion, list.kind);
    w.uint32(0x12);
    w.uint32(bodyLength);
    w.raw(withoutItems);
  });
  return { head, tail: ENVELOPE_TAIL };
}

/**
 * A whole list body, each item encoded on its own and the parts joined once:
 * the same bytes as encodeEnvelope, without growing one buffer to the list's
 * size and moving it when the raw field's length is known.
 */
export function encodeListEnvelope(list: { apiVersion: string; kind: string; metadata?: object; items: readonly object[] }, listTypeName: string, itemTypeName: string, registry: SchemaRegistry): Buffer {
  const codec = codecFor(registry);
  const items = list.items.map((item) => codec.encode(item, itemTypeName));
  const parts = listEnvelopeParts(list, listTypeName, items.map((b) => b.length), registry);
  const chunks: Uint8Array[] = [parts.head];
  for (const item of items) chunks.push(listItemPrefix(item.length), item);
  chunks.push(parts.tail);
  return Buffer.concat(chunks);
}

/** The key and length before one item of a list (items are field 2 of every list message). */
export function listItemPrefix(length: number): Uint8Array {
  const out = new Uint8Array(1 + varintSize(length));
  out[0] = 0x12;
  let i = 1;
  let v = length;
  while (v > 127) {
    out[i++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  out[i] = v;
  return out;
}

/**
 * The Protobuf body for `obj` (which carries apiVersion and kind) as schema type
 * `typeName`: magic, then Unknown with the encoded object in raw.
 */
export function encodeEnvelope(obj: object, typeName: string, registry: SchemaRegistry): Uint8Array {
  const { apiVersion, kind } = typeMetaOf(obj);
  const codec = codecFor(registry);
  return codec.write((w) => writeEnvelope(w, apiVersion, kind, (w) => codec.encodeTo(w, obj, typeName)));
}

/** Splits an enveloped body into its parts; rejects a body without the magic, as upstream clients must. */
export function readEnvelope(bytes: Uint8Array): Envelope {
  if (bytes.length === 0) fail("empty data");
  if (!hasProtobufMagic(bytes)) fail("provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]");
  if (bytes.length === 4) fail("empty body");
  const r = new Reader(bytes, 4);
  const env: Envelope = { apiVersion: "", kind: "", raw: bytes.subarray(0, 0), contentEncoding: "", contentType: "" };
  while (r.pos < r.end) {
    const key = r.uint32();
    switch (key) {
      case 0x0a: {
        const outer = r.end;
        r.end = r.len();
        while (r.pos < r.end) {
          const k = r.uint32();
          if (k === 0x0a) env.apiVersion = r.string();
          else if (k === 0x12) env.kind = r.string();
          else if (k >>> 3 <= 2) fail(`wrong wire type ${k & 7} in typeMeta`);
          else r.skip(k & 7);
        }
        r.end = outer;
        break;
      }
      case 0x12: {
        const stop = r.len();
        env.raw = bytes.subarray(r.pos, stop);
        r.pos = stop;
        break;
      }
      case 0x1a:
        env.contentEncoding = r.string();
        break;
      case 0x22:
        env.contentType = r.string();
        break;
      default:
        if (key >>> 3 === 0) fail("illegal field number 0");
        if (key >>> 3 <= 4) fail(`wrong wire type ${key & 7} for field ${key >>> 3} of the envelope`);
        r.skip(key & 7);
    }
  }
  return env;
}

/** Protobuf media types in both spellings: a raw in either is decoded like an empty contentType. */
function isProtobufContentType(contentType: string): boolean {
  return contentType === "" || PROTOBUF_MEDIA_TYPES.includes(contentType);
}

/**
 * The JSON object of an enveloped body, with apiVersion and kind first. `lookupType`
 * names the schema type for the envelope's apiVersion and kind.
 */
export function decodeEnvelope(bytes: Uint8Array, registry: SchemaRegistry, lookupType: TypeLookup): JsonObject {
  const env = readEnvelope(bytes);
  if (env.kind === "") fail("Object 'Kind' is missing in the envelope");
  if (env.apiVersion === "") fail("Object 'apiVersion' is missing in the envelope");
  if (env.contentEncoding !== "") fail(`unsupported contentEncoding ${JSON.stringify(env.contentEncoding)}`);
  if (env.contentType === "application/json") {
    // Upstream's Unknown may carry JSON; take it as it is, with the envelope's type.
    let obj: unknown;
    try {
      obj = JSON.parse(Buffer.from(env.raw.buffer, env.raw.byteOffset, env.raw.length).toString("utf8"));
    } catch (err) {
      throw new ProtobufError("ProtobufDecode", `raw is not JSON: ${(err as Error).message}`, { cause: err });
    }
    if (typeof obj !== "object" || obj === null || Array.isArray(obj)) fail("raw JSON is not an object");
    return { ...(obj as JsonObject), apiVersion: env.apiVersion, kind: env.kind };
  }
  if (!isProtobufContentType(env.contentType)) fail(`unsupported contentType ${JSON.stringify(env.contentType)}`);
  const typeName = lookupType(env.apiVersion, env.kind);
  if (typeName === undefined) fail(`no kind "${env.kind}" is registered for version "${env.apiVersion}"`);
  const raw = env.raw;
  return codecFor(registry).decodeRange(raw, 0, raw.length, typeName, { apiVersion: env.apiVersion, kind: env.kind });
}

// ---------------------------------------------------------------- watch

/** One watch event: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR (whose object is a Status). */
export interface WatchEventObject {
  type: string;
  object: object;
}

/**
 * WatchEvent { string type = 1; RawExtension object = 2 }, not enveloped itself;
 * object.raw is the enveloped object. `typeName` is the object's schema type.
 */
export function encodeWatchEvent(event: WatchEventObject, typeName: string, registry: SchemaRegistry): Uint8Array {
  return codecFor(registry).write((w) => writeWatchEvent(w, event, typeName, registry));
}

function writeWatchEvent(w: Writer, event: WatchEventObject, typeName: string, registry: SchemaRegistry): void {
  const { apiVersion, kind } = typeMetaOf(event.object);
  const codec = codecFor(registry);
  w.uint32(0x0a);
  w.string(event.type);
  w.uint32(0x12); // object: RawExtension
  const ext = w.fork();
  w.uint32(0x0a); // raw
  const raw = w.fork();
  writeEnvelope(w, apiVersion, kind, (w) => codec.encodeTo(w, event.object, typeName));
  w.join(raw);
  w.join(ext);
}

/** One frame of a Protobuf watch stream: the 4-byte big-endian length, then the WatchEvent. */
export function encodeWatchFrame(event: WatchEventObject, typeName: string, registry: SchemaRegistry): Uint8Array {
  return codecFor(registry).write((w) => {
    w.ensure(4);
    const start = w.pos;
    w.pos += 4;
    writeWatchEvent(w, event, typeName, registry);
    w.buf.writeUInt32BE(w.pos - start - 4, start);
  });
}

/** The type and object of a WatchEvent message (a frame's payload, without the length). */
export function decodeWatchEvent(bytes: Uint8Array, registry: SchemaRegistry, lookupType: TypeLookup): { type: string; object: JsonObject } {
  const r = new Reader(bytes);
  let type = "";
  let raw: Uint8Array | undefined;
  while (r.pos < r.end) {
    const key = r.uint32();
    if (key === 0x0a) type = r.string();
    else if (key === 0x12) {
      const outer = r.end;
      r.end = r.len();
      while (r.pos < r.end) {
        const k = r.uint32();
        if (k === 0x0a) {
          const stop = r.len();
          raw = bytes.subarray(r.pos, stop);
          r.pos = stop;
        } else if (k >>> 3 === 1) fail(`wrong wire type ${k & 7} for the watch event's raw object`);
        else r.skip(k & 7);
      }
      r.end = outer;
    } else if (key >>> 3 === 0) fail("illegal field number 0");
    else if (key >>> 3 <= 2) fail(`wrong wire type ${key & 7} for field ${key >>> 3} of the watch event`);
    else r.skip(key & 7);
  }
  if (type === "") fail("watch event without a type");
  if (raw === undefined) fail("watch event without an object");
  return { type, object: decodeEnvelope(raw, registry, lookupType) };
}

/**
 * Cuts a byte stream into watch frames: feed chunks as they arrive, get the
 * complete frames' payloads back. A frame longer than `maxFrameBytes` is an error
 * rather than an unbounded buffer.
 */
export class WatchFrameReader {
  readonly #max: number;
  #chunks: Uint8Array[] = [];
  #buffered = 0;

  constructor(options: { maxFrameBytes?: number } = {}) {
    this.#max = options.maxFrameBytes ?? 256 << 20;
  }

  /** Bytes held that do not yet make a whole frame. */
  get buffered(): number {
    return this.#buffered;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    if (chunk.length > 0) {
      this.#chunks.push(chunk);
      this.#buffered += chunk.length;
    }
    const frames: Uint8Array[] = [];
    while (this.#buffered >= 4) {
      const header = this.#peek(4);
      const len = ((header[0]! << 24) | (header[1]! << 16) | (header[2]! << 8) | header[3]!) >>> 0;
      if (len > this.#max) throw new ProtobufError("ProtobufDecode", `watch frame of ${len} bytes exceeds the limit of ${this.#max}`);
      if (this.#buffered < 4 + len) break;
      this.#take(4);
      frames.push(this.#take(len));
    }
    return frames;
  }

  /** Call at the end of the stream: a partial frame left over is an error. */
  end(): void {
    if (this.#buffered !== 0) throw new ProtobufError("ProtobufDecode", `watch stream ended inside a frame (${this.#buffered} bytes left)`);
  }

  /** The first n buffered bytes, without consuming them. */
  #peek(n: number): Uint8Array {
    const first = this.#chunks[0]!;
    if (first.length >= n) return first;
    this.#merge();
    return this.#chunks[0]!;
  }

  #merge(): void {
    this.#chunks = [Buffer.concat(this.#chunks)];
  }

  #take(n: number): Uint8Array {
    if (n === 0) return new Uint8Array(0);
    let first = this.#chunks[0]!;
    if (first.length < n) {
      this.#merge();
      first = this.#chunks[0]!;
    }
    const out = first.subarray(0, n);
    if (first.length === n) this.#chunks.shift();
    else this.#chunks[0] = first.subarray(n);
    this.#buffered -= n;
    return out;
  }
}

/** Decodes a whole Protobuf watch stream, event by event. */
export async function* decodeWatchStream(
  source: AsyncIterable<Uint8Array>,
  registry: SchemaRegistry,
  lookupType: TypeLookup,
  options: { maxFrameBytes?: number } = {},
): AsyncGenerator<{ type: string; object: JsonObject }> {
  const frames = new WatchFrameReader(options);
  for await (const chunk of source) for (const frame of frames.push(chunk)) yield decodeWatchEvent(frame, registry, lookupType);
  frames.end();
}
