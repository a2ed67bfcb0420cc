// Writing responses in the negotiated representation (seed 000, "Media types
// and negotiation"): objects, lists, watch streams and Status errors in JSON,
// YAML, CBOR or Protobuf, as the object, a Table or metadata only. JSON and
// Protobuf lists are written item by item from each object's cached bytes,
// never one whole-list buffer (rule 5); watch frames are built once per event
// for all watchers; get/list bodies are gzip-compressed when asked (rule 6).

import type { ServerResponse } from "node:http";
import { schemaOf, versionOf, type ResourceDefinition } from "../../api/resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { META_V1 } from "../../api/meta/schemas.js";
import { badRequest, statusFromError, type ApiObject, type StatusDetails } from "../../machinery/index.js";
import { encodeCbor } from "../../machinery/codec/cbor/index.js";
import { codecFor, encodeEnvelope, encodeListEnvelope, encodeWatchFrame, listEnvelopeParts, listItemPrefix, STATUS_TYPE, type TypeLookup } from "../../machinery/codec/protobuf/index.js";
import { toYaml } from "../../machinery/decode/index.js";
import type { Cached } from "../../storage/cacher/cacher.js";
import type { ListResult } from "../registry/store.js";
import type { WatchEnv, WatchStream } from "../registry/watch.js";
import { errorRepresentation, negotiate, type Representation } from "../../machinery/negotiation.js";
import { acceptsGzip, ResponseBody } from "./response-body.js";
import { partialObjectMetadata, table, type IncludeObject } from "./table.js";
import { spliceResourceVersion } from "./stored-json.js";
import { encodingMemo } from "./encoding-memo.js";
import type { Incoming, Outgoing } from "./exchange.js";

export type { Incoming, Outgoing };

const JSON_TYPE = "application/json";

/** What the server's configuration decides about encodings, made once at start. */
export interface Encoding {
  /** The built-in types' schemas: the Protobuf codec reads field numbers from them. */
  readonly schemas: SchemaRegistry;
  /** Gate CBORServingAndStorage. */
  readonly cbor: boolean;
  /** Gate APIResponseCompression. */
  readonly compression: boolean;
  /** Schema type of an apiVersion and kind, for Protobuf request bodies. */
  readonly lookupType: TypeLookup;
}

/** One response: the request, the resource, the API version it was asked in, and the encodings on offer. */
export interface ResponseScope {
  readonly req: Incoming;
  readonly res: Outgoing;
  readonly def: ResourceDefinition;
  readonly gv: string;
  readonly encoding: Encoding;
  /** A watch event's object in the request's version (a custom resource's conversion); absent: as stored. */
  readonly present?: (cached: Cached<ApiObject>) => Promise<Cached<ApiObject>>;
}

/** Protobuf is offered for kinds with a Protobuf form: built-in ones; a declaration saying `protobuf: false` (custom resources) gets none. */
export function servesProtobuf(def: ResourceDefinition, schemas: SchemaRegistry): boolean {
  return def.protobuf !== false && schemas.get(def.schema) !== undefined;
}

export function negotiateFor(scope: ResponseScope, options: { list: boolean; watch?: boolean }): Representation {
  const { encoding, def } = scope;
  return negotiate(scope.req.headers.accept, { ...options, cbor: encoding.cbor, protobuf: servesProtobuf(def, encoding.schemas) });
}

/**
 * The object's JSON in API version `gv` (its kind `kind`), memoized on the cache entry.
 * A record with stored bytes in that version and kind answers from them without its
 * decoded object (which it may have let go: cached.ts, "Decoded objects"): a record
 * with stored bytes is its stored value at its revision, so the bytes with the
 * revision spliced in are the object's JSON.
 */
export function objectBytes(cached: Cached<ApiObject>, gv: string, kind: string): Buffer {
  const memoKey = `json:${gv}`;
  let bytes = encodingMemo.get(cached, memoKey) as Buffer | undefined;
  if (bytes !== undefined) return bytes;
  if (cached.storedSize > 0) {
    // Straight from the stored bytes; not memoized: the splice is a copy, cheaper than holding it twice.
    bytes = spliceResourceVersion(cached.storedValue()!, gv, kind, cached.revision);
    if (bytes !== undefined) return bytes;
  }
  bytes = Buffer.from(JSON.stringify(withApiVersion(cached.object, gv)));
  encodingMemo.set(cached, memoKey, bytes);
  return bytes;
}

