import { test } from "node:test";
import assert from "node:assert/strict";
import { aggregateFieldErrors, field, fieldErrorBody, formatFieldError, omitValue } from "./field-errors.js";
import type { FieldError } from "./field-errors.js";

const rows: Array<[FieldError, string]> = [
  [field.invalid("spec.replicas", -1, "must be greater than or equal to 0"), "spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
  [field.required("metadata.name", "name or generateName is required"), "metadata.name: Required value: name or generateName is required"],
  [field.required("spec.containers"), "spec.containers: Required value"],
  [field.immutable("spec.selector", { matchLabels: { app: "web" } }), `spec.selector: Invalid value: {"matchLabels":{"app":"web"}}: field is immutable`],
  [field.invalid("metadata.name", "X", "bad"), `metadata.name: Invalid value: "X": bad`],
  [field.invalid("spec.paused", true, "nope"), "spec.paused: Invalid value: true: nope"],
  [field.invalid("spec.ratio", 0.5, "nope"), "spec.ratio: Invalid value: 0.5: nope"],
  [field.invalid("spec.small", 1.5e-7, "nope"), "spec.small: Invalid value: 1.5e-07: nope"],
  [field.invalid("spec.x", undefined, "missing"), "spec.x: Invalid value: null: missing"],
  [field.invalid("spec.x", null, "missing"), "spec.x: Invalid value: null: missing"],
  [field.invalid("spec.args", ["a<b", "c"], "bad"), `spec.args: Invalid value: ["a\\u003cb","c"]: bad`],
  [field.invalid("spec.x", omitValue, "hidden"), "spec.x: Invalid value: hidden"],
  [field.notSupported("spec.restartPolicy", "Sometimes", ["Always", "OnFailure", "Never"]), `spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`],
  [field.notSupported("spec.x", "y", []), `spec.x: Unsupported value: "y"`],
  [field.duplicate("spec.ports[1].port", 80), "spec.ports[1].port: Duplicate value: 80"],
  [field.notFound("spec.volumes[0]", "data"), `spec.volumes[0]: Not found: "data"`],
  [field.forbidden("spec.nodeName", "may not be set on create"), "spec.nodeName: Forbidden: may not be set on create"],
  [field.tooLong("metadata.annotations", 262144), "metadata.annotations: Too long: may not be more than 262144 bytes"],
  [field.tooLong("x", 1), "x: Too long: may not be more than 1 byte"],
  [field.tooMany("spec.items", 5, 3), "spec.items: Too many: 5: must have at most 3 items"],
  [field.tooMany("spec.items", -1, 3), "spec.items: Too many: must have at most 3 items"],
  [field.internal("spec", new Error("oops")), "spec: Internal error: oops"],
  [field.typeInvalid("spec.replicas", "three", "must be an integer"), `spec.replicas: Invalid value: "three": must be an integer`],
];

for (const [err, text] of rows) {
  test(`field error: ${text}`, () => {
    assert.equal(formatFieldError(err), text);
    assert.equal(fieldErrorBody(err), text.slice(err.field.length + 2));
  });
}

test("aggregate: empty, single bare, several bracketed, duplicates dropped", () => {
  const a = field.required("a");
  const b = field.required("b");
  assert.equal(aggregateFieldErrors([]), "");
  assert.equal(aggregateFieldErrors([a]), "a: Required value");
  assert.equal(aggregateFieldErrors([a, a]), "a: Required value");
  assert.equal(aggregateFieldErrors([a, b, a]), "[a: Required value, b: Required value]");
});
