// Cost limits of validation rules (upstream's numbers and messages), with a
// cost model of our own: @bufbuild/cel has no cost estimator, so rules are
// priced here over their parsed AST. The model is conservative and simple:
//   - every node (constant, identifier, field selection, call) costs 1;
//   - string work (contains, startsWith, endsWith, matches, equality,
//     concatenation, ...) costs a tenth of the string's length, and a regular
//     expression also the tenth of its pattern's length as a factor;
//   - list equality and `in` cost the list's size;
//   - a comprehension (all, exists, map, filter, ...) costs its range plus
//     its size times its step;
// where a size is the schema's bound (maxLength, maxItems, maxProperties)
// when estimating a definition, and the value's own when evaluating an
// object. An unbounded string or list is as large as the largest request
// (3 MiB) allows, as upstream assumes. A rule nested in lists or maps is
// multiplied by how many times it can run (the product of their bounds).
// Limits, as upstream: 10^7 per rule and 10^8 per schema when a definition
// is written; 10^6 per evaluation and 10^7 per object when one is validated.

import type { Expr } from "@bufbuild/cel-spec/cel/expr/syntax_pb.js";
import { isObject } from "./json-schema.js";
import type { JSONSchemaProps } from "./types.js";

/** Upstream's StaticEstimatedCostLimit: one rule's estimated cost. */
export const STATIC_RULE_LIMIT = 10_000_000;
/** Upstream's StaticEstimatedCRDCostLimit: every rule of a schema together. */
export const STATIC_SCHEMA_LIMIT = 100_000_000;
/** Upstream's PerCallLimit: one evaluation of one rule. */
export const PER_CALL_LIMIT = 1_000_000;
/** Upstream's RuntimeCELCostBudget: every evaluation while validating one object. */
export const RUNTIME_BUDGET = 10_000_000;

/** The largest request body: what bounds an unbounded string or list. */
const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

/** What the cost model needs of a value: its size, and the shapes of its parts. */
export interface Shape {
  /** Characters of a string, items of a list, entries of a map; 1 otherwise. */
  size(): number;
  field(name: string): Shape;
  /** A list's items or a map's values (the largest of them, for a value). */
  element(): Shape;
}

const SCALAR: Shape = { size: () => 1, field: () => SCALAR, element: () => SCALAR };

/** The bound a schema declares, as upstream estimates it. */
export function schemaShape(schema: JSONSchemaProps | undefined): Shape {
  if (schema === undefined || !isObject(schema as unknown)) return SCALAR;
  return {
    size: () => declaredSize(schema),
    field: (name) => schemaShape(schema.properties?.[name] ?? (isObject(schema.additionalProperties as unknown) ? (schema.additionalProperties as JSONSchemaProps) : undefined)),
    element: () => schemaShape(Array.isArray(schema.items) ? undefined : schema.items ?? (isObject(schema.additionalProperties as unknown) ? (schema.additionalProperties as JSONSchemaProps) : undefined)),
  };
}

function declaredSize(schema: JSONSchemaProps): number {
  switch (schema.type) {
    case "string":
      return schema.maxLength ?? MAX_REQUEST_BYTES - 2;
    case "array":
      return schema.maxItems ?? Math.floor(MAX_REQUEST_BYTES / (minBytes(Array.isArray(schema.items) ? undefined : schema.items) + 1));
    case "object":
      if (schema.properties !== undefined && schema.additionalProperties === undefined) return Object.keys(schema.properties).length || 1;
      return schema.maxProperties ?? Math.floor(MAX_REQUEST_BYTES / (minBytes(isObject(schema.additionalProperties as unknown) ? (schema.additionalProperties as JSONSchemaProps) : undefined) + 4));
    default:
      return schema["x-kubernetes-int-or-string"] ? (schema.maxLength ?? MAX_REQUEST_BYTES - 2) : 1;
  }
}

/** The fewest bytes a value of the schema takes in JSON. */
function minBytes(schema: JSONSchemaProps | undefined): number {
  switch (schema?.type) {
    case "string":
      return 2 + (schema.minLength ?? 0);
    case "array":
    case "object":
      return 2;
    case "boolean":
      return 4;
    default:
      return 1;
  }
}

/** The sizes of an actual value. */
export function valueShape(value: unknown): Shape {
  if (typeof value === "string") return { size: () => value.length, field: () => SCALAR, element: () => SCALAR };
  if (Array.isArray(value)) return { size: () => value.length, field: () => SCALAR, element: () => valueShape(largest(value)) };
  if (isObject(value)) {
    const values = Object.values(value);
    return { size: () => values.length, field: (name) => valueShape(value[name]), element: () => valueShape(largest(values)) };
  }
  return SCALAR;
}

