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
  return encodeStoredForm(storedForm(obj), name);
}

/**
 * The object laid out as its stored bytes are: apiVersion, kind, metadata
 * first (responses splice the resourceVersion in, see http/stored-json.ts),
 * metadata without resourceVersion. A shallow copy: the values are the
 * object's own.
 */
export function storedForm(obj: ApiObject): ApiObject {
  const { resourceVersion: _rv, ...meta } = obj.metadata;
  const { apiVersion, kind, metadata: _m, ...rest } = obj;
  return { apiVersion, kind, metadata: meta, ...rest } as ApiObject;
}

/** storedForm's bytes; 413 past MAX_OBJECT_BYTES. */
export function encodeStoredForm(form: ApiObject, name: string): Uint8Array {
  const bytes = enc.encode(JSON.stringify(form));
  if (bytes.length > MAX_OBJECT_BYTES) {
    throw requestEntityTooLarge(`the object ${JSON.stringify(name)} is ${bytes.length} bytes, over the ${MAX_OBJECT_BYTES}-byte limit`);
  }
  return bytes;
}

/**
 * Whether decoding `value`'s JSON gives back an equal value, member for
 * member and in the same order: only null, booleans, strings, finite
 * numbers (not -0), arrays and plain objects (of Object.prototype), with no
 * undefined member.
 * Then the value itself may stand for its decoded bytes (a create's record,
 * storage/cacher/cached-storage.ts). A walk with no allocation, a fraction
 * of JSON.parse's cost.
 */
export function isJsonData(value: unknown): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value) && !Object.is(value, -0);
    case "object": {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!(i in value) || !isJsonData(value[i])) return false;
        return true;
      }
      // Only what JSON.parse makes: a null-prototype object would lack hasOwnProperty and the like.
      if (Object.getPrototypeOf(value) !== Object.prototype) return false;
      // Symbol-keyed and non-enumerable members (not in the JSON) are not looked for: a walk of
      // Object.getOwnPropertySymbols would allocate per object, and nothing on the write path
      // makes them. Frozen members (the field manager's shared fieldsV1) are fine: records are
      // immutable anyway.
      for (const key in value) {
        if (!Object.prototype.hasOwnProperty.call(value, key)) return false;
        if (!isJsonData((value as Record<string, unknown>)[key])) return false;
      }
      return true;
    }
    default:
      return false;
  }
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
