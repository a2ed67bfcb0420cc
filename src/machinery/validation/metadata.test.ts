import { test } from "node:test";
import assert from "node:assert/strict";
import { TOTAL_ANNOTATION_SIZE_LIMIT_B, annotationsSize, validateAnnotations, validateLabels } from "./metadata.js";
import { formatFieldError } from "../field-errors.js";

test("validateLabels reports keys and values under metadata.labels", () => {
  assert.deepEqual(validateLabels(undefined), []);
  assert.deepEqual(validateLabels({ app: "web", "orch.io/role": "" }), []);
  const errs = validateLabels({ "-bad": "ok", good: "-bad" }).map(formatFieldError);
  assert.equal(errs.length, 2);
  assert.match(errs[0]!, /^metadata\.labels: Invalid value: "-bad": name part must consist of/);
  assert.match(errs[1]!, /^metadata\.labels: Invalid value: "-bad": a valid label must be an empty string/);
});

test("validateAnnotations: keys case-insensitive, values free, 256 KiB total", () => {
  assert.deepEqual(validateAnnotations({ "Example.COM/Note": "anything goes: {}" }), []);
  assert.equal(validateAnnotations({ "a b": "x" }).length, 1);
  const big = { a: "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT_B - 1) };
  assert.equal(annotationsSize(big), TOTAL_ANNOTATION_SIZE_LIMIT_B);
  assert.deepEqual(validateAnnotations(big), []);
  const tooBig = { a: "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT_B) };
  assert.deepEqual(validateAnnotations(tooBig).map(formatFieldError), ["metadata.annotations: Too long: may not be more than 262144 bytes"]);
  assert.equal(annotationsSize({ "é": "é" }), 4);
});