function largest(values: readonly unknown[]): unknown {
  let best: unknown;
  let bestSize = -1;
  for (const v of values) {
    const n = typeof v === "string" ? v.length : JSON.stringify(v ?? null).length;
    if (n > bestSize) [best, bestSize] = [v, n];
  }
  return best;
}

const STRING_FUNCTIONS = new Set(["contains", "startsWith", "endsWith", "lowerAscii", "upperAscii", "trim", "replace", "split", "indexOf", "lastIndexOf", "substring", "charAt", "join", "format", "quote", "reverse", "_+_", "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "string", "bytes"]);

/**
 * The cost of `expr` with identifiers bound to shapes (self, oldSelf), by
 * the model in this file's header.
 */
export function exprCost(expr: Expr | undefined, scope: ReadonlyMap<string, Shape>): number {
  return walk(expr, scope).cost;
}

interface Priced {
  cost: number;
  shape: Shape;
}

function walk(expr: Expr | undefined, scope: ReadonlyMap<string, Shape>): Priced {
  const kind = expr?.exprKind;
  switch (kind?.case) {
    case "constExpr": {
      const c = kind.value.constantKind;
      const text = c.case === "stringValue" ? c.value : undefined;
      return { cost: 1, shape: text === undefined ? SCALAR : valueShape(text) };
    }
    case "identExpr":
      return { cost: 1, shape: scope.get(kind.value.name) ?? SCALAR };
    case "selectExpr": {
      const operand = walk(kind.value.operand, scope);
      return { cost: operand.cost + 1, shape: operand.shape.field(kind.value.field) };
    }
    case "listExpr": {
      const items = kind.value.elements.map((e) => walk(e, scope));
      return { cost: 1 + items.reduce((n, p) => n + p.cost, 0), shape: { size: () => items.length, field: () => SCALAR, element: () => items[0]?.shape ?? SCALAR } };
    }
    case "structExpr":
      return { cost: 1 + kind.value.entries.reduce((n, e) => n + walk(e.value, scope).cost + (e.keyKind.case === "mapKey" ? walk(e.keyKind.value, scope).cost : 0), 0), shape: SCALAR };
    case "callExpr": {
      const call = kind.value;
      const target = call.target === undefined ? undefined : walk(call.target, scope);
      const args = call.args.map((a) => walk(a, scope));
      const operands = [...(target ? [target] : []), ...args];
      let cost = 1 + operands.reduce((n, p) => n + p.cost, 0);
      const sizes = operands.map((p) => p.shape.size());
      const fn = call.function;
      let shape: Shape = SCALAR;
      if (fn === "matches") cost += Math.ceil(0.1 * (sizes[0] ?? 1)) * Math.max(1, Math.ceil(0.1 * (sizes[1] ?? 1)));
      else if (fn === "@in") cost += sizes[1] ?? 1;
      else if (fn === "_[_]") shape = operands[0]?.shape.element() ?? SCALAR;
      else if (STRING_FUNCTIONS.has(fn)) {
        cost += Math.ceil(0.1 * sizes.reduce((n, s) => n + s, 0));
        if (fn === "_+_") {
          const total = sizes.reduce((n, s) => n + s, 0);
          shape = { size: () => total, field: () => SCALAR, element: () => operands[0]?.shape.element() ?? SCALAR };
        }
      }
      return { cost, shape };
    }
    case "comprehensionExpr": {
      const c = kind.value;
      const range = walk(c.iterRange, scope);
      const inner = new Map(scope);
      inner.set(c.iterVar, range.shape.element());
      if (c.iterVar2) inner.set(c.iterVar2, range.shape.element());
      inner.set(c.accuVar, SCALAR);
      const step = walk(c.loopCondition, inner).cost + walk(c.loopStep, inner).cost + 1;
      return { cost: range.cost + walk(c.accuInit, scope).cost + range.shape.size() * step + walk(c.result, inner).cost, shape: SCALAR };
    }
    default:
      return { cost: 1, shape: SCALAR };
  }
}

/** Upstream's wording of a cost over its limit (`rules`: the schema total's "rule(s)"). */
export function costMessage(costName: string, cost: number, limit: number, rules = false): string {
  const factor = cost / limit;
  const text = factor > 100 ? "more than 100x" : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${text} (try simplifying the ${rules ? "rule(s)" : "rule"}, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
