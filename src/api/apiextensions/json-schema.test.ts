// The schema engine as tables: validation messages (kube-openapi's, as
// upstream reports them for custom resources), pruning and defaulting.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { formatFieldError } from "../../machinery/index.js";
import { applyDefaults, prune, validateValue } from "./json-schema.js";
import type { JSONSchemaProps } from "./types.js";

const obj = (properties: Record<string, JSONSchemaProps>, extra: JSONSchemaProps = {}): JSONSchemaProps => ({ type: "object", properties, ...extra });

describe("validateValue", () => {
  const cases: [string, JSONSchemaProps, unknown, string[]][] = [
    ["integer given a string", obj({ n: { type: "integer" } }), { n: "x" }, ['n: Invalid value: "string": n in body must be of type integer: "string"']],
    ["integer given a float", obj({ n: { type: "integer" } }), { n: 1.5 }, ['n: Invalid value: "number": n in body must be of type integer: "number"']],
    ["number accepts integers", obj({ n: { type: "number" } }), { n: 2 }, []],
    ["null without nullable", obj({ s: { type: "string" } }), { s: null }, ['s: Invalid value: "null": s in body must be of type string: "null"']],
    ["null with nullable", obj({ s: { type: "string", nullable: true } }), { s: null }, []],
    ["enum", obj({ e: { type: "string", enum: ["a", "b"] } }), { e: "c" }, ['e: Unsupported value: "c": supported values: "a", "b"']],
    ["pattern", obj({ p: { type: "string", pattern: "^a+$" } }), { p: "b" }, ["p: Invalid value: \"b\": p in body should match '^a+$'"]],
    ["maxLength counts characters", obj({ s: { type: "string", maxLength: 2 } }), { s: "ééé" }, ['s: Invalid value: "ééé": s in body should be at most 2 chars long']],
    ["minLength", obj({ s: { type: "string", minLength: 2 } }), { s: "a" }, ['s: Invalid value: "a": s in body should be at least 2 chars long']],
    ["maximum", obj({ n: { type: "integer", maximum: 3 } }), { n: 4 }, ["n: Invalid value: 4: n in body should be less than or equal to 3"]],
    ["exclusiveMinimum", obj({ n: { type: "integer", minimum: 3, exclusiveMinimum: true } }), { n: 3 }, ["n: Invalid value: 3: n in body should be greater than 3"]],
    ["multipleOf", obj({ n: { type: "integer", multipleOf: 5 } }), { n: 7 }, ["n: Invalid value: 7: n in body should be a multiple of 5"]],
    ["maxItems", obj({ l: { type: "array", items: { type: "string" }, maxItems: 1 } }), { l: ["a", "b"] }, ["l: Invalid value: 2: l in body should have at most 1 items"]],
    ["minItems", obj({ l: { type: "array", items: { type: "string" }, minItems: 1 } }), { l: [] }, ["l: Invalid value: 0: l in body should have at least 1 items"]],
    ["items are checked with their index", obj({ l: { type: "array", items: { type: "integer" } } }), { l: [1, "x"] }, ['l[1]: Invalid value: "string": l[1] in body must be of type integer: "string"']],
    ["required", obj({ spec: obj({ a: { type: "string" } }, { required: ["a"] }) }), { spec: {} }, ["spec.a: Required value"]],
    ["maxProperties", obj({ m: { type: "object", additionalProperties: { type: "string" }, maxProperties: 1 } }), { m: { a: "1", b: "2" } }, ["m: Invalid value: 2: m in body should have at most 1 properties"]],
    ["additionalProperties values", obj({ m: { type: "object", additionalProperties: { type: "integer" } } }), { m: { a: "x" } }, ['m.a: Invalid value: "string": m.a in body must be of type integer: "string"']],
    ["int-or-string accepts both", obj({ p: { "x-kubernetes-int-or-string": true } }), { p: "http" }, []],
    ["int-or-string refuses booleans", obj({ p: { "x-kubernetes-int-or-string": true } }), { p: true }, ['p: Invalid value: "boolean": p in body must be of type integer,string: "boolean"']],
    ["format date-time", obj({ t: { type: "string", format: "date-time" } }), { t: "yesterday" }, ['t: Invalid value: "yesterday": t in body must be of type date-time: "yesterday"']],
    ["format ipv4", obj({ ip: { type: "string", format: "ipv4" } }), { ip: "10.0.0.1" }, []],
    ["unknown formats are annotations", obj({ x: { type: "string", format: "color" } }), { x: "blue" }, []],
    ["list-type set is unique", obj({ l: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" } }), { l: ["a", "a"] }, ['l[1]: Duplicate value: "a"']],
    ["list-type map keys are unique", obj({ l: { type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], items: obj({ name: { type: "string" } }, { required: ["name"] }) } }), { l: [{ name: "a" }, { name: "a" }] }, ['l[1]: Duplicate value: {"name":"a"}']],
    ["embedded resources need apiVersion and kind", obj({ r: { type: "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true } }), { r: {} }, ["r.apiVersion: Required value: must not be empty", "r.kind: Required value: must not be empty"]],
    ["anyOf", obj({ v: { type: "string", anyOf: [{ pattern: "^a" }, { pattern: "^b" }] } }), { v: "c" }, ['v: Invalid value: "": "v" must validate at least one schema (anyOf)']],
    ["not", obj({ v: { type: "string", not: { enum: ["x"] } } }), { v: "x" }, ['v: Invalid value: "": "v" must not validate the schema (not)']],
    ["the root's metadata: only name restrictions apply", obj({ metadata: { type: "object", properties: { name: { type: "string", maxLength: 2 } } } }), { metadata: { name: "long", labels: {} } }, ['metadata.name: Invalid value: "long": metadata.name in body should be at most 2 chars long']],
  ];
  for (const [name, schema, value, want] of cases) {
    test(name, () => assert.deepEqual(validateValue(schema, value).map(formatFieldError), want));
  }
});

describe("prune", () => {
  test("drops unknown fields, keeps apiVersion, kind and metadata at the root", () => {
    const schema = obj({ spec: obj({ a: { type: "string" }, list: { type: "array", items: obj({ x: { type: "integer" } }) } }) });
    const value = { apiVersion: "v", kind: "K", metadata: { name: "n" }, spec: { a: "1", b: 2, list: [{ x: 1, y: 2 }] }, other: true };
    assert.deepEqual(prune(schema, value), ["spec.b", "spec.list[0].y", "other"]);
    assert.deepEqual(value, { apiVersion: "v", kind: "K", metadata: { name: "n" }, spec: { a: "1", list: [{ x: 1 }] } });
  });
  test("preserve-unknown-fields keeps, but still prunes the properties it names", () => {
    const schema = obj({ spec: obj({ known: obj({ a: { type: "string" } }) }, { "x-kubernetes-preserve-unknown-fields": true }) });
    const value = { spec: { free: { any: 1 }, known: { a: "x", b: 1 } } };
    assert.deepEqual(prune(schema, value), ["spec.known.b"]);
    assert.deepEqual(value, { spec: { free: { any: 1 }, known: { a: "x" } } });
  });
  test("an object without properties keeps nothing; additionalProperties keeps every key", () => {
    const schema = obj({ empty: { type: "object" }, map: { type: "object", additionalProperties: { type: "string" } } });
    const value = { empty: { a: 1 }, map: { a: "1", b: "2" } };
    assert.deepEqual(prune(schema, value), ["empty.a"]);
    assert.deepEqual(value, { empty: {}, map: { a: "1", b: "2" } });
  });
  test("embedded resources keep apiVersion, kind and ObjectMeta's fields", () => {
    const schema = obj({ template: { type: "object", "x-kubernetes-embedded-resource": true, properties: { spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } } });
    const value = { template: { apiVersion: "v1", kind: "Pod", metadata: { name: "p", junk: 1 }, spec: { x: 1 }, status: {} } };
    assert.deepEqual(prune(schema, value), ["template.metadata.junk", "template.status"]);
  });
});

describe("applyDefaults", () => {
  test("absent fields get defaults, nested defaults apply inside defaulted objects, null becomes the default unless nullable", () => {
    const schema = obj({
      spec: obj({
        replicas: { type: "integer", default: 1 },
        strategy: obj({ type: { type: "string", default: "Rolling" }, max: { type: "integer", default: 2 } }, { default: {} }),
        keep: { type: "string", nullable: true, default: "x" },
        reset: { type: "string", default: "d" },
        items: { type: "array", items: obj({ weight: { type: "integer", default: 5 } }) },
      }),
    });
    const value = { spec: { keep: null, reset: null, items: [{}, { weight: 1 }] } };
    applyDefaults(schema, value);
    assert.deepEqual(value, { spec: { keep: null, reset: "d", replicas: 1, strategy: { type: "Rolling", max: 2 }, items: [{ weight: 5 }, { weight: 1 }] } });
  });
});
