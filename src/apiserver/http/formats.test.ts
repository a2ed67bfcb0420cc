// Round-trip property test through the server's own encoders and body
// decoders: random valid objects of every built-in kind, written as JSON,
// YAML, CBOR and Protobuf and read back, come back identical. Objects are
// first reduced to what Protobuf can carry (the codec's documented contract),
// so all four formats must then agree exactly.

import { test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { namingFor } from "../../machinery/naming.js";
import { ApiRegistry } from "../api-registry.js";
import { expectedAfterRoundTrip, ObjectGenerator } from "../../machinery/codec/protobuf/testing.js";
import { decodeObjectBody } from "./decode-body.js";
import { encodeValue } from "./respond.js";
import type { Format } from "../../machinery/negotiation.js";

const registry = new ApiRegistry(builtinModules(), namingFor());
const decoding = { cbor: true, schemas: registry.schemas, lookupType: (apiVersion: string, kind: string) => registry.schemaTypeOf(apiVersion, kind) };
const CONTENT_TYPES: Record<Format, string> = {
  json: "application/json",
  yaml: "application/yaml",
  cbor: "application/cbor",
  protobuf: "application/vnd.kubernetes.protobuf",
};
const PER_KIND = 10;

test("every built-in kind and its list: JSON, YAML, CBOR and Protobuf give back the object", () => {
  let n = 0;
  for (const def of registry.resources) {
    const apiVersion = def.group === "" ? def.versions[0]! : `${def.group}/${def.versions[0]}`;
    const gen = new ObjectGenerator(registry.schemas, 500 + n);
    for (let i = 0; i < PER_KIND; i++) {
      const cases: Array<[string, object]> = [[def.schema, { apiVersion, kind: def.kind, ...expectedAfterRoundTrip(registry.schemas, def.schema, gen.object(def.schema)) }]];
      // Create-only kinds (the reviews) have no list.
      if (def.verbs === undefined || def.verbs.includes("list")) {
        cases.push([`${def.schema}List`, { apiVersion, kind: `${def.kind}List`, ...expectedAfterRoundTrip(registry.schemas, `${def.schema}List`, gen.object(`${def.schema}List`)) }]);
      }
      for (const [typeName, obj] of cases) {
        // A kind without a Protobuf form (protobuf: false, e.g. CustomResourceDefinition) round-trips the other three.
        for (const format of def.protobuf === false ? (["json", "yaml", "cbor"] as const) : (["json", "yaml", "cbor", "protobuf"] as const)) {
          const bytes = Buffer.from(encodeValue(obj, format, typeName, registry.schemas));
          const back = decodeObjectBody(CONTENT_TYPES[format], bytes, decoding).value;
          assert.deepStrictEqual(back, obj, `${typeName} #${i} via ${format}`);
        }
        n++;
      }
    }
  }
  assert.ok(n >= registry.resources.length * PER_KIND);
});
