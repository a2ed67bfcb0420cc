import { test } from "node:test";
import assert from "node:assert/strict";
import { spliceResourceVersion } from "./stored-json.js";

const enc = new TextEncoder();

test("splicing the resourceVersion gives exactly what JSON.stringify would write", () => {
  const stored = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", labels: { a: "b" } }, spec: { template: { metadata: { name: "t" } } } };
  const out = spliceResourceVersion(enc.encode(JSON.stringify(stored)), "apps/v1", "Deployment", 42)!;
  const expected = { apiVersion: "apps/v1", kind: "Deployment", metadata: { resourceVersion: "42", name: "web", labels: { a: "b" } }, spec: stored.spec };
  assert.equal(out.toString(), JSON.stringify(expected));
  const bare = spliceResourceVersion(enc.encode('{"apiVersion":"v1","kind":"Pod","metadata":{}}'), "v1", "Pod", 7)!;
  assert.equal(bare.toString(), '{"apiVersion":"v1","kind":"Pod","metadata":{"resourceVersion":"7"}}');
});

test("bytes in another layout are left to the serializer", () => {
  const other = enc.encode('{"kind":"Pod","spec":{"template":{"metadata":{}}},"apiVersion":"v1","metadata":{}}');
  assert.equal(spliceResourceVersion(other, "v1", "Pod", 1), undefined);
  assert.equal(spliceResourceVersion(enc.encode('{"apiVersion":"v1","kind":"Pod","metadata":{}}'), "v2", "Pod", 1), undefined);
});
