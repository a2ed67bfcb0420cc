// The seed's media-type table row by row (seed 000, "Media types and
// negotiation"), q values and wildcards, the 406 and 415 cases, with the CBOR
// gate on and off and for kinds with and without a Protobuf form.

import { test } from "node:test";
import assert from "node:assert/strict";
import { isApiError } from "./index.js";
import { negotiate, parseAccept, type NegotiateOptions } from "./negotiation.js";
import { decodeObjectBody, decodePatchBody, type BodyDecoding } from "../apiserver/http/decode-body.js";
import { encodeCbor } from "./codec/cbor/index.js";
import { encodeEnvelope } from "./codec/protobuf/index.js";
import { builtinRegistry } from "./codec/protobuf/testing.js";

const ON: NegotiateOptions = { list: false, cbor: true, protobuf: true };
const OFF: NegotiateOptions = { list: false, cbor: false, protobuf: true };
const KUBECTL_GET = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

function notAcceptable(accept: string, options: NegotiateOptions): void {
  assert.throws(() => negotiate(accept, options), (e: unknown) => isApiError(e, "NotAcceptable") && e.status.code === 406, accept);
}

test("every row of the seed's media-type table", () => {
  const rows: Array<[string, NegotiateOptions, string, string, string]> = [
    // accept, options, format, as, content type
    ["application/json", ON, "json", "object", "application/json"],
    ["application/yaml", ON, "yaml", "object", "application/yaml"],
    ["application/vnd.orch.protobuf", ON, "protobuf", "object", "application/vnd.orch.protobuf"],
    ["application/cbor", ON, "cbor", "object", "application/cbor"],
    ["application/cbor", { ...ON, watch: true }, "cbor", "object", "application/cbor-seq"],
    ["application/cbor-seq", { ...ON, watch: true }, "cbor", "object", "application/cbor-seq"],
    ["application/json;as=Table;g=meta.orch.io;v=v1", ON, "json", "Table", "application/json;as=Table;g=meta.orch.io;v=v1"],
    ["application/json;as=PartialObjectMetadata;g=meta.orch.io;v=v1", ON, "json", "PartialObjectMetadata", "application/json;as=PartialObjectMetadata;g=meta.orch.io;v=v1"],
    ["application/json;as=PartialObjectMetadataList;g=meta.orch.io;v=v1", { ...ON, list: true }, "json", "PartialObjectMetadataList", "application/json;as=PartialObjectMetadataList;g=meta.orch.io;v=v1"],
  ];
  for (const [accept, options, format, as, contentType] of rows) {
    const rep = negotiate(accept, options);
    assert.deepEqual([rep.format, rep.as, rep.contentType], [format, as, contentType], accept);
  }
});

test("rule 3: Table and metadata-only in YAML, CBOR and Protobuf; upstream's group spelling; Protobuf watch frames", () => {
  const cases: Array<[string, NegotiateOptions, string, string]> = [
    ["application/vnd.orch.protobuf;as=PartialObjectMetadata;g=meta.orch.io;v=v1", ON, "protobuf", "PartialObjectMetadata"],
    ["application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", { ...ON, list: true }, "protobuf", "PartialObjectMetadataList"],
    ["application/vnd.orch.protobuf;as=PartialObjectMetadata;g=meta.orch.io;v=v1", { ...ON, list: true }, "protobuf", "PartialObjectMetadataList"],
    ["application/yaml;as=Table;g=meta.k8s.io;v=v1", ON, "yaml", "Table"],
    ["application/cbor;as=Table;g=meta.orch.io;v=v1", ON, "cbor", "Table"],
    ["application/vnd.orch.protobuf;as=Table;g=meta.orch.io;v=v1", ON, "protobuf", "Table"],
    ["application/json;as=Table;g=meta.k8s.io;v=v1beta1", ON, "json", "Table"],
    ["application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", { ...ON, watch: true }, "protobuf", "PartialObjectMetadata"],
  ];
  for (const [accept, options, format, as] of cases) {
    const rep = negotiate(accept, options);
    assert.deepEqual([rep.format, rep.as], [format, as], accept);
  }
  assert.equal(negotiate("application/vnd.kubernetes.protobuf", { ...ON, watch: true }).contentType, "application/vnd.kubernetes.protobuf;stream=watch");
  assert.equal(negotiate("application/json;as=Table;g=meta.k8s.io;v=v1", ON).group, "meta.k8s.io");
});

