// JSON objects ⇄ upstream's Protobuf messages, driven by the schemas (no .proto
// files): each type compiles once into a field table (tags, wire types, JSON
// names, sub-tables), and encode/decode walk those tables. Encode writes the
// fields present in the JSON in field-number order; decode keeps zeros only where
// upstream's Go type makes them meaningful (presence.ts) and restores JSON key order.

import { isWellKnown, WELL_KNOWN, type Schema, type SchemaRegistry } from "../../../api/schema.js";
import { keepsZero } from "./presence.js";
import { formatRfc3339, parseRfc3339, ZERO_TIME_SECONDS } from "./time.js";
import { ProtobufError, Reader, WIRE_FIXED64, WIRE_LEN, WIRE_VARINT, Writer } from "./wire.js";

/** A JSON object as the API layers hold it. */
export type JsonObject = Record<string, unknown>;

const enum Kind {
  String,
  Bytes,
  Bool,
  Int32,
  Int64,
  Double,
  Message,
  Quantity,
  Time,
  MicroTime,
  IntOrString,
  /** RawExtension and `any` fields (FieldsV1): a message whose field 1 holds the JSON bytes. */
  Json,
}

const enum Shape {
  Single,
  Repeated,
  Map,
}

interface FieldPlan {
  readonly group: false;
  readonly name: string;
  readonly tag: number;
  /** Field key (tag and wire type) as written before each value. */
  readonly key: number;
  /** Index of the field in the JSON declaration order of the enclosing type. */
  readonly slot: number;
  readonly kind: Kind;
  readonly wireType: number;
  readonly shape: Shape;
  readonly keepZero: boolean;
  readonly ref: string | undefined;
  message: MessagePlan | undefined;
}

/** Go's embedded struct: its fields live in a sub-message at `tag` but in the parent's JSON object. */
interface GroupPlan {
  readonly group: true;
  readonly tag: number;
  readonly key: number;
  readonly fields: FieldPlan[];
  readonly byTag: Array<FieldPlan | undefined>;
}

interface MessagePlan {
  readonly name: string;
  /** slot → JSON name, in declaration order (embedded fields where they were declared). */
  readonly names: string[];
  /** What to write, in field-number order. */
  readonly items: Array<FieldPlan | GroupPlan>;
  readonly byTag: Array<FieldPlan | GroupPlan | undefined>;
  /** The type's encoder, compiled on first use (compileEncoder). */
  encoder: Encoder | undefined;
}

type Encoder = (w: Writer, obj: JsonObject) => void;

function wireTypeOf(kind: Kind): number {
  switch (kind) {
    case Kind.Bool:
    case Kind.Int32:
    case Kind.Int64:
      return WIRE_VARINT;
    case Kind.Double:
      return WIRE_FIXED64;
    default:
      return WIRE_LEN;
  }
}

function kindOf(schema: Schema, where: string): { kind: Kind; ref: string | undefined } {
  switch (schema.type) {
    case "string":
      if (schema.format === "byte") return { kind: Kind.Bytes, ref: undefined };
      if (schema.format === "int-or-string") return { kind: Kind.IntOrString, ref: undefined };
      return { kind: Kind.String, ref: undefined };
    case "integer":
      return { kind: schema.format === "int32" ? Kind.Int32 : Kind.Int64, ref: undefined };
    case "number":
      return { kind: Kind.Double, ref: undefined };
    case "boolean":
      return { kind: Kind.Bool, ref: undefined };
    case "any":
      return { kind: Kind.Json, ref: undefined };
    case "ref":
      if (!isWellKnown(schema.name)) return { kind: Kind.Message, ref: schema.name };
      switch (schema.name) {
        case WELL_KNOWN.quantity:
          return { kind: Kind.Quantity, ref: undefined };
        case WELL_KNOWN.intOrString:
          return { kind: Kind.IntOrString, ref: undefined };
        case WELL_KNOWN.time:
          return { kind: Kind.Time, ref: undefined };
        case WELL_KNOWN.microTime:
          return { kind: Kind.MicroTime, ref: undefined };
        default:
          return { kind: Kind.Json, ref: undefined };
      }
    default:
      throw new Error(`protobuf: ${where}: nested ${schema.type} has no Protobuf form`);
  }
}

