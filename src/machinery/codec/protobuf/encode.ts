// JSON object → Protobuf message bytes, walking a compiled plan (plan.ts).
// Fields present in the JSON are written in field-number order, as Go writes
// them; each message type also gets a generated encoder for its common fields.

import { parseRfc3339 } from "./time.js";
import { ProtobufError, type Writer } from "./wire.js";
import { Kind, Shape, wireTypeOf, type Encoder, type FieldPlan, type GroupPlan, type JsonObject, type MessagePlan } from "./plan.js";

function encodeFail(detail: string): never {
  throw new ProtobufError("ProtobufEncode", detail);
}

function jsonType(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_MIN = -(2 ** 63);
const INT64_END = 2 ** 63;

/** Writes the fields of `obj` (no key, no length) as message type `plan`. */
export function encodeBody(w: Writer, obj: JsonObject, plan: MessagePlan): void {
  (plan.encoder ?? compileEncoder(plan))(w, obj);
}

function encodeGroup(w: Writer, obj: JsonObject, group: GroupPlan): void {
  const start = w.pos;
  w.uint32(group.key);
  const mark = w.fork();
  const fields = group.fields;
  for (let j = 0; j < fields.length; j++) {
    const f = fields[j]!;
    const v = obj[f.name];
    if (v !== undefined && v !== null) encodeField(w, f, v);
  }
  if (w.pos === mark + 1) w.pos = start; // nothing of the embedded struct set: write nothing
  else w.join(mark);
}

function within(err: unknown, segment: string): unknown {
  return err instanceof ProtobufError ? err.within(segment) : err;
}

function allObjects(v: unknown[]): boolean {
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (typeof x !== "object" || x === null || Array.isArray(x)) return false;
  }
  return true;
}

function allStrings(v: unknown[]): boolean {
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== "string") return false;
  return true;
}

/**
 * One function per message type, generated from its plan (as fastify compiles
 * serializers from schemas): each field is a named property read at its own
 * site, so V8 keeps the loads monomorphic, and the common kinds (strings,
 * small integers, booleans, nested messages and lists of them) are written
 * inline. Anything else, and every value of an unexpected type, goes through
 * encodeField, which writes the same bytes and words the errors.
 */
function compileEncoder(plan: MessagePlan): Encoder {
  const refs: unknown[] = [];
  const ref = (x: unknown) => `R[${refs.push(x) - 1}]`;
  const lines: string[] = [];
  for (const item of plan.items) {
    if (item.group) {
      lines.push(`encodeGroup(w, o, ${ref(item)});`);
      continue;
    }
    const f = ref(item);
    const name = JSON.stringify(item.name);
    const key = item.key;
    // A nested message's errors gain this field's name (and the element's index) on the way out.
    const message = (segment: string) => `const m = w.fork(); try { encodeBody(w, x, ${f}.message); } catch (e) { throw ${segment}; } w.join(m);`;
    let code = `encodeField(w, ${f}, v);`;
    if (item.shape === Shape.Single) {
      switch (item.kind) {
        case Kind.String:
          code = `if (typeof v === "string") { w.uint32(${key}); w.string(v); } else ${code}`;
          break;
        case Kind.Bool:
          code = `if (typeof v === "boolean") { w.uint32(${key}); w.uint32(v ? 1 : 0); } else ${code}`;
          break;
        case Kind.Int32:
        case Kind.Int64:
          code = `if (typeof v === "number" && (v | 0) === v && v >= 0) { w.uint32(${key}); w.uint32(v); } else ${code}`;
          break;
        case Kind.Message:
          code = `if (typeof v === "object" && !Array.isArray(v)) { const x = v; w.uint32(${key}); ${message(`within(e, ${name})`)} } else ${code}`;
          break;
      }
    } else if (item.shape === Shape.Repeated && (item.kind === Kind.Message || item.kind === Kind.String)) {
      const each = item.kind === Kind.Message ? message(`within(within(e, "[" + j + "]"), ${name})`) : "w.string(x);";
      const check = item.kind === Kind.Message ? "allObjects(v)" : "allStrings(v)";
      code = `if (Array.isArray(v) && ${check}) { for (let j = 0; j < v.length; j++) { const x = v[j]; w.uint32(${key}); ${each} } } else ${code}`;
    }
    lines.push(`v = o[${name}];`, `if (v !== undefined && v !== null) { ${code} }`);
  }
  const source = `return function encode(w, o) {\nlet v;\n${lines.join("\n")}\n};`;
  const factory = new Function("R", "encodeField", "encodeBody", "encodeGroup", "within", "allObjects", "allStrings", source) as (...args: unknown[]) => Encoder;
  plan.encoder = factory(refs, encodeField, encodeBody, encodeGroup, within, allObjects, allStrings);
  return plan.encoder;
}

function encodeField(w: Writer, f: FieldPlan, v: unknown): void {
  try {
    if (f.shape === Shape.Single) {
      w.uint32(f.key);
      encodeValue(w, f, v);
    } else if (f.shape === Shape.Repeated) {
      if (!Array.isArray(v)) encodeFail(`expected an array, got ${jsonType(v)}`);
      for (let i = 0; i < v.length; i++) {
        w.uint32(f.key);
        try {
          encodeValue(w, f, v[i]);
        } catch (err) {
          throw err instanceof ProtobufError ? err.within(`[${i}]`) : err;
        }
      }
    } else {
      if (typeof v !== "object" || Array.isArray(v)) encodeFail(`expected an object, got ${jsonType(v)}`);
      encodeMap(w, f, v as JsonObject);
    }
  } catch (err) {
    throw err instanceof ProtobufError ? err.within(f.name) : err;
  }
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** Go sorts map keys by their UTF-8 bytes; UTF-16 order differs only around astral characters. */
function compareUtf8(a: string, b: string): number {
  const ca = [...a].map((c) => c.codePointAt(0)!);
  const cb = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) if (ca[i] !== cb[i]) return ca[i]! - cb[i]!;
  return ca.length - cb.length;
}

