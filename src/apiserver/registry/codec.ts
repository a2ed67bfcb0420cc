// An API object as storage holds it: JSON without metadata.resourceVersion
// (the key's revision is the version, stamped back on every read). The
// registry encodes with it and every cache decodes with it.

import { corruptObject, requestEntityTooLarge, type ApiObject } from "../../machinery/index.js";
import { unreadableReason, type KeyValue } from "../../storage/index.js";

/** Objects are limited to what a storage value can hold. */
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The object's stored bytes; 413 past MAX_OBJECT_BYTES. `name` is for the message. */
export function encodeObject(obj: ApiObject, name: string): Uint8Array {
  const { resourceVersion: _rv, ...meta } = obj.metadata;
  const { apiVersion, kind, metadata: _m, ...rest } = obj;
  // apiVersion, kind, metadata first: responses splice the resourceVersion in (see http/stored-json.ts).
  const bytes = enc.encode(JSON.stringify({ apiVersion, kind, metadata: meta, ...rest }));
  if (bytes.length > MAX_OBJECT_BYTES) {
    throw requestEntityTooLarge(`the object ${JSON.stringify(name)} is ${bytes.length} bytes, over the ${MAX_OBJECT_BYTES}-byte limit`);
  }
  return bytes;
}

/** Stored bytes to an object carrying its resourceVersion; a 500 naming the key when they are not an object (seed 000, the corrupt state). */
export function decodeObject(kv: KeyValue): ApiObject {
  // A value encryption at rest could not open (a wrong key) or failing its checksum: corrupt, like any value that does not decode.
  const failure = unreadableReason(kv.value);
  if (failure !== undefined) throw corruptObject(kv.key, kv.modRevision, failure);
  let obj: ApiObject;
  try {
    obj = JSON.parse(dec.decode(kv.value)) as ApiObject;
  } catch (err) {
    throw corruptObject(kv.key, kv.modRevision, `data from the storage is not decodable: ${(err as Error).message}`);
  }
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) {
    throw corruptObject(kv.key, kv.modRevision, "data from the storage is not decodable: not a JSON object");
  }
  obj.metadata ??= {};
  obj.metadata.resourceVersion = String(kv.modRevision);
  return obj;
}
