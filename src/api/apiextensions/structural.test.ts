// CRD schemas as tables: upstream's structural rules and their messages.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { formatFieldError } from "../../machinery/index.js";
import { validateSchema } from "./structural.js";

const P = "spec.versions[0].schema.openAPIV3Schema";
const check = (schema: unknown, statusEnabled = false) => validateSchema(schema, P, { statusEnabled }).map(formatFieldError);

describe("structural schema rules", () => {
  const cases: [string, unknown, string[], boolean?][] = [
    ["a well-formed schema", { type: "object", properties: { spec: { type: "object", properties: { a: { type: "string", default: "x" } } } } }, []],
    ["types everywhere", { type: "object", properties: { spec: { properties: { a: { type: "string" } } } } }, [`${P}.properties[spec].type: Required value: must not be empty for specified object fields`]],
    ["array items need a type", { type: "object", properties: { l: { type: "array", items: {} } } }, [`${P}.properties[l].items.type: Required value: must not be empty for specified array items`]],
    ["arrays need items", { type: "object", properties: { l: { type: "array" } } }, [`${P}.properties[l].items: Required value: must be specified`]],
    ["not both properties and additionalProperties", { type: "object", properties: { m: { type: "object", properties: { a: { type: "string" } }, additionalProperties: { type: "string" } } } }, [`${P}.properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`]],
    ["the root is an object", { type: "string" }, [`${P}.type: Invalid value: "string": must be object at the root`]],
    ["unknown types", { type: "object", properties: { a: { type: "date" } } }, [`${P}.properties[a].type: Unsupported value: "date": supported values: "array", "boolean", "integer", "number", "object", "string"`]],
    ["type null", { type: "object", properties: { a: { type: "null" } } }, [`${P}.properties[a].type: Forbidden: type cannot be set to null, use nullable as an alternative`]],
    ["$ref", { type: "object", properties: { a: { type: "string", $ref: "#/x" } } }, [`${P}.properties[a].$ref: Forbidden: $ref is not supported`]],
    ["uniqueItems", { type: "object", properties: { l: { type: "array", items: { type: "string" }, uniqueItems: true } } }, [`${P}.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`]],
    ["metadata: only name and generateName", { type: "object", properties: { metadata: { type: "object", properties: { labels: { type: "object" } } } } }, [`${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`]],
    ["metadata name restrictions are fine", { type: "object", properties: { metadata: { type: "object", properties: { name: { type: "string", maxLength: 10 } } } } }, []],
    ["nullable root", { type: "object", nullable: true }, [`${P}.nullable: Forbidden: nullable cannot be true at the root`]],
    ["value validations only inside anyOf", { type: "object", properties: { a: { type: "string", anyOf: [{ type: "string" }] } } }, [`${P}.properties[a].anyOf[0].type: Forbidden: must be empty to be structural`]],
    ["int-or-string's anyOf of integer and string", { type: "object", properties: { p: { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }], pattern: "^.*" }, q: { "x-kubernetes-int-or-string": true, allOf: [{ anyOf: [{ type: "integer" }, { type: "string" }] }, { pattern: "^a" }] } } }, []],
    ["a field named metadata below the root", { type: "object", properties: { rules: { type: "array", items: { type: "object", properties: { metadata: { type: "object", properties: { annotations: { type: "object", additionalProperties: { type: "string" } } } } } } } } }, []],
    ["metadata inside a value validation", { type: "object", properties: { a: { type: "object", properties: { metadata: { type: "object" } }, anyOf: [{ properties: { metadata: { required: ["x"] } } }] } } }, [`${P}.properties[a].anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context`]],
    ["int-or-string stands for a type", { type: "object", properties: { p: { "x-kubernetes-int-or-string": true } } }, []],
    ["int-or-string with preserve-unknown-fields", { type: "object", properties: { p: { "x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true } } }, [`${P}.properties[p].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`]],
    ["preserve-unknown-fields false", { type: "object", "x-kubernetes-preserve-unknown-fields": false }, [`${P}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`]],
    ["embedded resources are objects with properties", { type: "object", properties: { r: { type: "object", "x-kubernetes-embedded-resource": true } } }, [`${P}.properties[r].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`]],
    ["list-type on a non-array", { type: "object", properties: { s: { type: "string", "x-kubernetes-list-type": "set" } } }, [`${P}.properties[s].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified`]],
    ["list-type map needs keys", { type: "object", properties: { l: { type: "array", "x-kubernetes-list-type": "map", items: { type: "object", properties: { n: { type: "string" } } } } } }, [`${P}.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`]],
    ["list map keys are required or defaulted", { type: "object", properties: { l: { type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["n"], items: { type: "object", properties: { n: { type: "string" } } } } } }, [`${P}.properties[l].items.properties[n].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`]],
    ["defaults validate against their schema", { type: "object", properties: { n: { type: "integer", default: "x" } } }, [`${P}.properties[n].default: Invalid value: "string": . in body must be of type integer: "string"`]],
    ["defaults must be pruned", { type: "object", properties: { o: { type: "object", properties: { a: { type: "string" } }, default: { b: 1 } } } }, [`${P}.properties[o].default: Invalid value: {"b":1}: must not have unknown fields`]],
    ["a pattern that does not compile", { type: "object", properties: { s: { type: "string", pattern: "(" } } }, [`${P}.properties[s].pattern: Invalid value: "(": must be a valid regular expression, but isn't: error parsing regexp: (`]],
    ["only some root fields with status", { type: "object", properties: {}, minProperties: 1 }, [`${P}: Invalid value: "": only [description type required properties x-kubernetes-preserve-unknown-fields x-kubernetes-validations] fields are allowed at the root of the schema if the status subresource is enabled`], true],
  ];
  for (const [name, schema, want, status] of cases) test(name, () => assert.deepEqual(check(schema, status), want));
});
