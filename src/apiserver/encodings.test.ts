// Representations end to end through the in-process API server over real
// storage (seed 000, "Media types and negotiation", "Protobuf envelope",
// "Table representation", "Metadata-only representation"): every format for
// get, list, watch, writes and errors; gates CBORServingAndStorage and
// APIResponseCompression on and off; Protobuf never for custom resources.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:http2";
import { request as httpsRequest } from "node:https";
import { gunzipSync } from "node:zlib";
import { builtinModules } from "../api/index.js";
import { namingFor } from "../machinery/naming.js";
import { decodeCbor, decodeCborSequence, encodeCbor } from "../machinery/codec/cbor/index.js";
import { decodeEnvelope, decodeWatchStream, encodeEnvelope, hasProtobufMagic } from "../machinery/codec/protobuf/index.js";
import { parseYamlBody } from "../machinery/decode/index.js";
import { ApiRegistry } from "./api-registry.js";
import { startTestServer, type TestServer } from "./testing/harness.js";
import { sampleApi } from "./testing/sample-api.js";

const registry = new ApiRegistry(builtinModules(), namingFor());
const schemas = registry.schemas;
const lookup = (apiVersion: string, kind: string) => registry.schemaTypeOf(apiVersion, kind);
const PB = "application/vnd.kubernetes.protobuf";
const CM_PATH = "/api/v1/namespaces/default/configmaps";
const configMap = (name: string, data: Record<string, string> = { a: "1" }) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data });

/** Complete length-prefixed frames in a Protobuf watch's bytes so far. */
function frames(b: Buffer): number {
  let n = 0;
  for (let at = 0; at + 4 <= b.length && at + 4 + b.readUInt32BE(at) <= b.length; at += 4 + b.readUInt32BE(at)) n++;
  return n;
}

function cborItems(b: Buffer): number {
  try {
    return decodeCborSequence(b).length;
  } catch {
    return 0; // an item is still arriving
  }
}

async function* chunks(bytes: Buffer): AsyncIterable<Uint8Array> {
  yield bytes;
}

