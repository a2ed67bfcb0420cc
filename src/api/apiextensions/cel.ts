// Validation rules (`x-kubernetes-validations`) in CEL, with @bufbuild/cel:
// each rule is compiled once per definition and evaluated with `self` bound
// to the value at its schema node and, on updates, `oldSelf` to the stored
// value at the same place (transition rules: a rule that reads oldSelf runs
// only when there is one, unless optionalOldSelf). Failures as upstream:
// `spec: Invalid value: "object": <message>` (or `failed rule: <rule>`),
// messageExpression, reason and fieldPath honoured. Integers are CEL ints,
// `number` fields doubles, objects maps. Cost limits as upstream's, priced by
// ./cel-cost.ts: estimated when a definition is written, actual (over the
// values) before each evaluation, with a budget per object.

import { celEnv, isCelError, parse, plan, type CelEnv } from "@bufbuild/cel";
import type { Expr } from "@bufbuild/cel-spec/cel/expr/syntax_pb.js";
import { strings } from "@bufbuild/cel/ext";
import { field, type FieldError } from "../../machinery/index.js";
import { childPath, isObject, LIST_MAP_KEYS, LIST_TYPE, VALIDATIONS } from "./json-schema.js";
import { costMessage, exprCost, PER_CALL_LIMIT, RUNTIME_BUDGET, schemaShape, STATIC_RULE_LIMIT, STATIC_SCHEMA_LIMIT, valueShape, type Shape } from "./cel-cost.js";
import type { JSONSchemaProps, ValidationRule } from "./types.js";

type Program = (bindings: Record<string, unknown>) => unknown;

interface CompiledRule {
  readonly rule: ValidationRule;
  readonly program: Program;
  readonly message: Program | undefined;
  readonly usesOldSelf: boolean;
  /** The rule's AST, priced before each evaluation (./cel-cost.ts). */
  readonly ast: Expr;
}

let sharedEnv: CelEnv | undefined;
function env(): CelEnv {
  return (sharedEnv ??= celEnv({ funcs: strings }));
}

/** Compile one expression; throws with the parser's message. */
function compile(expr: string): Program {
  return compileWithAst(expr).program;
}

function compileWithAst(expr: string): { program: Program; ast: Expr } {
  const parsed = parse(expr);
  const run = plan(env(), parsed) as (ctx?: Record<string, unknown>) => unknown;
  return { program: (bindings) => run(bindings), ast: parsed.expr };
}

/** One CEL expression compiled in the shared environment (admission webhooks' matchConditions); throws with the parser's message. */
export function compileExpression(expr: string): Program {
  return compile(expr);
}

/** A JSON value as CEL sees it without a schema (whole numbers are ints, objects maps). */
export function celValue(v: unknown): unknown {
  return toCel(undefined, v);
}

const compiled = new WeakMap<JSONSchemaProps, CompiledRule[]>();

function rulesOf(schema: JSONSchemaProps): CompiledRule[] {
  let rules = compiled.get(schema);
  if (rules === undefined) {
    rules = (schema[VALIDATIONS] ?? []).map((rule) => ({
      rule,
      ...compileWithAst(rule.rule ?? "true"),
      message: rule.messageExpression ? compile(rule.messageExpression) : undefined,
      usesOldSelf: /\boldSelf\b/.test(rule.rule ?? ""),
    }));
    compiled.set(schema, rules);
  }
  return rules;
}

/**
 * Compile errors and estimated costs of every rule in a schema, for the
 * CRD's validation (`<path>.x-kubernetes-validations[i].rule`): a rule's
 * cost times how often it can run (the bounds of the lists and maps around
 * it) over 10^7 is refused, and so is a schema whose rules total over 10^8.
 */
export function checkRules(schema: JSONSchemaProps, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  const visit = (s: JSONSchemaProps, p: string, cardinality: number) => {
    if (!isObject(s as unknown)) return;
    const shape = schemaShape(s);
    (s[VALIDATIONS] ?? []).forEach((rule, i) => {
      for (const [key, expr] of [["rule", rule.rule], ["messageExpression", rule.messageExpression]] as const) {
        if (typeof expr !== "string" || expr.trim() === "") continue;
        const at = `${p}.x-kubernetes-validations[${i}].${key}`;
        let ast: Expr;
        try {
          ast = compileWithAst(expr).ast;
        } catch (err) {
          errs.push(field.invalid(at, rule, `compilation failed: ERROR: ${err instanceof Error ? err.message : String(err)}`));
          continue;
        }
        const cost = exprCost(ast, bindingShapes(shape)) * cardinality;
        if (cost > STATIC_RULE_LIMIT) errs.push(field.forbidden(at, costMessage(`estimated ${key} cost`, cost, STATIC_RULE_LIMIT)));
        total += cost;
      }
    });
    for (const [k, prop] of Object.entries(s.properties ?? {})) visit(prop, `${p}.properties[${k}]`, cardinality);
    if (isObject(s.items as unknown)) visit(s.items as JSONSchemaProps, `${p}.items`, cardinality * shape.size());
    if (isObject(s.additionalProperties as unknown)) visit(s.additionalProperties as JSONSchemaProps, `${p}.additionalProperties`, cardinality * shape.size());
  };
  visit(schema, path, 1);
  if (total > STATIC_SCHEMA_LIMIT) {
    errs.push(field.forbidden(path, costMessage("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", total, STATIC_SCHEMA_LIMIT, true)));
  }
  return errs;
}

function bindingShapes(shape: Shape, old: Shape = shape): Map<string, Shape> {
  return new Map([["self", shape], ["oldSelf", old]]);
}