function encodeMap(w: Writer, f: FieldPlan, map: JsonObject): void {
  const keys = Object.keys(map);
  if (keys.length > 1) {
    keys.sort();
    if (keys.some((k) => SURROGATE.test(k))) keys.sort(compareUtf8);
  }
  const valueKey = 2 * 8 + wireTypeOf(f.kind);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    w.uint32(f.key);
    const mark = w.fork();
    w.uint32(0x0a);
    w.string(k);
    // Go writes the value even when empty; a JSON null is Go's zero value.
    w.uint32(valueKey);
    try {
      encodeValue(w, f, map[k]);
    } catch (err) {
      throw err instanceof ProtobufError ? err.within(`[${JSON.stringify(k)}]`) : err;
    }
    w.join(mark);
  }
}

/** Writes one value (after its key); null is the kind's zero value, as Go reads a JSON null into a slice or map. */
function encodeValue(w: Writer, f: FieldPlan, v: unknown): void {
  switch (f.kind) {
    case Kind.String:
      if (typeof v === "string") w.string(v);
      else if (v === null || v === undefined) w.uint32(0);
      else encodeFail(`expected a string, got ${jsonType(v)}`);
      return;
    case Kind.Bytes:
      if (typeof v === "string") w.bytes(Buffer.from(v, "base64"));
      else if (v === null || v === undefined) w.uint32(0);
      else encodeFail(`expected a base64 string, got ${jsonType(v)}`);
      return;
    case Kind.Bool:
      if (typeof v === "boolean") w.uint32(v ? 1 : 0);
      else if (v === null || v === undefined) w.uint32(0);
      else encodeFail(`expected a boolean, got ${jsonType(v)}`);
      return;
    case Kind.Int32:
      if (typeof v === "number" && Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX) w.int32(v);
      else if (v === null || v === undefined) w.uint32(0);
      else encodeFail(`expected a 32-bit integer, got ${typeof v === "number" ? v : jsonType(v)}`);
      return;
    case Kind.Int64:
      if (typeof v === "number" && Number.isInteger(v) && v >= INT64_MIN && v < INT64_END) w.int64(v);
      else if (v === null || v === undefined) w.uint32(0);
      else encodeFail(`expected a 64-bit integer, got ${typeof v === "number" ? v : jsonType(v)}`);
      return;
    case Kind.Double:
      if (typeof v === "number") w.double(v);
      else if (v === null || v === undefined) w.double(0);
      else encodeFail(`expected a number, got ${jsonType(v)}`);
      return;
    case Kind.Message: {
      const mark = w.fork();
      if (typeof v === "object" && v !== null && !Array.isArray(v)) encodeBody(w, v as JsonObject, f.message!);
      else if (v !== null && v !== undefined) encodeFail(`expected an object, got ${jsonType(v)}`);
      w.join(mark);
      return;
    }
    case Kind.Quantity: {
      // message Quantity { optional string string = 1; } — Go always writes the string.
      const mark = w.fork();
      if (typeof v === "string" || typeof v === "number") {
        w.uint32(0x0a);
        w.string(String(v));
      } else if (v !== null && v !== undefined) encodeFail(`expected a quantity string, got ${jsonType(v)}`);
      w.join(mark);
      return;
    }
    case Kind.Time:
    case Kind.MicroTime: {
      // Timestamp { int64 seconds = 1; int32 nanos = 2; }: both always written by Go; Time drops the
      // fraction (ProtoTime), MicroTime keeps microseconds. Go writes nothing inside for the zero time.
      const mark = w.fork();
      if (typeof v === "string") {
        const ts = parseRfc3339(v);
        if (ts === undefined) encodeFail(`${JSON.stringify(v)} is not an RFC 3339 time`);
        w.uint32(0x08);
        w.int64(ts.seconds);
        w.uint32(0x10);
        w.int32(f.kind === Kind.Time ? 0 : ts.nanos - (ts.nanos % 1000));
      } else if (v !== null && v !== undefined) encodeFail(`expected an RFC 3339 time string, got ${jsonType(v)}`);
      w.join(mark);
      return;
    }
    case Kind.IntOrString: {
      // IntOrString { int64 type = 1; int32 intVal = 2; string strVal = 3; }, all three always written.
      const mark = w.fork();
      if (typeof v === "string") {
        w.uint32(0x08);
        w.uint32(1);
        w.uint32(0x10);
        w.uint32(0);
        w.uint32(0x1a);
        w.string(v);
      } else if (typeof v === "number" && Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX) {
        w.uint32(0x08);
        w.uint32(0);
        w.uint32(0x10);
        w.int32(v);
        w.uint32(0x1a);
        w.uint32(0);
      } else if (v !== null && v !== undefined) encodeFail(`expected an integer or a string, got ${typeof v === "number" ? v : jsonType(v)}`);
      w.join(mark);
      return;
    }
    case Kind.Json: {
      // RawExtension { bytes raw = 1; } and FieldsV1 { bytes Raw = 1; }: the JSON text of the value.
      const mark = w.fork();
      if (v !== null && v !== undefined) {
        w.uint32(0x0a);
        w.string(JSON.stringify(v));
      }
      w.join(mark);
      return;
    }
  }
}