/** A watch's raw bytes until `enough` says so (or 5 s pass). */
function watchBytes(t: TestServer, path: string, accept: string, enough: (bytes: Buffer) => boolean): Promise<{ contentType: string; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: "127.0.0.1", port: t.server.port, ca: t.server.credentials.caCertPem, path, headers: { authorization: `Bearer ${t.server.credentials.adminToken}`, accept } },
      (res) => {
        const chunks: Buffer[] = [];
        const timer = setTimeout(() => finish(), 5000);
        const finish = () => {
          clearTimeout(timer);
          req.destroy();
          resolve({ contentType: String(res.headers["content-type"]), bytes: Buffer.concat(chunks) });
        };
        res.on("data", (c: Buffer) => {
          chunks.push(c);
          if (enough(Buffer.concat(chunks))) finish();
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("representations (built-in kinds, CBOR gate on)", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: builtinModules(), gates: { CBORServingAndStorage: "true" } });
    for (const name of ["c1", "c2", "c3"]) assert.equal((await t.request("POST", CM_PATH, { body: configMap(name, { k: name }) })).status, 201);
  });
  after(() => t?.close());

  test("get in JSON, YAML, CBOR and Protobuf (both spellings) is the same object", async () => {
    const json = (await t.request("GET", `${CM_PATH}/c1`)).json;
    const yaml = await t.request("GET", `${CM_PATH}/c1`, { headers: { accept: "application/yaml" } });
    assert.equal(yaml.headers["content-type"], "application/yaml");
    assert.deepEqual(parseYamlBody(yaml.body).value, json);
    const cbor = await t.request("GET", `${CM_PATH}/c1`, { headers: { accept: "application/cbor" } });
    assert.equal(cbor.headers["content-type"], "application/cbor");
    assert.deepEqual([...cbor.body.subarray(0, 3)], [0xd9, 0xd9, 0xf7], "self-described CBOR");
    assert.deepEqual(decodeCbor(cbor.body), json);
    for (const type of [PB, "application/vnd.orch.protobuf"]) {
      const pb = await t.request("GET", `${CM_PATH}/c1`, { headers: { accept: `${type}, application/json` } });
      assert.equal(pb.headers["content-type"], type);
      assert.ok(hasProtobufMagic(pb.body));
      assert.deepEqual(decodeEnvelope(pb.body, schemas, lookup), json);
    }
  });

  test("lists: Protobuf written item by item equals the whole-list encoding; YAML and CBOR lists", async () => {
    const json = (await t.request("GET", CM_PATH)).json;
    assert.equal(json.items.length, 3);
    const pb = await t.request("GET", CM_PATH, { headers: { accept: PB } });
    // As upstream: items in a Protobuf list carry no apiVersion and kind (the list's type says them).
    const bare = { ...json, items: json.items.map(({ apiVersion: _a, kind: _k, ...rest }: any) => rest) };
    assert.deepEqual(decodeEnvelope(pb.body, schemas, lookup), bare);
    assert.deepEqual(pb.body, Buffer.from(encodeEnvelope(json, "io.k8s.api.core.v1.ConfigMapList", schemas)), "byte for byte");
    assert.deepEqual(parseYamlBody((await t.request("GET", CM_PATH, { headers: { accept: "application/yaml" } })).body).value, json);
    assert.deepEqual(decodeCbor((await t.request("GET", CM_PATH, { headers: { accept: "application/cbor" } })).body), json);
    const pretty = await t.request("GET", `${CM_PATH}?pretty=true`);
    assert.match(pretty.text, /^\{\n {2}"kind": "ConfigMapList"/);
    assert.deepEqual(pretty.json, json);
    // The query's names are decoded: an escaped spelling asks too, and pretty=false does not.
    assert.match((await t.request("GET", `${CM_PATH}?%70retty=1`)).text, /^\{\n {2}"kind"/);
    assert.match((await t.request("GET", `${CM_PATH}?pretty=false`)).text, /^\{"kind"/);
  });

  test("Table and metadata-only in YAML, CBOR and Protobuf, in orch's and upstream's group", async () => {
    const table = decodeCbor((await t.request("GET", CM_PATH, { headers: { accept: "application/cbor;as=Table;g=meta.orch.io;v=v1" } })).body) as any;
    assert.equal(table.kind, "Table");
    assert.equal(table.apiVersion, "meta.orch.io/v1");
    assert.deepEqual(table.rows.map((r: any) => r.cells[0]), ["c1", "c2", "c3"]);
    const pbTable = await t.request("GET", CM_PATH, { headers: { accept: `${PB};as=Table;g=meta.k8s.io;v=v1` } });
    assert.equal(pbTable.headers["content-type"], `${PB};as=Table;g=meta.k8s.io;v=v1`);
    const decoded = decodeEnvelope(pbTable.body, schemas, () => "io.k8s.apimachinery.pkg.apis.meta.v1.Table") as any;
    assert.equal(decoded.rows[1].object.kind, "PartialObjectMetadata");
    assert.equal(decoded.rows[1].object.metadata.name, "c2");
    const partial = await t.request("GET", `${CM_PATH}/c1`, { headers: { accept: "application/vnd.orch.protobuf;as=PartialObjectMetadata;g=meta.orch.io;v=v1" } });
    const meta = decodeEnvelope(partial.body, schemas, () => "io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata") as any;
    assert.deepEqual(Object.keys(meta), ["apiVersion", "kind", "metadata"]);
    assert.equal(meta.apiVersion, "meta.orch.io/v1");
    const list = parseYamlBody((await t.request("GET", CM_PATH, { headers: { accept: "application/yaml;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1" } })).body).value as any;
    assert.equal(list.kind, "PartialObjectMetadataList");
    assert.ok(list.metadata.resourceVersion);
    assert.equal(list.items[0].data, undefined);
  });

  test("Table rows carry PartialObjectMetadata by default, the object with includeObject=Object, nothing with None; another value is a 400", async () => {
    const table = (q: string) => t.request("GET", `${CM_PATH}${q}`, { headers: { accept: "application/json;as=Table;g=meta.k8s.io;v=v1" } });
    const byDefault = (await table("")).json;
    assert.deepEqual([byDefault.rows[0].object.kind, byDefault.rows[0].object.data], ["PartialObjectMetadata", undefined]);
    const metadata = (await table("?includeObject=Metadata")).json;
    assert.equal(metadata.rows[0].object.kind, "PartialObjectMetadata");
    const object = (await table("?includeObject=Object")).json;
    assert.deepEqual([object.rows[0].object.kind, object.rows[0].object.data], ["ConfigMap", { k: "c1" }]);
    const none = (await table("?includeObject=None")).json;
    assert.equal(none.rows.length, 3);
    assert.ok(none.rows.every((r: any) => r.object === undefined), "no object with None");
    const bad = await table("?includeObject=All");
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.json.message, /includeObject/);
  });

  test("watch as Protobuf frames, CBOR sequence, YAML documents and one-row Tables", async () => {
    const pb = await watchBytes(t, `${CM_PATH}?watch=true&resourceVersion=0`, PB, (b) => frames(b) >= 3);
    assert.equal(pb.contentType, `${PB};stream=watch`);
    const events: Array<{ type: string; object: any }> = [];
    for await (const e of decodeWatchStream(chunks(pb.bytes), schemas, lookup)) events.push(e);
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`), ["ADDED c1", "ADDED c2", "ADDED c3"]);
    const cbor = await watchBytes(t, `${CM_PATH}?watch=true&resourceVersion=0`, "application/cbor", (b) => cborItems(b) >= 3);
    assert.equal(cbor.contentType, "application/cbor-seq");
    assert.deepEqual(decodeCborSequence(cbor.bytes).map((e: any) => e.object.metadata.name), ["c1", "c2", "c3"]);
    const yaml = await watchBytes(t, `${CM_PATH}?watch=true&resourceVersion=0`, "application/yaml", (b) => b.includes(Buffer.from("name: c3\n")));
    assert.equal(yaml.bytes.toString().split("---\n").filter((d) => d !== "").length, 3);
    const rows = await watchBytes(t, `${CM_PATH}?watch=true&resourceVersion=0`, `${PB};as=Table;g=meta.k8s.io;v=v1`, (b) => frames(b) >= 3);
    const tables: any[] = [];
    for await (const e of decodeWatchStream(chunks(rows.bytes), schemas, (_v, kind) => `io.k8s.apimachinery.pkg.apis.meta.v1.${kind}`)) tables.push(e.object);
    assert.deepEqual(tables.map((x) => [x.kind, x.rows.length]), [["Table", 1], ["Table", 1], ["Table", 1]]);
  });

  test("Status errors in the client's format", async () => {
    const pb = await t.request("GET", `${CM_PATH}/missing`, { headers: { accept: PB } });
    assert.equal(pb.status, 404);
    assert.ok(hasProtobufMagic(pb.body));
    const status = decodeEnvelope(pb.body, schemas, lookup) as any;
    assert.deepEqual([status.kind, status.reason, status.code], ["Status", "NotFound", 404]);
    const yaml = await t.request("GET", `${CM_PATH}/missing`, { headers: { accept: "application/yaml" } });
    assert.equal((parseYamlBody(yaml.body).value as any).reason, "NotFound");
    const refused = await t.request("GET", `${CM_PATH}/c1`, { headers: { accept: "application/json;as=Table;g=meta.example.com;v=v1" } });
    assert.equal(refused.status, 406);
    assert.equal(refused.json.reason, "NotAcceptable");
  });

  test("request bodies: YAML, CBOR and Protobuf; JSON without Content-Type on PUT; 415 otherwise", async () => {
    const yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y1\ndata:\n  mode: 'yes'\n";
    assert.equal((await t.request("POST", CM_PATH, { rawBody: yaml, headers: { "content-type": "application/yaml" } })).status, 201);
    assert.equal((await t.request("GET", `${CM_PATH}/y1`)).json.data.mode, "yes");
    const cbor = await t.request("POST", CM_PATH, { rawBody: encodeCbor(configMap("b1")), headers: { "content-type": "application/cbor", accept: "application/cbor" } });
    assert.equal(cbor.status, 201);
    assert.equal((decodeCbor(cbor.body) as any).metadata.name, "b1");
    const pbBody = Buffer.from(encodeEnvelope(configMap("p1", { x: "y" }), "io.k8s.api.core.v1.ConfigMap", schemas));
    const pb = await t.request("POST", CM_PATH, { rawBody: pbBody, headers: { "content-type": PB, accept: `${PB}, application/json` } });
    assert.equal(pb.status, 201);
    assert.deepEqual((decodeEnvelope(pb.body, schemas, lookup) as any).data, { x: "y" });
    const current = (await t.request("GET", `${CM_PATH}/p1`)).json;
    const put = await t.request("PUT", `${CM_PATH}/p1`, { rawBody: JSON.stringify({ ...current, data: { x: "z" } }), headers: { "content-type": "" } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.data.x, "z");
    const applied = await t.request("PATCH", `${CM_PATH}/a1?fieldManager=cbor-test`, {
      rawBody: encodeCbor(configMap("a1", { via: "apply-patch+cbor" })),
      headers: { "content-type": "application/apply-patch+cbor" },
    });
    assert.equal(applied.status, 201, applied.text);
    assert.equal(applied.json.data.via, "apply-patch+cbor");
    const plain = await t.request("POST", CM_PATH, { rawBody: "name=x", headers: { "content-type": "text/plain" } });
    assert.equal(plain.status, 415);
    assert.equal(plain.json.reason, "UnsupportedMediaType");
    const garbage = await t.request("POST", CM_PATH, { rawBody: "not protobuf", headers: { "content-type": PB } });
    assert.equal(garbage.status, 400);
    assert.match(garbage.json.message, /expected prefix \[107 56 115 0\]/);
    const laughs = "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n";
    assert.equal((await t.request("POST", CM_PATH, { rawBody: laughs, headers: { "content-type": "application/yaml" } })).status, 400);
  });

  test("a Protobuf Scale (autoscaling/v1, in either profile) is read and written through a scale subresource", async () => {
    const RS = "/apis/apps/v1/namespaces/default/replicasets";
    const rs = { apiVersion: "apps/v1", kind: "ReplicaSet", metadata: { name: "pb-scale" }, spec: { replicas: 1, selector: { matchLabels: { a: "b" } }, template: { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "c", image: "i" }] } } } };
    assert.equal((await t.request("POST", RS, { body: rs })).status, 201);
    // Answered in JSON (client-go's Protobuf clients accept it too); the request body is what must decode.
    const got = await t.request("GET", `${RS}/pb-scale/scale`, { headers: { accept: `${PB}, application/json` } });
    assert.equal(got.status, 200, got.text);
    const scale = got.json;
    assert.equal(scale.spec.replicas, 1);
    const body = Buffer.from(encodeEnvelope({ ...scale, spec: { replicas: 3 } }, "io.k8s.api.autoscaling.v1.Scale", schemas));
    const put = await t.request("PUT", `${RS}/pb-scale/scale`, { rawBody: body, headers: { "content-type": PB } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.spec.replicas, 3);
    assert.equal((await t.request("GET", `${RS}/pb-scale`)).json.spec.replicas, 3);
  });

  test("gzip for large get/list bodies when asked (gate on), never for small ones", async () => {
    const big = "x".repeat(40 * 1024);
    for (const name of ["g1", "g2", "g3", "g4"]) await t.request("POST", CM_PATH, { body: configMap(name, { big }) });
    const plain = await t.request("GET", CM_PATH);
    for (const accept of ["application/json", PB]) {
      const res = await t.request("GET", CM_PATH, { headers: { "accept-encoding": "gzip", accept } });
      assert.equal(res.headers["content-encoding"], "gzip", accept);
      const body = gunzipSync(res.body);
      if (accept === PB) assert.equal((decodeEnvelope(body, schemas, lookup) as any).items.length, plain.json.items.length);
      else assert.deepEqual(JSON.parse(body.toString()), plain.json);
    }
    // The same over HTTP/2, as kubectl and client-go speak it.
    const session = connect(`https://127.0.0.1:${t.server.port}`, { ca: t.server.credentials.caCertPem });
    try {
      const stream = session.request({ ":path": CM_PATH, authorization: `Bearer ${t.server.credentials.adminToken}`, "accept-encoding": "gzip" });
      const headers = await new Promise<Record<string, unknown>>((resolve) => stream.once("response", resolve));
      const parts: Buffer[] = [];
      for await (const c of stream) parts.push(c as Buffer);
      assert.equal(headers["content-encoding"], "gzip");
      assert.equal(headers["transfer-encoding"], undefined);
      assert.deepEqual(JSON.parse(gunzipSync(Buffer.concat(parts)).toString()), plain.json);
    } finally {
      session.close();
    }
    const small = await t.request("GET", `${CM_PATH}/c1`, { headers: { "accept-encoding": "gzip" } });
    assert.equal(small.headers["content-encoding"], undefined);
    const unasked = await t.request("GET", CM_PATH);
    assert.equal(unasked.headers["content-encoding"], undefined);
  });
});

