// Validation rules in CEL: self, oldSelf transition rules, messages,
// messageExpression, reasons, fieldPath, list correlation, compile errors.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { formatFieldError } from "../../machinery/index.js";
import { checkRules, evaluateRules } from "./cel.js";
import type { JSONSchemaProps } from "./types.js";

const schema: JSONSchemaProps = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      "x-kubernetes-validations": [
        { rule: "self.replicas <= self.maxReplicas", message: "replicas must not exceed maxReplicas" },
        { rule: "self.name.startsWith('app-')", messageExpression: "'name ' + self.name + ' must start with app-'" },
        { rule: "self.ratio < 1.5" },
        { rule: "!has(self.forbidden)", reason: "FieldValueForbidden", fieldPath: ".forbidden", message: "may not be set" },
      ],
      properties: {
        replicas: { type: "integer" },
        maxReplicas: { type: "integer" },
        name: { type: "string" },
        ratio: { type: "number" },
        forbidden: { type: "string" },
        immutable: { type: "string", "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "is immutable" }] },
        ports: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          items: {
            type: "object",
            required: ["name"],
            properties: { name: { type: "string" }, port: { type: "integer", "x-kubernetes-validations": [{ rule: "self >= oldSelf", message: "may only grow" }] } },
          },
        },
      },
    },
  },
};

const ok = { spec: { replicas: 1, maxReplicas: 2, name: "app-x", ratio: 0.5, immutable: "a", ports: [{ name: "http", port: 80 }] } };
const run = (value: unknown, old?: unknown) => evaluateRules(schema, value, old).map(formatFieldError);

describe("x-kubernetes-validations", () => {
  test("a valid object passes", () => assert.deepEqual(run(ok), []));
  test("message, messageExpression, default message, reason and fieldPath", () => {
    assert.deepEqual(run({ spec: { ...ok.spec, replicas: 3, name: "web", ratio: 2, forbidden: "x" } }), [
      'spec: Invalid value: "object": replicas must not exceed maxReplicas',
      'spec: Invalid value: "object": name web must start with app-',
      'spec: Invalid value: "object": failed rule: self.ratio < 1.5',
      "spec.forbidden: Forbidden: may not be set",
    ]);
  });
  test("transition rules run on updates only, with list items correlated by key", () => {
    const changed = { spec: { ...ok.spec, immutable: "b", ports: [{ name: "http", port: 79 }, { name: "new", port: 1 }] } };
    assert.deepEqual(run(changed), [], "no oldSelf on create");
    assert.deepEqual(run(changed, ok), ['spec.immutable: Invalid value: "string": is immutable', 'spec.ports[0].port: Invalid value: "integer": may only grow']);
  });
  test("runtime errors are reported with the rule", () => {
    const errs = run({ spec: { replicas: 1, name: "app-a", ratio: 0 } });
    assert.equal(errs.length, 1);
    assert.match(errs[0]!, /^spec: Invalid value: "object": .*maxReplicas.* evaluating rule: self.replicas <= self.maxReplicas$/);
  });
  test("rules that do not compile are refused on the definition", () => {
    const errs = checkRules({ type: "object", "x-kubernetes-validations": [{ rule: "self.x +" }] }, "root").map(formatFieldError);
    assert.equal(errs.length, 1);
    assert.match(errs[0]!, /^root.x-kubernetes-validations\[0\].rule: Invalid value: .*compilation failed: ERROR: /);
  });
});
