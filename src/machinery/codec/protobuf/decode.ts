// Protobuf message bytes → JSON object, walking a compiled plan (plan.ts).
// Zeros are kept only where upstream's Go type makes them meaningful
// (presence.ts), and keys come out in the JSON declaration order.

import { formatRfc3339, ZERO_TIME_SECONDS } from "./time.js";
import { ProtobufError, WIRE_LEN, type Reader } from "./wire.js";
import { Kind, Shape, wireTypeOf, type FieldPlan, type GroupPlan, type JsonObject, type MessagePlan } from "./plan.js";

function decodeFail(detail: string): never {
  throw new ProtobufError("ProtobufDecode", detail);
}

/** Reads fields up to `r.end` into the slots of the enclosing JSON object. */
function decodeFields(r: Reader, byTag: ReadonlyArray<FieldPlan | GroupPlan | undefined>, vals: unknown[]): void {
  while (r.pos < r.end) {
    const key = r.uint32();
    const tag = key >>> 3;
    const wireType = key & 7;
    if (tag === 0) decodeFail("illegal field number 0");
    const item = byTag[tag];
    if (item === undefined) {
      r.skip(wireType);
      continue;
    }
    if (item.group) {
      if (wireType !== WIRE_LEN) decodeFail(`wrong wire type ${wireType} for embedded message ${tag}`);
      const outer = r.end;
      r.end = r.len();
      decodeFields(r, item.byTag, vals);
      r.end = outer;
      continue;
    }
    try {
      decodeField(r, item, wireType, vals);
    } catch (err) {
      throw err instanceof ProtobufError ? err.within(item.name) : err;
    }
  }
}

function isZero(kind: Kind, v: unknown): boolean {
  switch (kind) {
    case Kind.String:
    case Kind.Bytes:
      return v === "";
    case Kind.Bool:
      return v === false;
    case Kind.Int32:
    case Kind.Int64:
    case Kind.Double:
      return v === 0;
    default:
      return false;
  }
}

function decodeField(r: Reader, f: FieldPlan, wireType: number, vals: unknown[]): void {
  if (f.shape === Shape.Single) {
    if (wireType !== f.wireType) decodeFail(`wrong wire type ${wireType}`);
    const v = decodeValue(r, f);
    if (v === undefined || (!f.keepZero && isZero(f.kind, v))) vals[f.slot] = undefined;
    else vals[f.slot] = v;
    return;
  }
  if (f.shape === Shape.Repeated) {
    let list = vals[f.slot] as unknown[] | undefined;
    if (list === undefined) vals[f.slot] = list = [];
    if (wireType === f.wireType) {
      const v = decodeValue(r, f);
      list.push(v === undefined ? null : v);
    } else if (wireType === WIRE_LEN && f.wireType !== WIRE_LEN) {
      // Packed scalars: upstream writes them unpacked (proto2), but a proto decoder accepts both.
      const outer = r.end;
      r.end = r.len();
      while (r.pos < r.end) list.push(decodeValue(r, f));
      r.end = outer;
    } else decodeFail(`wrong wire type ${wireType}`);
    return;
  }
  if (wireType !== WIRE_LEN) decodeFail(`wrong wire type ${wireType} for a map entry`);
  let map = vals[f.slot] as JsonObject | undefined;
  if (map === undefined) vals[f.slot] = map = {};
  const outer = r.end;
  r.end = r.len();
  let key = "";
  let value: unknown = undefined;
  const valueWireType = wireTypeOf(f.kind);
  while (r.pos < r.end) {
    const k = r.uint32();
    if (k === 0x0a) key = r.string();
    else if (k >>> 3 === 2 && (k & 7) === valueWireType) value = decodeValue(r, f);
    else if (k >>> 3 === 1 || k >>> 3 === 2) decodeFail(`wrong wire type ${k & 7} in a map entry`);
    else r.skip(k & 7);
  }
  r.end = outer;
  if (value === undefined) value = zeroOf(f.kind);
  if (key === "__proto__") Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
  else map[key] = value;
}

/** The JSON of a Go zero value, for a map entry without its value. */
function zeroOf(kind: Kind): unknown {
  switch (kind) {
    case Kind.String:
    case Kind.Bytes:
      return "";
    case Kind.Bool:
      return false;
    case Kind.Int32:
    case Kind.Int64:
    case Kind.Double:
    case Kind.IntOrString:
      return 0;
    case Kind.Quantity:
      return "0";
    case Kind.Message:
      return {};
    default:
      return null;
  }
}

