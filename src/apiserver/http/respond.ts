// Writing responses: objects, lists (written item by item from each object's
// cached bytes, never one whole-list string), watch streams (newline-
// delimited events, headers flushed at once, each event's object serialized
// once for all watchers), and Status objects for every error.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { ResourceDefinition } from "../../api/resource.js";
import { badRequest, statusFromError, type ApiObject } from "../../machinery/index.js";
import type { Cached } from "../../storage/cacher/cacher.js";
import type { ListResult } from "../registry/store.js";
import type { WatchEnv, WatchStream } from "../registry/watch.js";
import { negotiate, type Representation } from "./negotiation.js";
import { partialObjectMetadata, table, type IncludeObject } from "./table.js";
import { spliceResourceVersion } from "./stored-json.js";

export type Incoming = IncomingMessage | Http2ServerRequest;
export type Outgoing = ServerResponse | Http2ServerResponse;

const JSON_TYPE = "application/json";

/** The object's JSON in API version `gv`, memoized on the cache entry. */
export function objectBytes(cached: Cached<ApiObject>, gv: string): Buffer {
  const memoKey = `json:${gv}`;
  let bytes = cached.encoded.get(memoKey) as Buffer | undefined;
  if (bytes !== undefined) return bytes;
  const object = cached.object;
  if (cached.stored !== undefined && object.apiVersion === gv && String(cached.revision) === object.metadata.resourceVersion) {
    // Straight from the stored bytes; not memoized: the splice is a copy, cheaper than holding it twice.
    bytes = spliceResourceVersion(cached.stored, gv, object.kind, cached.revision);
    if (bytes !== undefined) return bytes;
  }
  bytes = Buffer.from(JSON.stringify(object.apiVersion === gv ? object : { ...object, apiVersion: gv }));
  if (cached.revision > 0) cached.encoded.set(memoKey, bytes);
  return bytes;
}

function query(req: Incoming): URLSearchParams {
  return new URL(req.url ?? "/", "http://x").searchParams;
}

