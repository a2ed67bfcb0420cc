// Issue 18, point 4: deep and huge objects (docs/reliability.md, "Deep and
// huge objects"). One nesting limit (MAX_OBJECT_DEPTH) at decode for every
// format and for patch results; at the limit every later stage (merge patch,
// strategic merge, JSON patch, server-side apply and its managedFields, YAML in
// and out, lists) works; an object stored deeper (an older server, etcd written
// by hand) is still served by get, list and watch in JSON and YAML.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../src/api/index.js";
import { startTestServer, type TestServer } from "../../src/apiserver/testing/harness.js";
import { MAX_OBJECT_DEPTH } from "../../src/machinery/object-depth.js";
import { encodeCbor } from "../../src/machinery/codec/cbor/index.js";
import { yamlSequenceItem } from "../../src/apiserver/http/respond.js";
import { toYaml } from "../../src/machinery/decode/index.js";

const CR = "/apis/apps/v1/namespaces/default/controllerrevisions";

/** A value whose containers nest `depth` deep: {a:{a:...{a:1}}}. */
function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** A ControllerRevision whose object nests `depth` deep in all (the revision and its data take 2 levels). */
function revision(name: string, depth: number): Record<string, unknown> {
  return { apiVersion: "apps/v1", kind: "ControllerRevision", metadata: { name }, revision: 1, data: nested(depth - 1) };
}

describe("deep objects", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: builtinModules(), gates: { CBORServingAndStorage: "true" } });
  });
  after(async () => {
    await t?.close();
  });

  test("at the limit: create in JSON and YAML, apply, every patch type, get and list in JSON and YAML", async () => {
    const created = await t.request("POST", CR, { body: revision("at-limit", MAX_OBJECT_DEPTH) });
    assert.equal(created.status, 201, created.text.slice(0, 300));
    const yamlBody = toYaml(revision("at-limit-yaml", MAX_OBJECT_DEPTH));
    const y = await t.request("POST", CR, { rawBody: yamlBody, headers: { "content-type": "application/yaml" } });
    assert.equal(y.status, 201, y.text.slice(0, 300));
    // Server-side apply: managedFields for the whole depth.
    const applied = await t.request("PATCH", `${CR}/applied?fieldManager=test`, {
      rawBody: JSON.stringify(revision("applied", MAX_OBJECT_DEPTH)), headers: { "content-type": "application/apply-patch+yaml" },
    });
    assert.equal(applied.status, 201, applied.text.slice(0, 300));
    // Patches the whole depth deep: they run through, and data's immutability answers (422), not a stack overflow (500).
    const patch = { data: nested(MAX_OBJECT_DEPTH - 2) };
    for (const type of ["application/merge-patch+json", "application/strategic-merge-patch+json"]) {
      const r = await t.request("PATCH", `${CR}/at-limit`, { rawBody: JSON.stringify(patch), headers: { "content-type": type } });
      assert.equal(r.status, 422, `${type}: ${r.text.slice(0, 300)}`);
    }
    const labels = await t.request("PATCH", `${CR}/at-limit`, { rawBody: '{"metadata":{"labels":{"x":"y"}}}', headers: { "content-type": "application/merge-patch+json" } });
    assert.equal(labels.status, 200, labels.text.slice(0, 300));
    for (const path of [`${CR}/at-limit`, CR]) {
      assert.equal((await t.request("GET", path)).status, 200);
      const yaml = await t.request("GET", path, { headers: { accept: "application/yaml" } });
      assert.equal(yaml.status, 200, yaml.text.slice(0, 300));
      assert.match(yaml.text, /^ {100,}a: 1$/m, "block style at the limit");
    }
  });

  test("one level more: 400 in every format, and for a patch whose result nests deeper", async () => {
    const deep = revision("too-deep", MAX_OBJECT_DEPTH + 1);
    const json = await t.request("POST", CR, { body: deep });
    assert.equal(json.status, 400);
    assert.match(json.json.message, /exceeded max depth/);
    const yaml = await t.request("POST", CR, { rawBody: toYaml(deep), headers: { "content-type": "application/yaml" } });
    assert.equal(yaml.status, 400);
    assert.match(yaml.json.message, /exceeded max depth of 250/);
    const cbor = await t.request("POST", CR, { rawBody: Buffer.from(encodeCbor(deep)), headers: { "content-type": "application/cbor" } });
    assert.equal(cbor.status, 400, cbor.text.slice(0, 300));
    assert.match(cbor.json?.message ?? cbor.text, /nested more than 250 levels deep/);
    const apply = await t.request("PATCH", `${CR}/too-deep?fieldManager=test`, { rawBody: toYaml(deep), headers: { "content-type": "application/apply-patch+yaml" } });
    assert.equal(apply.status, 400);
    // A JSON patch copying the data into itself, 200 levels down: the result is over the limit.
    const base = await t.request("POST", CR, { body: revision("copied", MAX_OBJECT_DEPTH - 5) });
    assert.equal(base.status, 201);
    const copy = await t.request("PATCH", `${CR}/copied`, {
      rawBody: JSON.stringify([{ op: "copy", from: "/data", path: "/data" + "/a".repeat(200) + "/b" }]), headers: { "content-type": "application/json-patch+json" },
    });
    assert.equal(copy.status, 400, copy.text.slice(0, 300));
    assert.match(copy.json.message, /nested more than 250 levels deep/);
    // The server is fine.
    assert.equal((await t.request("GET", `${CR}/copied`)).status, 200);
  });

  test("an object stored deeper than the limit is still served: get, list, watch, JSON and YAML", async () => {
    const name = "stored-deep";
    const base = await t.request("POST", CR, { body: revision(name, 10) });
    assert.equal(base.status, 201);
    // Written straight to the store, as an older server or a hand-edited etcd would have.
    const key = (await t.server.storage.list("/")).items.find((kv) => kv.key.endsWith(`/default/${name}`))!.key;
    const { kv } = await t.server.storage.get(key);
    const stored = JSON.parse(new TextDecoder().decode(kv!.value));
    stored.data = nested(1000);
    await t.server.storage.update(key, new TextEncoder().encode(JSON.stringify(stored)), kv!.modRevision);
    await new Promise((r) => setTimeout(r, 200));
    for (const accept of ["application/json", "application/yaml"]) {
      for (const path of [`${CR}/${name}`, CR, `${CR}?watch=1&timeoutSeconds=1`]) {
        const r = await t.request("GET", path, { headers: { accept } });
        assert.equal(r.status, 200, `${accept} ${path}: ${r.text.slice(0, 300)}`);
        assert.ok(r.text.includes('{"a":{"a":{"a":') || r.text.includes("a:\n"), `${accept} ${path}`);
      }
    }
  });

  test("YAML lists are streamed item by item, the same text as the whole list in one piece", () => {
    const items = [
      { kind: "A", metadata: { name: "x" }, data: { text: "line one\nline two\n\nafter a blank\n", list: [1, 2], empty: {} } },
      { kind: "B", spec: { nested: [{ a: 1, b: [true, "yes"] }], s: " leading space\n  and more" } },
    ];
    const whole = toYaml({ kind: "List", items });
    const streamed = toYaml({ kind: "List" }) + "items:\n" + items.map((i) => yamlSequenceItem(toYaml(i))).join("");
    assert.equal(streamed, whole);
  });
});
