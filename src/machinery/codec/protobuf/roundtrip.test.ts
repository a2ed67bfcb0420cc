// JSON → Protobuf → JSON for random objects of every registered type (seeded, so
// a failure reproduces): the result is what Protobuf can carry of the input
// (testing.ts, expectedAfterRoundTrip), and encoding it again gives the same bytes.

import { test } from "node:test";
import assert from "node:assert/strict";
import { ProtobufCodec } from "./message.js";
import { builtinRegistry, expectedAfterRoundTrip, ObjectGenerator, toHex } from "./testing.js";
import { decodeEnvelope, encodeEnvelope } from "./envelope.js";
import { builtinModules } from "../../../api/index.js";
import { namingFor } from "../../naming.js";

const registry = builtinRegistry();
const codec = new ProtobufCodec(registry);
const PER_TYPE = 25;

test("every registered type: random objects round-trip to what Protobuf carries, and re-encode identically", () => {
  let count = 0;
  let bytes = 0;
  for (const def of registry.all()) {
    const gen = new ObjectGenerator(registry, 1000 + count);
    for (let i = 0; i < PER_TYPE; i++) {
      const obj = gen.object(def.name);
      const encoded = codec.encode(obj, def.name);
      const decoded = codec.decode(encoded, def.name);
      const expected = expectedAfterRoundTrip(registry, def.name, obj);
      assert.deepStrictEqual(decoded, expected, `${def.name} #${i}`);
      assert.equal(toHex(codec.encode(decoded, def.name)), toHex(codec.encode(expected, def.name)), `${def.name} #${i} re-encode`);
      count++;
      bytes += encoded.length;
    }
  }
  assert.ok(count > 100 * PER_TYPE, `only ${count} objects`);
  assert.ok(bytes > 0);
});

test("every served kind and its list round-trip through the envelope", () => {
  const naming = namingFor();
  // The create-only reviews are left out: never stored or listed, their handlers read their own bodies.
  const kinds = builtinModules().flatMap((m) => m.resources(naming)).filter((r) => r.verbs === undefined || r.verbs.includes("list"));
  const byGvk = new Map<string, string>();
  for (const r of kinds)
    for (const v of r.versions) {
      const apiVersion = r.group === "" ? v : `${r.group}/${v}`;
      byGvk.set(`${apiVersion}/${r.kind}`, r.schema);
      byGvk.set(`${apiVersion}/${r.kind}List`, `${r.schema}List`);
    }
  const lookup = (apiVersion: string, kind: string) => byGvk.get(`${apiVersion}/${kind}`);
  let n = 0;
  for (const r of kinds) {
    const apiVersion = r.group === "" ? r.versions[0]! : `${r.group}/${r.versions[0]}`;
    const gen = new ObjectGenerator(registry, 77 + n++);
    for (let i = 0; i < 10; i++) {
      const obj = { apiVersion, kind: r.kind, ...gen.object(r.schema) };
      const decoded = decodeEnvelope(encodeEnvelope(obj, r.schema, registry), registry, lookup);
      assert.deepStrictEqual(decoded, { apiVersion, kind: r.kind, ...expectedAfterRoundTrip(registry, r.schema, obj) }, `${r.kind} #${i}`);
      const list = { apiVersion, kind: `${r.kind}List`, ...gen.object(`${r.schema}List`) };
      const decodedList = decodeEnvelope(encodeEnvelope(list, `${r.schema}List`, registry), registry, lookup);
      assert.deepStrictEqual(decodedList, { apiVersion, kind: `${r.kind}List`, ...expectedAfterRoundTrip(registry, `${r.schema}List`, list) });
    }
  }
  assert.ok(n >= 10, `only ${n} kinds`);
});

test("the schemas compile: no field number used twice, no embedded struct on a field's number", () => {
  for (const def of registry.all()) codec.precompile(def.name);
});