/** The object's Protobuf message (no envelope), memoized on the cache entry: lists reuse it item by item. */
function protobufItemBytes(cached: Cached<ApiObject>, scope: ResponseScope): Uint8Array {
  const memoKey = `pb:${scope.gv}`;
  let bytes = encodingMemo.get(cached, memoKey);
  if (bytes === undefined) {
    bytes = codecFor(scope.encoding.schemas).encode(cached.object, schemaOf(scope.def, versionOf(scope.gv)));
    encodingMemo.set(cached, memoKey, bytes);
  }
  return bytes;
}

function query(req: Incoming): URLSearchParams {
  return new URL(req.url ?? "/", "http://x").searchParams;
}

function pretty(req: Incoming): boolean {
  // Parsing the URL for every response was 0.7 % of a create's CPU; almost no request asks
  // (a name spelled with escapes, %70retty, is still parsed).
  const url = req.url;
  if (url === undefined || (!url.includes("pretty") && !url.includes("%"))) return false;
  const v = query(req).get("pretty");
  return v !== null && (v === "" || v === "1" || v.toLowerCase() === "true");
}

function includeObject(req: Incoming): IncludeObject {
  const v = query(req).get("includeObject");
  if (v === null || v === "") return "Metadata";
  if (v === "None" || v === "Metadata" || v === "Object") return v;
  throw badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`);
}

/** The declaration whose Table answers: a custom resource's version may have printer columns of its own. */
function tableDef(scope: ResponseScope): ResourceDefinition {
  const { def, gv } = scope;
  const own = def.tableFor?.(gv.slice(gv.indexOf("/") + 1));
  return own === undefined ? def : { ...def, table: own };
}

function withApiVersion(obj: ApiObject, gv: string): ApiObject {
  return obj.apiVersion === gv ? obj : { ...obj, apiVersion: gv };
}

/** A whole value in one format; `typeName` is its schema type for Protobuf. */
export function encodeValue(value: object, format: Representation["format"], typeName: string, schemas: SchemaRegistry, options: { pretty?: boolean } = {}): Uint8Array {
  switch (format) {
    case "json":
      return Buffer.from(options.pretty ? JSON.stringify(value, null, 2) + "\n" : JSON.stringify(value));
    case "yaml":
      return Buffer.from(toYaml(value));
    case "cbor":
      return encodeCbor(value);
    case "protobuf": {
      // Lists (`<Kind>List` of `<Kind>`) item by item: no list-sized buffer to grow and move.
      const items = (value as { items?: unknown }).items;
      const itemType = typeName.endsWith("List") ? typeName.slice(0, -4) : undefined;
      if (Array.isArray(items) && itemType !== undefined && schemas.get(itemType) !== undefined) {
        return encodeListEnvelope(value as Parameters<typeof encodeListEnvelope>[0], typeName, itemType, schemas);
      }
      return encodeEnvelope(value, typeName, schemas);
    }
  }
}

function gzipAllowed(scope: { req: Incoming; encoding: Encoding }): boolean {
  return scope.encoding.compression && (scope.req.method ?? "GET").toUpperCase() === "GET" && acceptsGzip(scope.req);
}

function sendBytes(scope: ResponseScope, code: number, contentType: string, bytes: Uint8Array): Promise<void> {
  return new ResponseBody(scope.res, { status: code, headers: { "content-type": contentType }, gzip: gzipAllowed(scope) }).end(bytes);
}

export function sendJson(res: Outgoing, code: number, body: unknown, contentType = JSON_TYPE): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(code, { "content-type": contentType, "content-length": bytes.length });
  res.end(bytes);
}

/**
 * An error as a Status, in the client's format when it named one (JSON when
 * negotiation itself failed or no encoding is known).
 */
export function sendError(res: Outgoing, err: unknown, from?: { req: Incoming; encoding: Encoding }): void {
  const status = statusFromError(err);
  if (res.headersSent) {
    res.end();
    return;
  }
  const headers: Record<string, string | number> = {};
  const retry = status.details?.retryAfterSeconds;
  // As upstream: no header for 0 (a request timeout's 504), which clients would take as "retry now".
  if (retry !== undefined && retry > 0) headers["retry-after"] = retry;
  const rep =
    from === undefined
      ? undefined
      : errorRepresentation(from.req.headers.accept, { cbor: from.encoding.cbor, protobuf: from.encoding.schemas.get(STATUS_TYPE) !== undefined });
  const bytes = rep === undefined ? Buffer.from(JSON.stringify(status)) : encodeValue(status, rep.format, STATUS_TYPE, from!.encoding.schemas);
  res.writeHead(status.code ?? 500, { ...headers, "content-type": rep?.contentType ?? JSON_TYPE, "content-length": bytes.length });
  res.end(bytes);
}

export function sendStatusSuccess(res: Outgoing, code: number, details?: StatusDetails): void {
  sendJson(res, code, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", ...(details ? { details } : {}), code });
}

const META_TABLE = `${META_V1}.Table`;
const META_PARTIAL = `${META_V1}.PartialObjectMetadata`;
const META_PARTIAL_LIST = `${META_V1}.PartialObjectMetadataList`;

/** An object (get, and what writes return) in the negotiated representation. */
export function sendObject(scope: ResponseScope, code: number, cached: Cached<ApiObject>): Promise<void> {
  const { req, gv, def, encoding } = scope;
  const rep = negotiateFor(scope, { list: false });
  let bytes: Uint8Array;
  if (rep.as === "object") {
    bytes = rep.format === "json" && !pretty(req) ? objectBytes(cached, gv, def.kind) : encodeValue(withApiVersion(cached.object, gv), rep.format, schemaOf(def, versionOf(gv)), encoding.schemas, { pretty: pretty(req) });
  } else if (rep.as === "Table") {
    const value = table(tableDef(scope), [withApiVersion(cached.object, gv)], { now: new Date(), include: includeObject(req), group: rep.group, version: rep.version });
    bytes = encodeValue(value, rep.format, META_TABLE, encoding.schemas, { pretty: pretty(req) });
  } else {
    bytes = encodeValue(partialObjectMetadata(cached.object, rep.group, rep.version), rep.format, META_PARTIAL, encoding.schemas, { pretty: pretty(req) });
  }
  return sendBytes(scope, code, rep.contentType, bytes);
}

export async function sendList(scope: ResponseScope, list: ListResult): Promise<void> {
  const { req, gv, def, encoding } = scope;
  const rep = negotiateFor(scope, { list: true });
  const options = { pretty: pretty(req) };
  if (rep.as === "Table") {
    const objects = list.items.map((c) => withApiVersion(c.object, gv));
    const value = table(tableDef(scope), objects, { now: new Date(), include: includeObject(req), group: rep.group, version: rep.version, listMeta: list.metadata });
    return sendBytes(scope, 200, rep.contentType, encodeValue(value, rep.format, META_TABLE, encoding.schemas, options));
  }
  if (rep.as !== "object") {
    const value = {
      kind: "PartialObjectMetadataList",
      apiVersion: `${rep.group}/${rep.version}`,
      metadata: list.metadata,
      items: list.items.map((c) => partialObjectMetadata(c.object, rep.group, rep.version)),
    };
    return sendBytes(scope, 200, rep.contentType, encodeValue(value, rep.format, META_PARTIAL_LIST, encoding.schemas, options));
  }
  const kind = `${def.kind}List`;
  if (rep.format === "json" && !options.pretty) return writeJsonList(scope, rep, list, kind);
  if (rep.format === "protobuf") return writeProtobufList(scope, rep, list, kind);
  if (rep.format === "yaml") return writeYamlList(scope, rep, list, kind);
  const value = { kind, apiVersion: gv, metadata: list.metadata, items: list.items.map((c) => withApiVersion(c.object, gv)) };
  return sendBytes(scope, 200, rep.contentType, encodeValue(value, rep.format, `${schemaOf(def, versionOf(scope.gv))}List`, encoding.schemas, options));
}

/** Chunks of about this size leave together: fewer writes than one per item, never the whole list. */
const BATCH_BYTES = 64 * 1024;

/** Collects small pieces into batches and writes each batch with backpressure. */
class Batcher {
  #pending: Uint8Array[] = [];
  #size = 0;
  constructor(readonly body: ResponseBody) {}
  async add(bytes: Uint8Array): Promise<void> {
    this.#pending.push(bytes);
    this.#size += bytes.length;
    if (this.#size >= BATCH_BYTES) {
      const chunk = Buffer.concat(this.#pending);
      this.#pending = [];
      this.#size = 0;
      await this.body.write(chunk);
    }
  }
  end(): Promise<void> {
    return this.body.end(Buffer.concat(this.#pending));
  }
}

function listBody(scope: ResponseScope, rep: Representation): Batcher {
  return new Batcher(new ResponseBody(scope.res, { status: 200, headers: { "content-type": rep.contentType }, gzip: gzipAllowed(scope) }));
}

const COMMA = Buffer.from(",");
const CLOSE_LIST = Buffer.from("]}");

async function writeJsonList(scope: ResponseScope, rep: Representation, list: ListResult, kind: string): Promise<void> {
  const out = listBody(scope, rep);
  await out.add(Buffer.from(`{"kind":"${kind}","apiVersion":"${scope.gv}","metadata":${JSON.stringify(list.metadata)},"items":[`));
  for (let i = 0; i < list.items.length; i++) {
    if (i > 0) await out.add(COMMA);
    await out.add(objectBytes(list.items[i]!, scope.gv, scope.def.kind));
  }
  await out.add(CLOSE_LIST);
  return out.end();
}

/**
 * A list in YAML item by item, as JSON lists are streamed: one YAML string of the whole list stops at V8's
 * string limit (~512 MB, "Invalid string length"). The same text as toYaml of the whole list: each item is
 * its own block mapping shifted under `- ` (empty lines stay empty, so block scalars keep their content).
 */
async function writeYamlList(scope: ResponseScope, rep: Representation, list: ListResult, kind: string): Promise<void> {
  const out = listBody(scope, rep);
  await out.add(Buffer.from(toYaml({ kind, apiVersion: scope.gv, metadata: list.metadata }) + (list.items.length === 0 ? "items: []\n" : "items:\n")));
  for (const item of list.items) await out.add(Buffer.from(yamlSequenceItem(toYaml(withApiVersion(item.object, scope.gv)))));
  return out.end();
}

/** A block mapping's YAML as an entry of a block sequence at the same indentation. */
export function yamlSequenceItem(yaml: string): string {
  const lines = yaml.endsWith("\n") ? yaml.slice(0, -1).split("\n") : yaml.split("\n");
  return lines.map((line, i) => (i === 0 ? "- " + line : line === "" ? "" : "  " + line)).join("\n") + "\n";
}

async function writeProtobufList(scope: ResponseScope, rep: Representation, list: ListResult, kind: string): Promise<void> {
  // The envelope states the body's length first, so the items are encoded (or taken from the cache) before the head goes out.
  const items = list.items.map((c) => protobufItemBytes(c, scope));
  const parts = listEnvelopeParts({ apiVersion: scope.gv, kind, metadata: list.metadata }, `${schemaOf(scope.def, versionOf(scope.gv))}List`, items.map((b) => b.length), scope.encoding.schemas);
  const out = listBody(scope, rep);
  await out.add(parts.head);
  for (const item of items) {
    await out.add(listItemPrefix(item.length));
    await out.add(item);
  }
  await out.add(parts.tail);
  return out.end();
}

// ---------------------------------------------------------------- watch

/** One watch event in the stream's format: a JSON line, a YAML document, a CBOR item or a length-prefixed Protobuf frame. */
function eventFrame(rep: Representation, type: string, object: object, typeName: string, schemas: SchemaRegistry): Uint8Array {
  switch (rep.format) {
    case "json":
      return Buffer.from(JSON.stringify({ type, object }) + "\n");
    case "yaml":
      return Buffer.from("---\n" + toYaml({ type, object }));
    case "cbor":
      return encodeCbor({ type, object });
    case "protobuf":
      return encodeWatchFrame({ type, object }, typeName, schemas);
  }
}

/** A whole watch frame for a cached object, built once and shared by every watcher of that version and format. */
function objectEventFrame(scope: ResponseScope, rep: Representation, type: string, cached: Cached<ApiObject>): Uint8Array {
  const memoKey = `frame:${rep.format}:${type}:${scope.gv}`;
  let frame = encodingMemo.get(cached, memoKey);
  if (frame === undefined) {
    frame =
      rep.format === "json"
        ? Buffer.concat([Buffer.from(`{"type":"${type}","object":`), objectBytes(cached, scope.gv, scope.def.kind), Buffer.from("}\n")])
        : eventFrame(rep, type, withApiVersion(cached.object, scope.gv), schemaOf(scope.def, versionOf(scope.gv)), scope.encoding.schemas);
    encodingMemo.set(cached, memoKey, frame);
  }
  return frame;
}

function errorFrame(rep: Representation, err: unknown, schemas: SchemaRegistry): Uint8Array {
  return eventFrame(rep, "ERROR", statusFromError(err), STATUS_TYPE, schemas);
}

/** A watch that could not start from its version: 200, one ERROR event carrying the Status, end. */
export function sendWatchError(scope: ResponseScope, rep: Representation, err: unknown): void {
  scope.res.writeHead(200, { "content-type": rep.contentType });
  scope.res.end(errorFrame(rep, err, scope.encoding.schemas));
}

/** One callback for every write: a failed write is seen as the response's "close", not through each write. */
const ignoreWriteError = (): void => {};

/**
 * Write with backpressure: wait for drain when the socket's buffer is full, or
 * for the client to leave. Nothing to wait for (the common case) costs no
 * promise and no callback: a watch event fans out to thousands of streams, and
 * per-stream allocations there showed in the fan-out tail. A failed write
 * closes the response, which ends the watch through its "close" listener.
 */
function write(res: Outgoing, chunk: Uint8Array): Promise<void> | undefined {
  // The stream's own mark (16 KiB) is a dozen events: waiting on it put a drain (a promise, two listeners)
  // on most writes of a burst. Up to WATCH_BUFFER is taken without waiting; the buffered frames are
  // the cache's shared ones (references, not copies), so this costs little memory per watcher.
  if ((res as ServerResponse).write(chunk, ignoreWriteError) || res.writableLength < WATCH_BUFFER) return undefined;
  // A response already gone emits no more "close" or "drain": nothing to wait for.
  const gone = res as { destroyed?: boolean; stream?: { destroyed: boolean } };
  if (res.writableEnded || gone.destroyed === true || gone.stream?.destroyed === true) return undefined;
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}

/** Bytes a watch response may hold unsent before its writer waits for "drain" (Go's HTTP/2 server gives a stream a 1 MiB window). */
const WATCH_BUFFER = 1 << 20;

/** The most bytes of queued events gathered into one write to a watcher that is behind. */
const MAX_WATCH_BATCH = 256 << 10;

export async function sendWatch(scope: ResponseScope, stream: WatchStream, rep: Representation, env: WatchEnv & { initialEventsEndAnnotation?: string; onInitialEventsEnd?: () => void }): Promise<void> {
  const { req, res, def, gv, encoding } = scope;
  const closed = () => stream.close();
  req.once("close", closed);
  res.once("close", closed);
  res.writeHead(200, { "content-type": rep.contentType });
  (res as { flushHeaders?: () => void }).flushHeaders?.();
  const include = rep.as === "Table" ? includeObject(req) : "Metadata";
  // A watcher that is behind (its queue holds more events) gets them in one write: the response is corked
  // while the backlog lasts and uncorked with its last event, so the frames (shared by every watcher, not
  // copied) leave as one vectored write. Each write to a stream has a fixed cost, paid per event per watcher
  // in a fan-out burst otherwise.
  let corkedBytes = -1;
  const uncork = (): void => {
    if (corkedBytes < 0) return;
    corkedBytes = -1;
    res.uncork();
  };
  try {
    for await (const event of stream) {
      let frame: Uint8Array;
      if (event.type === "BOOKMARK") {
        const metadata: Record<string, unknown> = { resourceVersion: String(event.revision) };
        if (event.initialEventsEnd && env.initialEventsEndAnnotation !== undefined) {
          metadata["annotations"] = { [env.initialEventsEndAnnotation]: "true" };
        }
        if (event.initialEventsEnd) env.onInitialEventsEnd?.();
        frame = eventFrame(rep, "BOOKMARK", { kind: def.kind, apiVersion: gv, metadata }, schemaOf(def, versionOf(gv)), encoding.schemas);
      } else {
        const object = scope.present === undefined ? event.object : await scope.present(event.object);
        if (rep.as === "object") {
          frame = objectEventFrame(scope, rep, event.type, object);
        } else if (rep.as === "Table") {
          const one = table(tableDef(scope), [withApiVersion(object.object, gv)], { now: new Date(), include, group: rep.group, version: rep.version });
          frame = eventFrame(rep, event.type, one, META_TABLE, encoding.schemas);
        } else {
          frame = eventFrame(rep, event.type, partialObjectMetadata(object.object, rep.group, rep.version), META_PARTIAL, encoding.schemas);
        }
      }
      const behind = stream.pending > 0 && corkedBytes + frame.length < MAX_WATCH_BATCH;
      if (behind && corkedBytes < 0) {
        res.cork();
        corkedBytes = 0;
      }
      if (behind) corkedBytes += frame.length;
      const full = write(res, frame);
      // A full buffer is waited on uncorked: "drain" comes only once the buffer has gone out.
      if (!behind || full !== undefined) uncork();
      if (full !== undefined) await full;
    }
  } catch (err) {
    uncork();
    // After the headers an error travels as an ERROR event carrying the Status.
    if (!res.writableEnded) await write(res, errorFrame(rep, err, encoding.schemas));
  } finally {
    uncork();
    req.off("close", closed);
    res.off("close", closed);
    if (!res.writableEnded) res.end();
  }
}