test("q values, wildcards, order among equals, and kubectl's get never 406", () => {
  assert.equal(negotiate(undefined, ON).format, "json");
  assert.equal(negotiate("*/*", ON).format, "json");
  assert.equal(negotiate("application/*", ON).format, "json");
  assert.equal(negotiate("application/json;q=0.5, application/yaml", ON).format, "yaml");
  assert.equal(negotiate("application/yaml;q=0, application/json", ON).format, "json");
  assert.equal(negotiate("application/vnd.kubernetes.protobuf, application/json", ON).format, "protobuf");
  assert.equal(negotiate("text/html, application/json;q=0.9", ON).format, "json");
  assert.deepEqual(parseAccept("a/b;q=0.2, c/d, e/f;q=0.2").map((r) => r.type), ["c", "a", "e"]);
  for (const options of [ON, OFF, { ...ON, list: true }, { ...ON, protobuf: false }]) assert.equal(negotiate(KUBECTL_GET, options).as, "Table");
  // A client that lists Protobuf then JSON gets JSON from a kind without Protobuf (rule 2).
  assert.equal(negotiate("application/vnd.kubernetes.protobuf, application/json", { ...ON, protobuf: false }).format, "json");
});

test("406: nothing fits, a target with no fallback, CBOR with the gate off, Protobuf for a kind without it", () => {
  notAcceptable("text/html", ON);
  notAcceptable("application/json;as=Table;g=meta.example.com;v=v1", ON);
  notAcceptable("application/json;as=Table;g=meta.orch.io;v=v2", ON);
  notAcceptable("application/json;as=Widget;g=meta.orch.io;v=v1", ON);
  notAcceptable("application/json;as=PartialObjectMetadataList;g=meta.orch.io;v=v1", ON); // a single object
  notAcceptable("application/cbor", OFF);
  notAcceptable("application/cbor-seq", { ...OFF, watch: true });
  notAcceptable("application/cbor-seq", ON); // not a watch
  notAcceptable("application/vnd.orch.protobuf", { ...ON, protobuf: false });
  // With a fallback, the same requests succeed.
  assert.equal(negotiate("application/cbor, application/json;q=0.9", OFF).format, "json");
  assert.equal(negotiate("application/json;as=Table;g=meta.example.com;v=v1, application/json;q=0.9", ON).as, "object");
  try {
    negotiate("text/html", OFF);
  } catch (err) {
    assert.ok(isApiError(err));
    assert.match(err.message, /only the following media types are accepted: application\/json, application\/yaml, application\/vnd.orch.protobuf$/);
  }
});

test("request bodies: JSON without a Content-Type, YAML, CBOR by gate, Protobuf in both spellings, others 415", () => {
  const schemas = builtinRegistry();
  const on: BodyDecoding = { cbor: true, schemas, lookupType: (v, k) => (v === "v1" ? `io.k8s.api.core.v1.${k}` : undefined) };
  const off: BodyDecoding = { ...on, cbor: false };
  const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { a: "1" } };
  const pb = Buffer.from(encodeEnvelope(cm, "io.k8s.api.core.v1.ConfigMap", schemas));
  assert.deepEqual(decodeObjectBody(undefined, Buffer.from(JSON.stringify(cm)), off).value, cm);
  assert.deepEqual(decodeObjectBody("", Buffer.from(JSON.stringify(cm)), off).value, cm);
  assert.deepEqual(decodeObjectBody("application/yaml", Buffer.from("a: 1\n"), off).value, { a: 1 });
  assert.deepEqual(decodeObjectBody("application/cbor", encodeCbor(cm), on).value, cm);
  assert.deepEqual(decodeObjectBody("application/vnd.kubernetes.protobuf", pb, off).value, cm);
  assert.deepEqual(decodeObjectBody("application/vnd.orch.protobuf", pb, off).value, cm);
  assert.equal(decodePatchBody("application/apply-patch+cbor", encodeCbor(cm), on).patchType, "apply");
  const unsupported = (fn: () => unknown, listsCbor: boolean) =>
    assert.throws(fn, (e: unknown) => isApiError(e, "UnsupportedMediaType") && e.message.includes("application/cbor") === listsCbor && e.message.includes("application/vnd.orch.protobuf"));
  unsupported(() => decodeObjectBody("application/cbor", encodeCbor(cm), off), false);
  unsupported(() => decodeObjectBody("text/plain", Buffer.from("x"), on), true);
  unsupported(() => decodeObjectBody("application/x-www-form-urlencoded", Buffer.from("a=b"), off), false);
  assert.throws(() => decodeObjectBody("application/vnd.kubernetes.protobuf", Buffer.from("{}"), off), (e: unknown) => isApiError(e, "BadRequest") && /expected prefix/.test(e.message));
  assert.throws(() => decodeObjectBody("application/cbor", Buffer.from("a2616101616102", "hex"), on), (e: unknown) => isApiError(e, "BadRequest") && /duplicate map key/.test(e.message));
});
