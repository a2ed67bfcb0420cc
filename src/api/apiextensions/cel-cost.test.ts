// Cost limits of validation rules: estimated costs refuse a definition
// (per rule, per schema, multiplied by enclosing lists), and at run time a
// rule over its per-call limit does not run and an object whose rules spend
// the budget stops being checked, each with upstream's message.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { parse } from "@bufbuild/cel";
import { formatFieldError } from "../../machinery/index.js";
import { checkRules, evaluateRules } from "./cel.js";
import { costMessage, exprCost, schemaShape, valueShape } from "./cel-cost.js";
import type { JSONSchemaProps } from "./types.js";

const cost = (rule: string, shape = valueShape(undefined)) => exprCost(parse(rule).expr, new Map([["self", shape]]));
const messages = (errs: ReturnType<typeof checkRules>) => errs.map(formatFieldError);
const P = "spec.versions[0].schema.openAPIV3Schema";

describe("CEL cost: estimates when a definition is written", () => {
  test("the model: strings by a tenth of their length, comprehensions by their size", () => {
    assert.equal(cost("self == 'a'", valueShape("a")), 4);
    const list = valueShape(Array.from({ length: 100 }, () => "x".repeat(50)));
    const c = cost("self.all(x, x.startsWith('a'))", list);
    assert.ok(c > 100 * 5 && c < 100 * 20, String(c));
    assert.ok(cost("self.all(x, self.all(y, x == y))", list) > 100 * c / 10, "nested comprehensions multiply");
  });

  test("a rule over an unbounded list of unbounded strings is refused; bounds make it fit", () => {
    const unbounded: JSONSchemaProps = { type: "object", properties: { names: { type: "array", items: { type: "string" }, "x-kubernetes-validations": [{ rule: "self.all(x, x.startsWith('a'))" }] } } };
    assert.deepEqual(messages(checkRules(unbounded, P)), [
      `${P}.properties[names].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
      `${P}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule(s), or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    ]);
    const bounded: JSONSchemaProps = { type: "object", properties: { names: { type: "array", maxItems: 100, items: { type: "string", maxLength: 64 }, "x-kubernetes-validations": [{ rule: "self.all(x, x.startsWith('a'))" }] } } };
    assert.deepEqual(checkRules(bounded, P), []);
  });

  test("a rule inside list items counts once per possible item; messageExpression is priced too", () => {
    const item: JSONSchemaProps = { type: "string", maxLength: 1_000_000, "x-kubernetes-validations": [{ rule: "self.contains('z')", messageExpression: "self + ' lacks z'" }] };
    assert.deepEqual(checkRules({ type: "object", properties: { one: item } }, P), []);
    const errs = messages(checkRules({ type: "object", properties: { many: { type: "array", maxItems: 1000, items: item } } }, P));
    assert.ok(errs.includes(`${P}.properties[many].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 10.0x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`), errs.join("\n"));
    assert.ok(errs.some((e) => e.startsWith(`${P}.properties[many].items.x-kubernetes-validations[0].messageExpression: Forbidden: estimated messageExpression cost exceeds budget`)), errs.join("\n"));
  });

  test("rules that fit one by one can exceed the schema's total", () => {
    const rule = { rule: "self.contains('z')" };
    const properties = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}`, { type: "string", maxLength: 90_000_000, "x-kubernetes-validations": [rule] } as JSONSchemaProps]));
    const errs = messages(checkRules({ type: "object", properties }, P));
    assert.equal(errs.length, 1, errs.join("\n"));
    assert.match(errs[0]!, new RegExp(`^${P.replace(/[[\].]/g, "\\$&")}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1\\.0\\d{5}x \\(try simplifying the rule\\(s\\), or adding`));
  });

  test("factors are printed as upstream prints them", () => {
    assert.match(costMessage("estimated rule cost", 12, 10), /by factor of 1\.200000x/);
    assert.match(costMessage("estimated rule cost", 181, 10), /by factor of 18\.1x/);
    assert.match(costMessage("estimated rule cost", 1001, 10), /by factor of more than 100x/);
    assert.ok(schemaShape({ type: "array", items: { type: "string" } }).size() > 1_000_000, "unbounded lists are as long as the largest request allows");
  });
});

describe("CEL cost: limits when an object is validated", () => {
  test("a rule over the per-call limit does not run and says so", () => {
    const schema: JSONSchemaProps = { type: "object", properties: { l: { type: "array", maxItems: 10000, items: { type: "string", maxLength: 1000 }, "x-kubernetes-validations": [{ rule: "self.all(x, x.contains('z'))" }] } } };
    assert.deepEqual(checkRules(schema, P), [], "fits when estimated");
    const small = { l: ["z"] };
    assert.deepEqual(evaluateRules(schema, small, undefined), []);
    const big = { l: Array.from({ length: 10000 }, () => "a".repeat(1000)) };
    assert.deepEqual(evaluateRules(schema, big, undefined).map(formatFieldError), [
      `l: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': call cost exceeds limit for rule: self.all(x, x.contains('z'))`,
    ]);
  });

  test("rules that spend the object's budget stop the checking with upstream's message", () => {
    const rules = Array.from({ length: 30 }, () => ({ rule: "self.all(x, self.exists(y, x == y))" }));
    const schema: JSONSchemaProps = { type: "object", properties: { l: { type: "array", maxItems: 300, items: { type: "string", maxLength: 8 }, "x-kubernetes-validations": rules } } };
    assert.deepEqual(checkRules(schema, P), []);
    const errs = evaluateRules(schema, { l: Array.from({ length: 300 }, (_, i) => `s${i}`) }, undefined).map(formatFieldError);
    assert.deepEqual(errs, [`l: Invalid value: "array": validation failed due to running out of cost budget, no further validation rules will be run`]);
  });
});
