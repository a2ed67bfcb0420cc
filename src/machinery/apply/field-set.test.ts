import { test } from "node:test";
import assert from "node:assert/strict";
import { FieldSet, fieldElement as f, keyElement, valueElement, indexElement, formatPath, parsePathElement, serializePathElement } from "./field-set.js";

// The first golden string of upstream's TestSerializeV1GoldenData (fieldpath/serialize_test.go):
// elements sorted fields < keys < values < indexes, numbers < strings < bools.
const GOLDEN =
  '{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\\"name\\":\\"first\\"}":{},"k:{\\"name\\":\\"second\\"}":{},' +
  '"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{},"v:1":{},"v:2":{},"v:3":{},' +
  '"v:\\"aa\\"":{},"v:\\"ab\\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}';

test("fieldsV1 round-trips upstream's golden ordering byte for byte", () => {
  const set = FieldSet.fromJSON(JSON.parse(GOLDEN));
  assert.equal(set.size(), 20);
  assert.equal(JSON.stringify(set.toJSON()), GOLDEN);
});

test("elements are sorted on output whatever the insertion order", () => {
  const set = new FieldSet()
    .insert([indexElement(2)])
    .insert([valueElement(true)])
    .insert([valueElement("aa")])
    .insert([valueElement(3)])
    .insert([keyElement([["protocol", "udp"], ["port", 443]])])
    .insert([f("aab")])
    .insert([f("aaa")]);
  assert.equal(
    JSON.stringify(set.toJSON()),
    '{"f:aaa":{},"f:aab":{},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{},"v:3":{},"v:\\"aa\\"":{},"v:true":{},"i:2":{}}',
  );
});

test("a member with children serializes '.' after its children", () => {
  const item = keyElement([["name", "main"]]);
  const set = FieldSet.of(
    [f("metadata"), f("labels"), f("app")],
    [f("spec"), f("containers"), item],
    [f("spec"), f("containers"), item, f("image")],
  );
  assert.equal(
    JSON.stringify(set.toJSON()),
    '{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"main\\"}":{"f:image":{},".":{}}}}}',
  );
  const back = FieldSet.fromJSON(set.toJSON());
  assert.ok(back.equals(set));
  assert.ok(back.has([f("spec"), f("containers"), item]));
  assert.ok(!back.has([f("spec"), f("containers")]));
});

test("'.' may come first on input (kubectl's sorted YAML) and unknown prefixes are dropped", () => {
  const set = FieldSet.fromJSON({ "f:labels": { ".": {}, "f:a": {} }, "r:future": {} });
  assert.ok(set.has([f("labels")]));
  assert.ok(set.has([f("labels"), f("a")]));
  assert.equal(JSON.stringify(set.toJSON()), '{"f:labels":{"f:a":{},".":{}}}');
});

test("union, difference and intersection work on exact paths", () => {
  const a = FieldSet.of([f("a")], [f("a"), f("x")], [f("b"), f("y")]);
  const b = FieldSet.of([f("a"), f("x")], [f("c")]);
  assert.equal(a.union(b).toString(), '{"f:a":{"f:x":{},".":{}},"f:b":{"f:y":{}},"f:c":{}}');
  // Removing .a.x keeps .a (a member of its own).
  assert.equal(a.difference(b).toString(), '{"f:a":{},"f:b":{"f:y":{}}}');
  assert.equal(a.intersection(b).toString(), '{"f:a":{"f:x":{}}}');
  assert.ok(a.difference(a).isEmpty());
  // Inputs are untouched.
  assert.equal(a.toString(), '{"f:a":{"f:x":{},".":{}},"f:b":{"f:y":{}}}');
});

test("path elements parse and serialize; keys are sorted by name", () => {
  for (const s of ['f:spec', 'k:{"containerPort":80,"protocol":"TCP"}', 'v:"finalizer.example.com/x"', "v:42", "i:3"]) {
    assert.equal(serializePathElement(parsePathElement(s)!), s);
  }
  assert.equal(serializePathElement(parsePathElement('k:{"protocol":"TCP","containerPort":80}')!), 'k:{"containerPort":80,"protocol":"TCP"}');
  assert.equal(parsePathElement("x:whatever"), undefined);
  // Go's encoder escapes HTML characters.
  assert.equal(serializePathElement(valueElement("<a&b>")), 'v:"\\u003ca\\u0026b\\u003e"');
});

test("paths print as upstream's Path.String", () => {
  assert.equal(formatPath([f("spec"), f("replicas")]), ".spec.replicas");
  assert.equal(
    formatPath([f("spec"), f("ports"), keyElement([["port", 80], ["protocol", "TCP"]]), f("name")]),
    '.spec.ports[port=80,protocol="TCP"].name',
  );
  assert.equal(formatPath([f("metadata"), f("finalizers"), valueElement("x")]), '.metadata.finalizers[="x"]');
  assert.equal(formatPath([f("args"), indexElement(0)]), ".args[0]");
});