/** Does the schema carry any rule? (Objects of kinds without rules skip the walk.) */
export function hasRules(schema: JSONSchemaProps): boolean {
  const visit = (s: JSONSchemaProps | undefined): boolean =>
    s !== undefined && isObject(s as unknown) && ((s[VALIDATIONS]?.length ?? 0) > 0 || Object.values(s.properties ?? {}).some(visit) || visit(Array.isArray(s.items) ? undefined : s.items) || (isObject(s.additionalProperties as unknown) && visit(s.additionalProperties as JSONSchemaProps)));
  return visit(schema);
}

/** Evaluate every rule of the schema over `value` (and `old` on updates). */
export function evaluateRules(schema: JSONSchemaProps, value: unknown, old: unknown): FieldError[] {
  const errs: FieldError[] = [];
  walk(schema, value, old, "", errs, { left: RUNTIME_BUDGET });
  return errs;
}

/** What is left of the object's runtime cost budget (negative: spent, nothing more runs). */
interface Budget {
  left: number;
}

function walk(schema: JSONSchemaProps, value: unknown, old: unknown, path: string, errs: FieldError[], budget: Budget): void {
  if (value === undefined || value === null || !isObject(schema as unknown) || budget.left < 0) return;
  for (const r of rulesOf(schema)) {
    evaluate(r, schema, value, old, path, errs, budget);
    if (budget.left < 0) return;
  }
  if (isObject(value)) {
    const oldObj = isObject(old) ? old : undefined;
    for (const [key, prop] of Object.entries(schema.properties ?? {})) {
      if (path === "" && key === "metadata") continue;
      if (key in value) walk(prop, value[key], oldObj?.[key], childPath(path, key), errs, budget);
    }
    if (isObject(schema.additionalProperties as unknown)) {
      for (const [key, v] of Object.entries(value)) walk(schema.additionalProperties as JSONSchemaProps, v, oldObj?.[key], childPath(path, key), errs, budget);
    }
  } else if (Array.isArray(value) && isObject(schema.items as unknown)) {
    const items = schema.items as JSONSchemaProps;
    // Old items correlate by key in map lists only (as upstream).
    const keys = schema[LIST_TYPE] === "map" ? schema[LIST_MAP_KEYS] ?? [] : undefined;
    const oldList = Array.isArray(old) ? old : [];
    value.forEach((item, i) => {
      const prior = keys === undefined || !isObject(item) ? undefined : oldList.find((o) => isObject(o) && keys.every((k) => o[k] === item[k]));
      walk(items, item, prior, `${path}[${i}]`, errs, budget);
    });
  }
}

function evaluate(r: CompiledRule, schema: JSONSchemaProps, value: unknown, old: unknown, path: string, errs: FieldError[], budget: Budget): void {
  const hasOld = old !== undefined && old !== null;
  if (r.usesOldSelf && !hasOld) return;
  // Priced before it runs (./cel-cost.ts): over the per-call limit it does not run; past the object's budget nothing more does.
  const cost = exprCost(r.ast, bindingShapes(valueShape(value), valueShape(old)));
  const typeOf = schema.type ?? (schema["x-kubernetes-int-or-string"] ? "string" : "object");
  if (cost > PER_CALL_LIMIT) {
    errs.push(field.invalid(path, typeOf, `'operation cancelled: actual cost limit exceeded': call cost exceeds limit for rule: ${r.rule.message?.trim() || r.rule.rule}`));
    return;
  }
  budget.left -= cost;
  if (budget.left < 0) {
    errs.push(field.invalid(path, typeOf, "validation failed due to running out of cost budget, no further validation rules will be run"));
    return;
  }
  const bindings: Record<string, unknown> = { self: toCel(schema, value) };
  if (hasOld) bindings["oldSelf"] = toCel(schema, old);
  const typeName = schema.type ?? (schema["x-kubernetes-int-or-string"] ? "string" : "object");
  const at = r.rule.fieldPath ? path + (r.rule.fieldPath.startsWith(".") ? r.rule.fieldPath : `.${r.rule.fieldPath}`) : path;
  let result: unknown;
  try {
    result = r.program(bindings);
  } catch (err) {
    result = err;
  }
  if (isCelError(result) || result instanceof Error) {
    errs.push(field.invalid(at, typeName, `${(result as Error).message} evaluating rule: ${r.rule.rule}`));
    return;
  }
  if (result === true) return;
  let message = r.rule.message || `failed rule: ${r.rule.rule}`;
  if (r.message !== undefined) {
    try {
      const m = r.message(bindings);
      if (typeof m === "string" && m.trim() !== "" && !/[\r\n]/.test(m)) message = m;
    } catch {
      // upstream falls back to message (or the rule) when messageExpression fails
    }
  }
  switch (r.rule.reason) {
    case "FieldValueForbidden":
      errs.push(field.forbidden(at, message));
      break;
    case "FieldValueRequired":
      errs.push(field.required(at, message));
      break;
    case "FieldValueDuplicate":
      errs.push({ ...field.duplicate(at, typeName), detail: message });
      break;
    default:
      errs.push(field.invalid(at, typeName, message));
  }
}

/** A JSON value as CEL sees it, typed by its schema. */
function toCel(schema: JSONSchemaProps | undefined, v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = schema !== undefined && isObject(schema.items as unknown) ? (schema.items as JSONSchemaProps) : undefined;
    return v.map((x) => toCel(items, x));
  }
  if (isObject(v)) {
    const additional = schema !== undefined && isObject(schema.additionalProperties as unknown) ? (schema.additionalProperties as JSONSchemaProps) : undefined;
    return new Map(Object.entries(v).map(([k, x]) => [k, toCel(schema?.properties?.[k] ?? additional, x)]));
  }
  if (typeof v === "number") return schema?.type === "number" || !Number.isInteger(v) ? v : BigInt(v);
  return v;
}