describe("gates off: CBOR refused (406, 415), compression never", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: builtinModules(), gates: { APIResponseCompression: "false" } });
    await t.request("POST", CM_PATH, { body: configMap("big", { big: "x".repeat(200 * 1024) }) });
  });
  after(() => t?.close());

  test("CBOR is not offered or read", async () => {
    const get = await t.request("GET", CM_PATH, { headers: { accept: "application/cbor" } });
    assert.equal(get.status, 406);
    assert.doesNotMatch(get.json.message, /cbor/);
    assert.equal((await t.request("GET", CM_PATH, { headers: { accept: "application/cbor, application/json;q=0.5" } })).status, 200);
    const post = await t.request("POST", CM_PATH, { rawBody: encodeCbor(configMap("b1")), headers: { "content-type": "application/cbor" } });
    assert.equal(post.status, 415);
    assert.doesNotMatch(post.json.message, /cbor/);
    const apply = await t.request("PATCH", `${CM_PATH}/b1?fieldManager=m`, { rawBody: encodeCbor(configMap("b1")), headers: { "content-type": "application/apply-patch+cbor" } });
    assert.equal(apply.status, 415);
  });

  test("a large list with Accept-Encoding: gzip goes out plain", async () => {
    const res = await t.request("GET", CM_PATH, { headers: { "accept-encoding": "gzip" } });
    assert.equal(res.headers["content-encoding"], undefined);
    assert.equal(res.json.items[0].metadata.name, "big");
  });
});

describe("kinds without a Protobuf form (custom resources)", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: [sampleApi] });
    await t.request("POST", "/apis/samples.orch.io/v1/namespaces/default/widgets", { body: { apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name: "w" }, spec: {} } });
  });
  after(() => t?.close());

  test("Protobuf then JSON gets JSON; Protobuf alone gets 406", async () => {
    const path = "/apis/samples.orch.io/v1/namespaces/default/widgets/w";
    const fallback = await t.request("GET", path, { headers: { accept: `${PB}, application/json` } });
    assert.equal(fallback.headers["content-type"], "application/json");
    assert.equal(fallback.json.metadata.name, "w");
    const only = await t.request("GET", path, { headers: { accept: PB } });
    assert.equal(only.status, 406);
    // The Status itself has a Protobuf form, so it answers in the type the client asked for.
    const status = hasProtobufMagic(only.body) ? (decodeEnvelope(only.body, schemas, lookup) as any) : only.json;
    assert.equal(status.reason, "NotAcceptable");
  });
});
