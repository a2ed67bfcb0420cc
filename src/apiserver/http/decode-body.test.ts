import { test } from "node:test";
import assert from "node:assert/strict";
import { isApiError } from "../../machinery/index.js";
import { decodeObjectBody, decodePatchBody, mediaType } from "./decode-body.js";

test("object bodies: JSON (also without a Content-Type) and YAML, with duplicate keys", () => {
  assert.deepEqual(decodeObjectBody(undefined, Buffer.from('{"a":1,"a":2}')), { value: { a: 2 }, duplicates: ["a"] });
  assert.deepEqual(decodeObjectBody("application/json; charset=utf-8", Buffer.from("{}")).value, {});
  const yaml = decodeObjectBody("application/yaml", Buffer.from("a: 1\nb: {c: yes}\na: 3\n"));
  assert.deepEqual(yaml.value, { a: 3, b: { c: true } });
  assert.deepEqual(yaml.duplicates, [{ path: "a", key: "a", line: 3 }]);
});

test("patch bodies: the type comes from the Content-Type; apply takes YAML or JSON", () => {
  assert.equal(decodePatchBody("application/json-patch+json", Buffer.from("[]")).patchType, "json");
  assert.equal(decodePatchBody("application/merge-patch+json", Buffer.from("{}")).patchType, "merge");
  assert.equal(decodePatchBody("Application/Strategic-Merge-Patch+JSON", Buffer.from("{}")).patchType, "strategic");
  const fromYaml = decodePatchBody("application/apply-patch+yaml", Buffer.from("kind: Pod\nmetadata: {name: p}\n"));
  assert.deepEqual([fromYaml.patchType, fromYaml.value], ["apply", { kind: "Pod", metadata: { name: "p" } }]);
  const fromJson = decodePatchBody("application/apply-patch+yaml", Buffer.from('  {"kind":"Pod","kind":"Pod"}'));
  assert.deepEqual(fromJson.duplicates, ["kind"]);
});

test("unknown or unserved media types are a 415 naming the accepted ones", () => {
  for (const [decode, type] of [
    [() => decodeObjectBody("text/plain", Buffer.from("")), "text/plain"],
    [() => decodeObjectBody("application/merge-patch+json", Buffer.from("{}")), "a patch type on POST"],
    [() => decodePatchBody("application/json", Buffer.from("{}")), "plain JSON on PATCH"],
    [() => decodePatchBody("application/apply-patch+cbor", Buffer.from([0xa0])), "CBOR without the CBOR gate"],
  ] as const) {
    assert.throws(decode, (err: unknown) => isApiError(err, "UnsupportedMediaType") && /accepted media types include/.test(err.message), type);
  }
  assert.equal(mediaType(" Application/YAML ; q=1"), "application/yaml");
});

test("syntax errors are 400s", () => {
  assert.throws(() => decodeObjectBody("application/json", Buffer.from("{")), (err: unknown) => isApiError(err, "BadRequest"));
  assert.throws(() => decodePatchBody("application/apply-patch+yaml", Buffer.from("a: [")), (err: unknown) => isApiError(err, "BadRequest"));
});