/** Compiles `name` and every type it reaches; plans are created before their fields so cycles resolve. */
function compile(registry: SchemaRegistry, name: string, plans: Map<string, MessagePlan>): MessagePlan {
  const existing = plans.get(name);
  if (existing !== undefined) return existing;
  const def = registry.mustGet(name);
  const plan: MessagePlan = { name, names: [], items: [], byTag: [], encoder: undefined };
  plans.set(name, plan);
  const groups = new Map<number, GroupPlan>();
  const fields: FieldPlan[] = [];
  for (const [fieldName, field] of Object.entries(def.fields)) {
    if (field.tag === 0) continue; // JSON only (apiVersion/kind travel in the envelope)
    const where = `${name}.${fieldName}`;
    let shape = Shape.Single;
    let schema = field.schema;
    if (schema.type === "array") [shape, schema] = [Shape.Repeated, schema.items];
    else if (schema.type === "map") [shape, schema] = [Shape.Map, schema.values];
    const { kind, ref } = kindOf(schema, where);
    const wireType = shape === Shape.Map ? WIRE_LEN : wireTypeOf(kind);
    const plan1: FieldPlan = {
      group: false,
      name: fieldName,
      tag: field.tag,
      key: field.tag * 8 + wireType,
      slot: plan.names.length,
      kind,
      wireType,
      shape,
      keepZero: keepsZero(name, fieldName, field.required),
      ref,
      message: undefined,
    };
    plan.names.push(fieldName);
    fields.push(plan1);
    if (field.embeddedIn === undefined) {
      if (plan.byTag[field.tag] !== undefined) throw new Error(`protobuf: ${where}: field number ${field.tag} used twice`);
      plan.byTag[field.tag] = plan1;
      plan.items.push(plan1);
      continue;
    }
    let group = groups.get(field.embeddedIn);
    if (group === undefined) {
      group = { group: true, tag: field.embeddedIn, key: field.embeddedIn * 8 + WIRE_LEN, fields: [], byTag: [] };
      groups.set(field.embeddedIn, group);
    }
    if (group.byTag[field.tag] !== undefined) throw new Error(`protobuf: ${where}: field number ${field.tag} used twice in embedded ${field.embeddedIn}`);
    group.byTag[field.tag] = plan1;
    group.fields.push(plan1);
  }
  for (const group of groups.values()) {
    if (plan.byTag[group.tag] !== undefined) throw new Error(`protobuf: ${name}: field number ${group.tag} is both a field and an embedded struct`);
    plan.byTag[group.tag] = group;
    plan.items.push(group);
    group.fields.sort((a, b) => a.tag - b.tag);
  }
  plan.items.sort((a, b) => a.tag - b.tag);
  for (const f of fields) if (f.ref !== undefined) f.message = compile(registry, f.ref, plans);
  return plan;
}

// ---------------------------------------------------------------- encode

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

function encodeBody(w: Writer, obj: JsonObject, plan: MessagePlan): void {
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

// ---------------------------------------------------------------- decode

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
function decodeMessageBody(r: Reader, plan: MessagePlan, head: JsonObject | undefined): JsonObject {
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

// ---------------------------------------------------------------- the codec

/**
 * Encodes and decodes the types of one schema registry. Tables are compiled
 * on first use of a type; one writer is reused (encoding is synchronous).
 */
export class ProtobufCodec {
  readonly #registry: SchemaRegistry;
  readonly #plans = new Map<string, MessagePlan>();
  #writer = new Writer(4096);

  constructor(registry: SchemaRegistry) {
    this.#registry = registry;
  }

  #plan(typeName: string): MessagePlan {
    return this.#plans.get(typeName) ?? compile(this.#registry, typeName, this.#plans);
  }

  /** Compiles the tables of these types now (and of all they reach), so first requests do not pay for it. */
  precompile(...typeNames: string[]): void {
    for (const name of typeNames) this.#plan(name);
  }

  /** The message bytes of `obj` as type `typeName` (no envelope). Unknown JSON fields are dropped. */
  encode(obj: object, typeName: string): Uint8Array {
    const w = this.#start();
    this.encodeTo(w, obj, typeName);
    return this.#finish(w);
  }

  /** Writes the message body of `obj` into `w` (for the envelope, which frames it). */
  encodeTo(w: Writer, obj: object, typeName: string): void {
    encodeBody(w, obj as JsonObject, this.#plan(typeName));
  }

  /** A fresh start on the shared writer. */
  #start(): Writer {
    const w = this.#writer;
    w.pos = 0;
    return w;
  }

  #finish(w: Writer): Uint8Array {
    const out = w.finish();
    // Do not hold on to the buffer of one huge list for the life of the process.
    if (w.buf.length > 4 << 20) this.#writer = new Writer(4096);
    return out;
  }

  /** Runs `write` with the shared writer and returns the bytes written. */
  write(write: (w: Writer) => void): Uint8Array {
    const w = this.#start();
    write(w);
    return this.#finish(w);
  }

  /** The JSON object for message bytes of type `typeName`; `head` (apiVersion, kind) becomes its first keys. */
  decode(bytes: Uint8Array, typeName: string, head?: JsonObject): JsonObject {
    const plan = this.#plan(typeName);
    return decodeMessageBody(new Reader(bytes), plan, head);
  }

  /** Like decode, for the bytes between `start` and `end` of `bytes` (no copy). */
  decodeRange(bytes: Uint8Array, start: number, end: number, typeName: string, head?: JsonObject): JsonObject {
    const plan = this.#plan(typeName);
    return decodeMessageBody(new Reader(bytes, start, end), plan, head);
  }
}

const codecs = new WeakMap<SchemaRegistry, ProtobufCodec>();

/** The codec of a registry, created once. */
export function codecFor(registry: SchemaRegistry): ProtobufCodec {
  let codec = codecs.get(registry);
  if (codec === undefined) codecs.set(registry, (codec = new ProtobufCodec(registry)));
  return codec;
}

/** Message bytes of `obj` as `typeName`, no envelope. */
export function encodeMessage(obj: object, typeName: string, registry: SchemaRegistry): Uint8Array {
  return codecFor(registry).encode(obj, typeName);
}

/** The JSON object of message bytes of type `typeName`, no envelope. */
export function decodeMessage(bytes: Uint8Array, typeName: string, registry: SchemaRegistry): JsonObject {
  return codecFor(registry).decode(bytes, typeName);
}