/** One value of f's kind at r.pos; undefined for a zero time or an empty raw extension (JSON null). */
function decodeValue(r: Reader, f: FieldPlan): unknown {
  switch (f.kind) {
    case Kind.String:
      return r.string();
    case Kind.Bytes: {
      const stop = r.len();
      const s = r.buf.toString("base64", r.pos, stop);
      r.pos = stop;
      return s;
    }
    case Kind.Bool:
      return r.bool();
    case Kind.Int32:
      return r.int32();
    case Kind.Int64:
      return r.int64();
    case Kind.Double:
      return r.double();
    case Kind.Message:
      return decodeNested(r, f.message!);
    default:
      return decodeWellKnown(r, f.kind);
  }
}

function decodeNested(r: Reader, plan: MessagePlan): JsonObject {
  const outer = r.end;
  r.end = r.len();
  const out = decodeMessageBody(r, plan, undefined);
  r.end = outer;
  return out;
}

/** Decodes fields up to r.end and builds the object in declaration order, after `head` (apiVersion, kind) when given. */
export function decodeMessageBody(r: Reader, plan: MessagePlan, head: JsonObject | undefined): JsonObject {
  const names = plan.names;
  const vals: unknown[] = new Array<unknown>(names.length);
  decodeFields(r, plan.byTag, vals);
  const out: JsonObject = head ?? {};
  for (let i = 0; i < names.length; i++) {
    const v = vals[i];
    if (v !== undefined) out[names[i]!] = v;
  }
  return out;
}

/** Reads the fields of a well-known message up to r.end: `read(fieldKey)` consumes known ones and returns false for others. */
function eachField(r: Reader, maxKnownTag: number, read: (key: number) => boolean): void {
  while (r.pos < r.end) {
    const key = r.uint32();
    if (read(key)) continue;
    if (key >>> 3 <= maxKnownTag) decodeFail(`wrong wire type ${key & 7} for field ${key >>> 3}`);
    r.skip(key & 7);
  }
}

function decodeWellKnown(r: Reader, kind: Kind): unknown {
  const outer = r.end;
  r.end = r.len();
  let out: unknown;
  switch (kind) {
    case Kind.Quantity: {
      // message Quantity { optional string string = 1; }; Go reads an empty one as zero, "0" in JSON.
      let str = "";
      eachField(r, 1, (key) => key === 0x0a && ((str = r.string()), true));
      out = str === "" ? "0" : str;
      break;
    }
    case Kind.IntOrString: {
      let isString = false;
      let num = 0;
      let str = "";
      eachField(r, 3, (key) => {
        if (key === 0x08) isString = r.int64() === 1;
        else if (key === 0x10) num = r.int32();
        else if (key === 0x1a) str = r.string();
        else return false;
        return true;
      });
      out = isString ? str : num;
      break;
    }
    case Kind.Json: {
      let raw: Uint8Array | undefined;
      eachField(r, 1, (key) => key === 0x0a && ((raw = r.bytes()), true));
      out = parseRaw(raw);
      break;
    }
    default: {
      // Time and MicroTime. An empty message, or Go's zero time, is unset (JSON null upstream).
      const empty = r.pos === r.end;
      let seconds = 0;
      let nanos = 0;
      eachField(r, 2, (key) => {
        if (key === 0x08) seconds = r.int64();
        else if (key === 0x10) nanos = r.int32();
        else return false;
        return true;
      });
      if (empty || (seconds === ZERO_TIME_SECONDS && nanos === 0)) out = undefined;
      else {
        if (nanos < 0 || nanos >= 1e9) {
          seconds += Math.floor(nanos / 1e9);
          nanos = ((nanos % 1e9) + 1e9) % 1e9;
        }
        out = formatRfc3339(seconds, nanos, kind === Kind.MicroTime);
      }
    }
  }
  r.end = outer;
  return out;
}

/** The JSON value in a RawExtension or FieldsV1; undefined for none (JSON null). */
function parseRaw(raw: Uint8Array | undefined): unknown {
  if (raw === undefined || raw.length === 0) return undefined;
  if (raw[0] === 0x6b && raw[1] === 0x38 && raw[2] === 0x73 && raw[3] === 0) decodeFail("raw holds a Protobuf object; only JSON raw extensions are decoded");
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString("utf8"));
  } catch (err) {
    throw new ProtobufError("ProtobufDecode", `raw is not JSON: ${(err as Error).message}`, { cause: err });
  }
  return v === null ? undefined : v;
}
