// A message type's field table, compiled once from the schemas (no .proto
// files): tags, wire types, JSON names and sub-tables, so that encode.ts and
// decode.ts only walk tables. Go's embedded structs become groups: fields that
// travel in a sub-message but live in the parent's JSON object.

import { isWellKnown, WELL_KNOWN, type Schema, type SchemaRegistry } from "../../schema.js";
import { keepsZero } from "./presence.js";
import { WIRE_FIXED64, WIRE_LEN, WIRE_VARINT, type Writer } from "./wire.js";

/** A JSON object as the API layers hold it. */
export type JsonObject = Record<string, unknown>;

export const enum Kind {
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

export const enum Shape {
  Single,
  Repeated,
  Map,
}

export interface FieldPlan {
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
export interface GroupPlan {
  readonly group: true;
  readonly tag: number;
  readonly key: number;
  readonly fields: FieldPlan[];
  readonly byTag: Array<FieldPlan | undefined>;
}

export interface MessagePlan {
  readonly name: string;
  /** slot → JSON name, in declaration order (embedded fields where they were declared). */
  readonly names: string[];
  /** What to write, in field-number order. */
  readonly items: Array<FieldPlan | GroupPlan>;
  readonly byTag: Array<FieldPlan | GroupPlan | undefined>;
  /** The type's encoder, compiled on first use (compileEncoder). */
  encoder: Encoder | undefined;
}

export type Encoder = (w: Writer, obj: JsonObject) => void;

export function wireTypeOf(kind: Kind): number {
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
export function compile(registry: SchemaRegistry, name: string, plans: Map<string, MessagePlan>): MessagePlan {
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