function includeObject(req: Incoming): IncludeObject {
  const v = query(req).get("includeObject");
  if (v === null || v === "") return "Metadata";
  if (v === "None" || v === "Metadata" || v === "Object") return v;
  throw badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`);
}

function withApiVersion(obj: ApiObject, gv: string): ApiObject {
  return obj.apiVersion === gv ? obj : { ...obj, apiVersion: gv };
}

export function sendJson(res: Outgoing, code: number, body: unknown, contentType = JSON_TYPE): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(code, { "content-type": contentType, "content-length": bytes.length });
  res.end(bytes);
}

export function sendError(res: Outgoing, err: unknown): void {
  const status = statusFromError(err);
  if (res.headersSent) {
    res.end();
    return;
  }
  const headers: Record<string, string | number> = {};
  const retry = status.details?.retryAfterSeconds;
  if (retry !== undefined) headers["retry-after"] = retry;
  const bytes = Buffer.from(JSON.stringify(status));
  res.writeHead(status.code ?? 500, { ...headers, "content-type": JSON_TYPE, "content-length": bytes.length });
  res.end(bytes);
}

export function sendStatusSuccess(res: Outgoing, code: number): void {
  sendJson(res, code, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code });
}

export function sendObject(req: Incoming, res: Outgoing, code: number, cached: Cached<ApiObject>, def: ResourceDefinition, gv: string): void {
  const rep = negotiate(req.headers.accept, { list: false });
  if (rep.as === "object") {
    const bytes = objectBytes(cached, gv);
    res.writeHead(code, { "content-type": JSON_TYPE, "content-length": bytes.length });
    res.end(bytes);
  } else if (rep.as === "Table") {
    sendJson(res, code, table(def, [withApiVersion(cached.object, gv)], { now: new Date(), include: includeObject(req), group: rep.group, version: rep.version }));
  } else {
    sendJson(res, code, partialObjectMetadata(cached.object, rep.group, rep.version));
  }
}

export async function sendList(req: Incoming, res: Outgoing, list: ListResult, def: ResourceDefinition, gv: string): Promise<void> {
  const rep = negotiate(req.headers.accept, { list: true });
  if (rep.as === "Table") {
    const objects = list.items.map((c) => withApiVersion(c.object, gv));
    return sendJson(res, 200, table(def, objects, { now: new Date(), include: includeObject(req), group: rep.group, version: rep.version, listMeta: list.metadata }));
  }
  if (rep.as === "PartialObjectMetadataList" || rep.as === "PartialObjectMetadata") {
    return sendJson(res, 200, {
      kind: "PartialObjectMetadataList",
      apiVersion: `${rep.group}/${rep.version}`,
      metadata: list.metadata,
      items: list.items.map((c) => partialObjectMetadata(c.object, rep.group, rep.version)),
    });
  }
  // Item by item: each object's bytes come from its cache entry, so a large list costs one copy per item.
  res.writeHead(200, { "content-type": JSON_TYPE });
  const head = `{"kind":"${def.kind}List","apiVersion":"${gv}","metadata":${JSON.stringify(list.metadata)},"items":[`;
  await write(res, Buffer.from(head));
  const BATCH = 64 * 1024;
  let pending: Buffer[] = [];
  let size = 0;
  for (let i = 0; i < list.items.length; i++) {
    if (i > 0) pending.push(COMMA);
    const bytes = objectBytes(list.items[i]!, gv);
    pending.push(bytes);
    size += bytes.length + 1;
    if (size >= BATCH) {
      await write(res, Buffer.concat(pending));
      pending = [];
      size = 0;
    }
  }
  pending.push(CLOSE_LIST);
  res.end(Buffer.concat(pending));
}

const COMMA = Buffer.from(",");
const CLOSE_LIST = Buffer.from("]}");

/** Write with backpressure: wait for drain when the socket's buffer is full. */
function write(res: Outgoing, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const ok = (res as ServerResponse).write(chunk, (err?: Error | null) => (err ? reject(err) : undefined));
    if (ok) resolve();
    else res.once("drain", () => resolve());
  });
}

/** A whole watch frame for a cached object, built once and shared by every watcher of that version. */
function eventFrameBytes(type: string, cached: Cached<ApiObject>, gv: string): Buffer {
  const memoKey = `frame:${type}:${gv}`;
  let frame = cached.encoded.get(memoKey) as Buffer | undefined;
  if (frame === undefined) {
    frame = eventFrame(type, objectBytes(cached, gv));
    if (cached.revision > 0) cached.encoded.set(memoKey, frame);
  }
  return frame;
}

function eventFrame(type: string, objectJson: Buffer | string): Buffer {
  return Buffer.concat([Buffer.from(`{"type":"${type}","object":`), typeof objectJson === "string" ? Buffer.from(objectJson) : objectJson, Buffer.from("}\n")]);
}

/** A watch that could not start from its version: 200, one ERROR event carrying the Status, end. */
export function sendWatchError(res: Outgoing, err: unknown): void {
  res.writeHead(200, { "content-type": JSON_TYPE });
  res.end(eventFrame("ERROR", JSON.stringify(statusFromError(err))));
}

export async function sendWatch(
  req: Incoming,
  res: Outgoing,
  stream: WatchStream,
  def: ResourceDefinition,
  gv: string,
  rep: Representation,
  env: WatchEnv & { initialEventsEndAnnotation?: string; onInitialEventsEnd?: () => void },
): Promise<void> {
  const closed = () => stream.close();
  req.once("close", closed);
  res.once("close", closed);
  res.writeHead(200, { "content-type": JSON_TYPE });
  (res as { flushHeaders?: () => void }).flushHeaders?.();
  const include = rep.as === "Table" ? includeObject(req) : "Metadata";
  try {
    for await (const event of stream) {
      let frame: Buffer;
      if (event.type === "BOOKMARK") {
        const metadata: Record<string, unknown> = { resourceVersion: String(event.revision) };
        if (event.initialEventsEnd && env.initialEventsEndAnnotation !== undefined) {
          metadata["annotations"] = { [env.initialEventsEndAnnotation]: "true" };
        }
        if (event.initialEventsEnd) env.onInitialEventsEnd?.();
        frame = eventFrame("BOOKMARK", JSON.stringify({ kind: def.kind, apiVersion: gv, metadata }));
      } else if (rep.as === "object") {
        frame = eventFrameBytes(event.type, event.object, gv);
      } else if (rep.as === "Table") {
        const one = table(def, [withApiVersion(event.object.object, gv)], { now: new Date(), include, group: rep.group, version: rep.version });
        frame = eventFrame(event.type, JSON.stringify(one));
      } else {
        frame = eventFrame(event.type, JSON.stringify(partialObjectMetadata(event.object.object, rep.group, rep.version)));
      }
      await write(res, frame);
    }
  } catch (err) {
    // After the headers an error travels as an ERROR event carrying the Status.
    if (!res.writableEnded) await write(res, eventFrame("ERROR", JSON.stringify(statusFromError(err)))).catch(() => {});
  } finally {
    req.off("close", closed);
    res.off("close", closed);
    if (!res.writableEnded) res.end();
  }
}
