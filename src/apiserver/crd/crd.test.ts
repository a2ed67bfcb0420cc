// Custom resources on the real server and store: a CustomResourceDefinition
// is served within a second (CRUD, patches, watch, status and scale,
// discovery, OpenAPI), its schema validates, prunes and defaults objects, the
// Table has its printer columns, names conflict as upstream, deleting it
// removes its objects first, and it is served again after a restart.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { coreModule } from "../../api/core/index.js";
import { apiextensionsModule } from "../../api/apiextensions/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";
import { cronTabCrd, until } from "./testing.js";
import { codecFor } from "../../machinery/codec/protobuf/index.js";
import { OPENAPI_V2_DOCUMENT, openApiV2Types } from "../../machinery/codec/protobuf/openapi-v2.js";

const CRDS = "/apis/apiextensions.orch.io/v1/customresourcedefinitions";
const W = "/apis/stable.example.com/v1/namespaces/default/crontabs";

const tab = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: "stable.example.com/v1",
  kind: "CronTab",
  metadata: { name },
  spec: { cronSpec: "* * * * */5", image: "img", ...spec },
});

describe("custom resources", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: [coreModule, apiextensionsModule] });
  });
  after(async () => t.close());

  test("a CRD is served within a second, Established and NamesAccepted", async () => {
    const created = await t.request("POST", CRDS, { body: cronTabCrd() });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.spec.names.listKind, "CronTabList", "defaulted");
    assert.deepEqual(created.json.status.storedVersions, ["v1"]);
    const started = Date.now();
    await until("crontabs served", async () => ((await t.request("GET", W)).status === 200 ? true : undefined));
    assert.ok(Date.now() - started < 1000);
    const crd = await until("Established", async () => {
      const got = (await t.request("GET", `${CRDS}/crontabs.stable.example.com`)).json;
      return got.status?.conditions?.find((c: any) => c.type === "Established")?.status === "True" ? got : undefined;
    });
    const names = crd.status.conditions.find((c: any) => c.type === "NamesAccepted");
    assert.equal(names.status, "True");
    assert.equal(names.reason, "NoConflicts");
    assert.equal(crd.status.acceptedNames.kind, "CronTab");
    assert.deepEqual(crd.metadata.finalizers, undefined);
  });

  test("CRUD, defaults, pruning and schema errors", async () => {
    const created = await t.request("POST", W, { body: { ...tab("a"), spec: { ...tab("a").spec, unknown: 1 }, junk: true } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.spec.replicas, 1, "schema default");
    assert.equal(created.json.spec.mode, "slow");
    assert.equal(created.json.spec.unknown, undefined, "pruned");
    assert.equal(created.json.junk, undefined, "pruned at the root");
    assert.match(String(created.headers["warning"]), /unknown field \\"spec.unknown\\"/);
    const strict = await t.request("POST", `${W}?fieldValidation=Strict`, { body: { ...tab("s"), spec: { ...tab("s").spec, unknown: 1 } } });
    assert.equal(strict.status, 400, strict.text);
    assert.match(strict.json.message, /unknown field "spec.unknown"/);

    const meta = await t.request("POST", W, { body: { ...tab("meta"), metadata: { name: "meta", labels: { a: "b" }, junk: 1 } } });
    assert.equal(meta.status, 201, meta.text);
    assert.equal(meta.json.metadata.junk, undefined, "unknown metadata fields pruned");
    assert.match(String(meta.headers["warning"]), /unknown field \\"metadata.junk\\"/);
    const badMeta = await t.request("POST", W, { body: { ...tab("badmeta"), metadata: { name: "badmeta", labels: "x" } } });
    assert.equal(badMeta.status, 400, badMeta.text);
    const badName = await t.request("POST", W, { body: { ...tab("x"), metadata: { name: 5 } } });
    assert.equal(badName.status, 400, badName.text);

    const bad = await t.request("POST", W, { body: tab("b", { replicas: "three" }) });
    assert.equal(bad.status, 422, bad.text);
    assert.equal(bad.json.message, 'CronTab.stable.example.com "b" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"');
    const many = await t.request("POST", W, { body: tab("c", { replicas: 11, mode: "odd", image: "x".repeat(21), cronSpec: "nope", port: true }) });
    assert.equal(many.status, 422, many.text);
    const causes = many.json.details.causes.map((c: any) => `${c.field}: ${c.message}`).sort();
    assert.deepEqual(causes, [
      "spec.cronSpec: Invalid value: \"nope\": spec.cronSpec in body should match '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'",
      'spec.image: Invalid value: "xxxxxxxxxxxxxxxxxxxxx": spec.image in body should be at most 20 chars long',
      'spec.mode: Unsupported value: "odd": supported values: "fast", "slow"',
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
      "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10",
    ]);
    const missing = await t.request("POST", W, { body: { ...tab("d"), spec: { image: "i" } } });
    assert.equal(missing.status, 422);
    assert.match(missing.json.message, /spec.cronSpec: Required value/);

    const got = await t.request("GET", `${W}/a`);
    assert.equal(got.json.apiVersion, "stable.example.com/v1");
    const put = await t.request("PUT", `${W}/a`, { body: { ...got.json, spec: { ...got.json.spec, image: "img2", extra: { any: { thing: 1 } } } } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json.spec.extra, { any: { thing: 1 } }, "preserved unknown fields");
    assert.equal(put.json.metadata.generation, 2);

    const merge = await t.request("PATCH", `${W}/a`, { rawBody: JSON.stringify({ spec: { replicas: 3, bogus: 1 } }), headers: { "content-type": "application/merge-patch+json" } });
    assert.equal(merge.status, 200, merge.text);
    assert.equal(merge.json.spec.replicas, 3);
    assert.equal(merge.json.spec.bogus, undefined);
    const json = await t.request("PATCH", `${W}/a`, { rawBody: JSON.stringify([{ op: "replace", path: "/spec/image", value: "img3" }]), headers: { "content-type": "application/json-patch+json" } });
    assert.equal(json.status, 200, json.text);
    assert.equal(json.json.spec.image, "img3");
    assert.equal(json.json.spec.replicas, 3);
    const smp = await t.request("PATCH", `${W}/a`, { rawBody: "{}", headers: { "content-type": "application/strategic-merge-patch+json" } });
    assert.equal(smp.status, 415, smp.text);
    assert.match(smp.json.message, /application\/json-patch\+json, application\/merge-patch\+json, application\/apply-patch\+yaml/);
    const apply = await t.request("PATCH", `${W}/applied?fieldManager=me`, {
      rawBody: JSON.stringify(tab("applied", { replicas: 2 })),
      headers: { "content-type": "application/apply-patch+yaml" },
    });
    assert.equal(apply.status, 201, apply.text);
    assert.equal(apply.json.spec.replicas, 2);

    const protobuf = await t.request("GET", `${W}/a`, { headers: { accept: "application/vnd.kubernetes.protobuf, application/json" } });
    assert.equal(protobuf.status, 200);
    assert.match(String(protobuf.headers["content-type"]), /^application\/json/);

    const nowhere = await t.request("POST", "/apis/stable.example.com/v1/namespaces/nowhere/crontabs", { body: tab("lost") });
    assert.equal(nowhere.status, 404, nowhere.text);
    assert.match(nowhere.json.message, /namespaces "nowhere" not found/);

    const byName = await t.request("GET", `${W}?fieldSelector=metadata.name%3Da`);
    assert.deepEqual(byName.json.items.map((i: any) => i.metadata.name), ["a"]);
    assert.equal(byName.json.kind, "CronTabList");
  });

  test("status and scale subresources", async () => {
    const created = await t.request("POST", W, { body: tab("sc", { replicas: 2 }) });
    assert.equal(created.status, 201, created.text);
    const st = await t.request("PUT", `${W}/sc/status`, { body: { ...created.json, status: { replicas: 2, selector: "app=x" }, spec: { ...created.json.spec, replicas: 9 } } });
    assert.equal(st.status, 200, st.text);
    assert.equal(st.json.status.replicas, 2);
    assert.equal(st.json.spec.replicas, 2, "status writes leave spec");
    const scale = await t.request("GET", `${W}/sc/scale`);
    assert.equal(scale.status, 200, scale.text);
    assert.equal(scale.json.kind, "Scale");
    assert.equal(scale.json.spec.replicas, 2);
    assert.equal(scale.json.status.selector, "app=x");
    const put = await t.request("PUT", `${W}/sc/scale`, { body: { ...scale.json, spec: { replicas: 5 } } });
    assert.equal(put.status, 200, put.text);
    assert.equal((await t.request("GET", `${W}/sc`)).json.spec.replicas, 5);
  });

  test("Table with printer columns, discovery and OpenAPI", async () => {
    const table = await t.request("GET", W, { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } });
    assert.equal(table.status, 200, table.text);
    assert.deepEqual(table.json.columnDefinitions.map((c: any) => c.name), ["Name", "Spec", "Replicas", "Age"]);
    const row = table.json.rows.find((r: any) => r.cells[0] === "a");
    assert.deepEqual(row.cells.slice(0, 3), ["a", "* * * * */5", 3]);

    const list = (await t.request("GET", "/apis/stable.example.com/v1")).json;
    const main = list.resources.find((r: any) => r.name === "crontabs");
    assert.deepEqual(main.shortNames, ["ct"]);
    assert.deepEqual(main.categories, ["all"]);
    assert.deepEqual(list.resources.map((r: any) => r.name).sort(), ["crontabs", "crontabs/scale", "crontabs/status"]);
    const agg = (await t.request("GET", "/apis", { headers: { accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" } })).json;
    assert.ok(agg.items.some((g: any) => g.metadata.name === "stable.example.com"));
    const index = (await t.request("GET", "/openapi/v3")).json;
    assert.ok(index.paths["apis/stable.example.com/v1"], "OpenAPI lists the group version");
    const doc = (await t.request("GET", "/openapi/v3/apis/stable.example.com/v1")).json;
    const schema = doc.components.schemas["com.example.stable.v1.CronTab"];
    assert.deepEqual(schema["x-kubernetes-group-version-kind"], [{ group: "stable.example.com", version: "v1", kind: "CronTab" }]);
    const spec = schema.properties.spec;
    assert.equal(spec.properties.cronSpec.pattern, "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$", "the schema as the CRD gives it");
    assert.equal(spec.properties.replicas.type, "integer");
    assert.deepEqual(spec.properties.mode.enum, ["fast", "slow"]);
    assert.deepEqual(spec.required, ["cronSpec"]);
    assert.ok(doc.components.schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"], "metadata is described");
    assert.deepEqual(doc.components.schemas["com.example.stable.v1.CronTabList"]["x-kubernetes-group-version-kind"], [{ group: "stable.example.com", version: "v1", kind: "CronTabList" }]);
  });

  test("OpenAPI v2 publishes the CRD's schema as upstream does", async () => {
    const doc = (await t.request("GET", "/openapi/v2", { headers: { accept: "application/json" } })).json;
    const def = doc.definitions["com.example.stable.v1.CronTab"];
    assert.deepEqual(def["x-kubernetes-group-version-kind"], [{ group: "stable.example.com", version: "v1", kind: "CronTab" }]);
    assert.deepEqual(def.properties.metadata, { $ref: "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", description: "Standard object's metadata." });
    assert.equal(def.properties.apiVersion.type, "string");
    assert.equal(def.properties.kind.type, "string");
    // What upstream's e2e compares: the definition less apiVersion, kind, metadata and the kind extension is the CRD's schema.
    const rest = { ...def, properties: { ...def.properties } };
    delete rest["x-kubernetes-group-version-kind"];
    for (const key of ["apiVersion", "kind", "metadata"]) delete rest.properties[key];
    const expected = structuredClone((cronTabCrd().spec.versions[0]!.schema.openAPIV3Schema as any));
    // v2 drops the type of a node keeping unknown fields (and anything below it).
    delete expected.properties.spec.properties.extra.type;
    assert.deepEqual(rest, expected);
    const list = doc.definitions["com.example.stable.v1.CronTabList"];
    assert.deepEqual(list["x-kubernetes-group-version-kind"], [{ group: "stable.example.com", version: "v1", kind: "CronTabList" }]);
    assert.deepEqual(list.properties.items, { description: "List of crontabs.", type: "array", items: { $ref: "#/definitions/com.example.stable.v1.CronTab" } });
    assert.deepEqual(list.required, ["items"]);
    const get = doc.paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"].get;
    assert.deepEqual(get.responses["200"].schema, { $ref: "#/definitions/com.example.stable.v1.CronTab" });
    // The Protobuf form (what kubectl 1.27/1.28 read) carries patterns and string lengths too.
    const pb = await t.request("GET", "/openapi/v2", { headers: { accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" } });
    const decoded = codecFor(openApiV2Types()).decode(pb.body, OPENAPI_V2_DOCUMENT) as any;
    const pbSpec = decoded.definitions.additionalProperties["com.example.stable.v1.CronTab"].properties.additionalProperties.spec.properties.additionalProperties;
    assert.equal(pbSpec.cronSpec.pattern, expected.properties.spec.properties.cronSpec.pattern);
    assert.equal(Number(pbSpec.image.maxLength), 20);
  });

  test("watch sees custom objects", async () => {
    const w = await t.watch(`${W}?watch=true&resourceVersion=0&fieldSelector=metadata.name%3Dwatched`);
    await t.request("POST", W, { body: tab("watched") });
    const [ev] = await w.next(1, 2000);
    assert.equal(ev.type, "ADDED");
    assert.equal(ev.object.kind, "CronTab");
    w.close();
  });

  test("name conflicts are refused as upstream", async () => {
    const other = cronTabCrd();
    (other.metadata as any).name = "crontabz.stable.example.com";
    (other.spec as any).names = { plural: "crontabz", singular: "crontabz", kind: "CronTab" };
    const created = await t.request("POST", CRDS, { body: other });
    assert.equal(created.status, 201, created.text);
    const crd = await until("NamesAccepted False", async () => {
      const got = (await t.request("GET", `${CRDS}/crontabz.stable.example.com`)).json;
      return got.status?.conditions?.find((c: any) => c.type === "NamesAccepted")?.status === "False" ? got : undefined;
    });
    const names = crd.status.conditions.find((c: any) => c.type === "NamesAccepted");
    // As upstream: kind, then listKind are checked, and the last conflict names the reason.
    assert.equal(names.reason, "ListKindConflict");
    assert.equal(names.message, '"CronTabList" is already in use');
    assert.equal(crd.status.conditions.find((c: any) => c.type === "Established").status, "False");
    assert.equal((await t.request("GET", "/apis/stable.example.com/v1/namespaces/default/crontabz")).status, 404);
    assert.equal((await t.request("DELETE", `${CRDS}/crontabz.stable.example.com`)).status, 202);
  });

  test("invalid CRDs are refused with upstream's messages", async () => {
    const wrongName = await t.request("POST", CRDS, { body: { ...cronTabCrd(), metadata: { name: "x.stable.example.com" } } });
    assert.equal(wrongName.status, 422);
    assert.match(wrongName.json.message, /metadata.name: Invalid value: "x.stable.example.com": must be spec.names.plural\+"."\+spec.group/);
    const protectedGroup = cronTabCrd() as any;
    protectedGroup.metadata.name = "crontabs.stable.orch.io";
    protectedGroup.spec.group = "stable.orch.io";
    const approval = await t.request("POST", CRDS, { body: protectedGroup });
    assert.equal(approval.status, 422, approval.text);
    assert.match(approval.json.message, /metadata.annotations\[api-approved.orch.io\]: Required value: protected groups must have approval annotation "api-approved.orch.io", see https:\/\/github.com\/kubernetes\/enhancements\/pull\/1111/);
    protectedGroup.metadata.annotations = { "api-approved.orch.io": "unapproved, testing only" };
    assert.equal((await t.request("POST", `${CRDS}?dryRun=All`, { body: protectedGroup })).status, 201);

    const crd = cronTabCrd() as any;
    crd.metadata.name = "things.example";
    crd.spec.group = "example";
    crd.spec.names = { plural: "things", kind: "Thing" };
    crd.spec.versions = [{ name: "v1", served: true, storage: false, schema: { openAPIV3Schema: { type: "object", properties: { spec: { properties: { a: { type: "string" } }, additionalProperties: { type: "string" } } } } } }];
    const bad = await t.request("POST", CRDS, { body: crd });
    assert.equal(bad.status, 422, bad.text);
    const causes = bad.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    assert.ok(causes.includes('spec.group: Invalid value: "example": should be a domain with at least one dot'), causes.join("\n"));
    assert.ok(causes.some((c: string) => c.startsWith("spec.versions: Invalid value") && c.endsWith("must have exactly one version marked as storage version")), causes.join("\n"));
    assert.ok(causes.includes("spec.versions[0].schema.openAPIV3Schema.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"), causes.join("\n"));
    assert.ok(causes.includes("spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"), causes.join("\n"));
  });

  test("deleting the CRD deletes its objects first, then unserves the kind", async () => {
    const before = (await t.request("GET", W)).json.items.length;
    assert.ok(before > 0);
    const watch = await t.watch(`${W}?watch=true&resourceVersion=0`);
    await watch.next(before, 2000);
    const del = await t.request("DELETE", `${CRDS}/crontabs.stable.example.com`);
    assert.equal(del.status, 202, del.text);
    assert.deepEqual(del.json.metadata.finalizers, ["customresourcecleanup.apiextensions.orch.io"]);
    assert.equal(del.json.status.conditions.find((c: any) => c.type === "Terminating").status, "True");
    await until("CRD gone", async () => ((await t.request("GET", `${CRDS}/crontabs.stable.example.com`)).status === 404 ? true : undefined), 3000);
    await until("kind unserved", async () => ((await t.request("GET", W)).status === 404 ? true : undefined));
    // The watch saw every object go, then ended with the kind.
    const deleted = await watch.next(before, 2000);
    assert.ok(deleted.every((e: any) => e.type === "DELETED"));
    await assert.rejects(watch.next(1, 2000), /watch ended/);
    // Recreated: no object of the old one is left.
    assert.equal((await t.request("POST", CRDS, { body: cronTabCrd() })).status, 201);
    const list = await until("served again", async () => {
      const r = await t.request("GET", W);
      return r.status === 200 ? r.json : undefined;
    });
    assert.equal(list.items.length, 0);
  });
});

describe("custom resources: deletion waits for objects' own finalizers", () => {
  test("the CRD stays Terminating while an object is held, and goes once it is released", async () => {
    const t = await startTestServer({ modules: [coreModule, apiextensionsModule] });
    try {
      assert.equal((await t.request("POST", CRDS, { body: cronTabCrd() })).status, 201);
      await until("served", async () => ((await t.request("GET", W)).status === 200 ? true : undefined));
      const held = { ...tab("held"), metadata: { name: "held", finalizers: ["example.com/hold"] } };
      assert.equal((await t.request("POST", W, { body: held })).status, 201);
      assert.equal((await t.request("DELETE", `${CRDS}/crontabs.stable.example.com`)).status, 202);
      const crd = await until("InstanceDeletionCheck", async () => {
        const got = (await t.request("GET", `${CRDS}/crontabs.stable.example.com`)).json;
        return got.status?.conditions?.find((c: any) => c.type === "Terminating")?.reason === "InstanceDeletionCheck" ? got : undefined;
      }, 3000);
      assert.equal(crd.status.conditions.find((c: any) => c.type === "Terminating").status, "True");
      const create = await t.request("POST", W, { body: tab("late") });
      assert.equal(create.status, 405, create.text);
      assert.equal(create.json.message, "create not allowed while custom resource definition is terminating");
      const obj = (await t.request("GET", `${W}/held`)).json;
      assert.ok(obj.metadata.deletionTimestamp, "the object is being deleted");
      assert.equal((await t.request("PUT", `${W}/held`, { body: { ...obj, metadata: { ...obj.metadata, finalizers: [] } } })).status, 200);
      await until("CRD gone", async () => ((await t.request("GET", `${CRDS}/crontabs.stable.example.com`)).status === 404 ? true : undefined), 5000);
    } finally {
      await t.close();
    }
  });
});

describe("custom resources across a restart", () => {
  test("a CRD's kind is served as soon as the restarted server is ready", async () => {
    const first = await startTestServer({ modules: [coreModule, apiextensionsModule] });
    const dataDir = first.dataDir;
    try {
      assert.equal((await first.request("POST", CRDS, { body: cronTabCrd() })).status, 201);
      await until("served", async () => ((await first.request("GET", W)).status === 200 ? true : undefined));
      assert.equal((await first.request("POST", W, { body: tab("kept") })).status, 201);
    } finally {
      await first.server.close();
    }
    const second = await startTestServer({ modules: [coreModule, apiextensionsModule], dataDir });
    try {
      const got = await second.request("GET", `${W}/kept`);
      assert.equal(got.status, 200, got.text);
      assert.equal(got.json.spec.cronSpec, "* * * * */5");
    } finally {
      await second.close();
    }
  });
});

describe("custom resources: versions, selectable fields and validation rules", () => {
  let t: TestServer;
  const G = "/apis/rules.example.com";
  before(async () => {
    t = await startTestServer({ modules: [coreModule, apiextensionsModule] });
    const schema = {
      openAPIV3Schema: {
        type: "object",
        properties: {
          spec: {
            type: "object",
            "x-kubernetes-validations": [{ rule: "self.min <= self.max", message: "min must not exceed max" }],
            properties: {
              color: { type: "string" },
              min: { type: "integer" },
              max: { type: "integer" },
              size: { type: "string", "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "size is immutable" }] },
            },
          },
        },
      },
    };
    const crd = {
      apiVersion: "apiextensions.orch.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "gizmos.rules.example.com" },
      spec: {
        group: "rules.example.com",
        scope: "Cluster",
        names: { plural: "gizmos", kind: "Gizmo" },
        versions: [
          { name: "v1", served: true, storage: true, schema, selectableFields: [{ jsonPath: ".spec.color" }] },
          { name: "v1beta1", served: true, storage: false, schema, deprecated: true },
        ],
      },
    };
    assert.equal((await t.request("POST", CRDS, { body: crd })).status, 201);
    await until("gizmos served", async () => ((await t.request("GET", `${G}/v1/gizmos`)).status === 200 ? true : undefined));
  });
  after(async () => t.close());

  const gizmo = (name: string, spec: Record<string, unknown>, version = "v1") => ({ apiVersion: `rules.example.com/${version}`, kind: "Gizmo", metadata: { name }, spec });

  test("every served version shares the storage version's objects", async () => {
    assert.equal((await t.request("POST", `${G}/v1beta1/gizmos`, { body: gizmo("old", { color: "red", min: 1, max: 2, size: "s" }, "v1beta1") })).status, 201);
    const v1 = await t.request("GET", `${G}/v1/gizmos/old`);
    assert.equal(v1.json.apiVersion, "rules.example.com/v1");
    const beta = await t.request("GET", `${G}/v1beta1/gizmos/old`);
    assert.equal(beta.json.apiVersion, "rules.example.com/v1beta1");
    assert.equal(beta.headers["warning"], '299 - "rules.example.com/v1beta1 Gizmo is deprecated; use rules.example.com/v1 Gizmo"');
    assert.equal(v1.headers["warning"], undefined);
    const group = (await t.request("GET", "/apis/rules.example.com")).json;
    assert.deepEqual(group.versions.map((v: any) => v.version), ["v1", "v1beta1"]);
    assert.equal(group.preferredVersion.version, "v1");
  });

  test("selectableFields are field selectors", async () => {
    assert.equal((await t.request("POST", `${G}/v1/gizmos`, { body: gizmo("blue", { color: "blue", min: 1, max: 1, size: "m" }) })).status, 201);
    const blue = await t.request("GET", `${G}/v1/gizmos?fieldSelector=spec.color%3Dblue`);
    assert.equal(blue.status, 200, blue.text);
    assert.deepEqual(blue.json.items.map((i: any) => i.metadata.name), ["blue"]);
    const unknown = await t.request("GET", `${G}/v1/gizmos?fieldSelector=spec.min%3D1`);
    assert.equal(unknown.status, 400, unknown.text);
  });

  test("CEL rules: self and transition rules", async () => {
    const bad = await t.request("POST", `${G}/v1/gizmos`, { body: gizmo("bad", { min: 3, max: 1 }) });
    assert.equal(bad.status, 422, bad.text);
    assert.equal(bad.json.message, 'Gizmo.rules.example.com "bad" is invalid: spec: Invalid value: "object": min must not exceed max');
    const cur = (await t.request("GET", `${G}/v1/gizmos/blue`)).json;
    const changed = await t.request("PUT", `${G}/v1/gizmos/blue`, { body: { ...cur, spec: { ...cur.spec, size: "xl" } } });
    assert.equal(changed.status, 422, changed.text);
    assert.match(changed.json.message, /spec.size: Invalid value: "string": size is immutable/);
    const badRule = await t.request("POST", CRDS, {
      body: {
        apiVersion: "apiextensions.orch.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "things.rules.example.com" },
        spec: { group: "rules.example.com", scope: "Cluster", names: { plural: "things", kind: "Thing" }, versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-validations": [{ rule: "self.a +" }] } } }] },
      },
    });
    assert.equal(badRule.status, 422, badRule.text);
    assert.match(badRule.json.message, /spec.versions\[0\].schema.openAPIV3Schema.x-kubernetes-validations\[0\].rule: Invalid value: .*compilation failed/);
  });
});

describe("custom resources: hostile definitions", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: [coreModule, apiextensionsModule] });
  });
  after(async () => t.close());

  test("malformed CRDs are refused (4xx) and the server stays up", async () => {
    const base = () => JSON.parse(JSON.stringify(cronTabCrd()));
    const mutations: [string, (crd: any) => void][] = [
      ["versions not a list", (c) => (c.spec.versions = "v1")],
      ["names not an object", (c) => (c.spec.names = 3)],
      ["schema a string", (c) => (c.spec.versions[0].schema.openAPIV3Schema = "object")],
      ["enum not a list", (c) => (c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.mode.enum = "fast")],
      ["items a number", (c) => (c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.list = { type: "array", items: 5 })],
      ["additionalProperties a string", (c) => (c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.m = { type: "object", additionalProperties: "x" })],
      ["type a number", (c) => (c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.image.type = 5)],
      ["required a string", (c) => (c.spec.versions[0].schema.openAPIV3Schema.properties.spec.required = "cronSpec")],
      ["no spec", (c) => delete c.spec],
      ["a printer column without a path", (c) => delete c.spec.versions[0].additionalPrinterColumns[0].jsonPath],
      ["a bad printer column path", (c) => (c.spec.versions[0].additionalPrinterColumns[0].jsonPath = "spec.x")],
      ["scale path outside spec", (c) => (c.spec.versions[0].subresources.scale.specReplicasPath = ".status.replicas")],
      ["a scope that does not exist", (c) => (c.spec.scope = "Galaxy")],
    ];
    for (const [name, mutate] of mutations) {
      const crd = base();
      mutate(crd);
      const r = await t.request("POST", CRDS, { body: crd });
      assert.ok(r.status === 400 || r.status === 422, `${name}: ${r.status} ${r.text}`);
    }
    assert.equal((await t.request("GET", "/readyz")).status, 200);
    assert.equal((await t.request("POST", CRDS, { body: cronTabCrd() })).status, 201);
  });

  test("a validation rule over the estimated cost limit refuses the definition (422, upstream's message)", async () => {
    const crd = JSON.parse(JSON.stringify(cronTabCrd()));
    crd.metadata.name = "costly.stable.example.com";
    crd.spec.names = { plural: "costly", singular: "costly", kind: "Costly" };
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.tags = {
      type: "array", items: { type: "string" }, "x-kubernetes-validations": [{ rule: "self.all(x, self.exists(y, x == y))" }],
    };
    const r = await t.request("POST", CRDS, { body: crd });
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.message, /spec.versions\[0\].schema.openAPIV3Schema.properties\[spec\].properties\[tags\].x-kubernetes-validations\[0\].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x/);
    const bounded = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.tags;
    bounded.maxItems = 10;
    bounded.items.maxLength = 10;
    assert.equal((await t.request("POST", CRDS, { body: crd })).status, 201, "with bounds it fits");
  });
});

describe("custom resources in OpenAPI v2: versions and v2's reductions", () => {
  let t: TestServer;
  const NAME = `${CRDS}/widgets.shapes.example.com`;
  const v2Doc = async () => (await t.request("GET", "/openapi/v2", { headers: { accept: "application/json" } })).json;
  const schema = {
    openAPIV3Schema: {
      description: "Widget for testing",
      type: "object",
      properties: {
        spec: {
          type: "object",
          required: ["size", "note"],
          properties: {
            size: { type: "string" },
            note: { type: "string", nullable: true },
            any: { type: "object", "x-kubernetes-preserve-unknown-fields": true, properties: { x: { type: "string" } } },
            choice: { type: "string", anyOf: [{ enum: ["a"] }, { enum: ["b"] }] },
          },
        },
      },
    },
  };
  const loose = { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true, properties: { spec: { type: "object" } } } };
  before(async () => {
    t = await startTestServer({ modules: [coreModule, apiextensionsModule] });
    const crd = {
      apiVersion: "apiextensions.orch.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "widgets.shapes.example.com" },
      spec: {
        group: "shapes.example.com",
        scope: "Namespaced",
        names: { plural: "widgets", kind: "Widget" },
        versions: [
          { name: "v2", served: true, storage: true, schema },
          { name: "v3", served: true, storage: false, schema: loose },
        ],
      },
    };
    const created = await t.request("POST", CRDS, { body: crd });
    assert.equal(created.status, 201, created.text);
    await until("widgets served", async () => ((await t.request("GET", "/apis/shapes.example.com/v3/namespaces/default/widgets")).status === 200 ? true : undefined));
  });
  after(async () => t.close());

  test("each served version has its own definition; nullable, anyOf and kept unknown fields reduced", async () => {
    const doc = await v2Doc();
    const v2 = doc.definitions["com.example.shapes.v2.Widget"];
    assert.deepEqual(v2["x-kubernetes-group-version-kind"], [{ group: "shapes.example.com", version: "v2", kind: "Widget" }]);
    assert.equal(v2.description, "Widget for testing");
    assert.deepEqual(v2.properties.spec, {
      type: "object",
      required: ["size"],
      properties: { size: { type: "string" }, note: {}, any: { "x-kubernetes-preserve-unknown-fields": true }, choice: { type: "string" } },
    });
    // A root keeping unknown fields is a bare object in v2 (kubectl would refuse unknown fields otherwise).
    assert.deepEqual(doc.definitions["com.example.shapes.v3.Widget"], { type: "object", "x-kubernetes-group-version-kind": [{ group: "shapes.example.com", version: "v3", kind: "Widget" }] });
    assert.deepEqual(doc.definitions["com.example.shapes.v3.WidgetList"]["x-kubernetes-group-version-kind"], [{ group: "shapes.example.com", version: "v3", kind: "WidgetList" }]);
    // v3 keeps the schema as given.
    const v3 = (await t.request("GET", "/openapi/v3/apis/shapes.example.com/v2")).json.components.schemas["com.example.shapes.v2.Widget"];
    assert.deepEqual(v3.properties.spec.properties.note, { type: "string", nullable: true });
    assert.deepEqual(v3.properties.spec.required, ["size", "note"]);
  });

  test("a version no longer served leaves the document; a renamed version moves", async () => {
    const crd = (await t.request("GET", NAME)).json;
    crd.spec.versions[1].served = false;
    assert.equal((await t.request("PUT", NAME, { body: crd })).status, 200);
    await until("v3 gone", async () => ((await v2Doc()).definitions["com.example.shapes.v3.Widget"] === undefined ? true : undefined), 3000);
    assert.ok((await v2Doc()).definitions["com.example.shapes.v2.Widget"], "the served version stays");

    const again = (await t.request("GET", NAME)).json;
    again.spec.versions[1] = { ...again.spec.versions[1], name: "v4", served: true };
    const put = await t.request("PUT", NAME, { body: again });
    assert.equal(put.status, 200, put.text);
    const doc = await until("v4 published", async () => {
      const d = await v2Doc();
      return d.definitions["com.example.shapes.v4.Widget"] !== undefined ? d : undefined;
    }, 3000);
    assert.equal(doc.definitions["com.example.shapes.v3.Widget"], undefined);
    assert.ok(doc.paths["/apis/shapes.example.com/v4/namespaces/{namespace}/widgets"], "the paths move too");
    assert.equal(doc.paths["/apis/shapes.example.com/v3/namespaces/{namespace}/widgets"], undefined);
  });
});

describe("custom resources: a schema change reaches objects already stored and cached", () => {
  let t: TestServer;
  const G = "/apis/later.example.com/v1";
  const crd = (withDefault: boolean) => ({
    apiVersion: "apiextensions.orch.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "knobs.later.example.com" },
    spec: {
      group: "later.example.com",
      scope: "Cluster",
      names: { plural: "knobs", kind: "Knob" },
      versions: [{
        name: "v1", served: true, storage: true,
        schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: {
          size: { type: "integer" },
          ...(withDefault ? { color: { type: "string", default: "teal" } } : {}),
        } } } } },
        ...(withDefault ? { selectableFields: [{ jsonPath: ".spec.color" }] } : {}),
      }],
    },
  });
  before(async () => {
    t = await startTestServer({ modules: [coreModule, apiextensionsModule] });
    assert.equal((await t.request("POST", CRDS, { body: crd(false) })).status, 201);
    await until("knobs served", async () => ((await t.request("GET", `${G}/knobs`)).status === 200 ? true : undefined));
  });
  after(async () => t.close());

  test("a default added to the schema shows on every read path", async () => {
    const made = await t.request("POST", `${G}/knobs`, { body: { apiVersion: "later.example.com/v1", kind: "Knob", metadata: { name: "k" }, spec: { size: 1 } } });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.json.spec.color, undefined, "no default yet");
    // Read once so the object sits decoded in the watch cache.
    assert.equal((await t.request("GET", `${G}/knobs?resourceVersion=0`)).json.items[0].spec.color, undefined);
    const current = (await t.request("GET", `${CRDS}/knobs.later.example.com`)).json;
    const updated = await t.request("PUT", `${CRDS}/knobs.later.example.com`, { body: { ...crd(true), metadata: current.metadata } });
    assert.equal(updated.status, 200, updated.text);
    const reads: Record<string, () => Promise<unknown>> = {
      "consistent GET": async () => (await t.request("GET", `${G}/knobs/k`)).json.spec.color,
      "GET rv=0": async () => (await t.request("GET", `${G}/knobs/k?resourceVersion=0`)).json.spec.color,
      "LIST rv=0": async () => (await t.request("GET", `${G}/knobs?resourceVersion=0`)).json.items[0].spec.color,
      "consistent LIST": async () => (await t.request("GET", `${G}/knobs`)).json.items[0].spec.color,
    };
    for (const [path, read] of Object.entries(reads)) {
      await until(`${path} shows the new default`, async () => ((await read()) === "teal" ? true : undefined));
    }
    // A watch from the cache's start replays the stored object with the new default too.
    const w = await t.watch(`${G}/knobs?watch=true&resourceVersion=0`);
    const [ev] = await w.next(1, 2000);
    w.close();
    assert.equal(ev.type, "ADDED");
    assert.equal(ev.object.spec.color, "teal", "watch replay");
    // A selectable field added by the change selects on the defaulted value, from the cache and from the store.
    for (const rv of ["&resourceVersion=0", ""]) {
      const teal = await t.request("GET", `${G}/knobs?fieldSelector=spec.color%3Dteal${rv}`);
      assert.equal(teal.status, 200, teal.text);
      assert.deepEqual(teal.json.items.map((i: any) => i.metadata.name), ["k"], `LIST ${rv || "consistent"}`);
    }
  });
});

describe("custom resources: subresources and selectable fields per version", () => {
  let t: TestServer;
  const G = "/apis/per.example.com";
  const schema = { openAPIV3Schema: { type: "object", properties: {
    spec: { type: "object", properties: { color: { type: "string" }, size: { type: "integer" }, replicas: { type: "integer" }, tags: { type: "array", items: { type: "string" } } } },
    status: { type: "object", properties: { phase: { type: "string" }, replicas: { type: "integer" } } },
  } } };
  const crd = (versions: unknown[]) => ({
    apiVersion: "apiextensions.orch.io/v1", kind: "CustomResourceDefinition", metadata: { name: "dials.per.example.com" },
    spec: { group: "per.example.com", scope: "Cluster", names: { plural: "dials", kind: "Dial" }, versions },
  });
  before(async () => {
    t = await startTestServer({ modules: [coreModule, apiextensionsModule] });
    const made = await t.request("POST", CRDS, { body: crd([
      { name: "v1", served: true, storage: true, schema, subresources: { status: {}, scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" } }, selectableFields: [{ jsonPath: ".spec.color" }] },
      { name: "v2", served: true, storage: false, schema, selectableFields: [{ jsonPath: ".spec.size" }] },
    ]) });
    assert.equal(made.status, 201, made.text);
    await until("dials served", async () => ((await t.request("GET", `${G}/v2/dials`)).status === 200 ? true : undefined));
  });
  after(async () => t.close());

  test("status and scale are served only at the version that declares them, in discovery too", async () => {
    const dial = (name: string, v: string) => ({ apiVersion: `per.example.com/${v}`, kind: "Dial", metadata: { name }, spec: { color: "red", size: 3, replicas: 1 }, status: { phase: "set" } });
    const v1 = await t.request("POST", `${G}/v1/dials`, { body: dial("one", "v1") });
    assert.equal(v1.json.status, undefined, "v1 has a status subresource: status is not written by a create");
    const v2 = await t.request("POST", `${G}/v2/dials`, { body: dial("two", "v2") });
    assert.equal(v2.json.status?.phase, "set", "v2 has none: status is an ordinary field");
    assert.equal((await t.request("GET", `${G}/v1/dials/one/status`)).status, 200);
    assert.equal((await t.request("GET", `${G}/v1/dials/one/scale`)).json.spec.replicas, 1);
    assert.equal((await t.request("GET", `${G}/v2/dials/one/status`)).status, 404);
    assert.equal((await t.request("GET", `${G}/v2/dials/one/scale`)).status, 404);
    const names = async (v: string) => (await t.request("GET", `${G}/${v}`)).json.resources.map((r: any) => r.name).sort();
    assert.deepEqual(await names("v1"), ["dials", "dials/scale", "dials/status"]);
    assert.deepEqual(await names("v2"), ["dials"]);
  });

  test("each version selects by its own selectableFields", async () => {
    assert.deepEqual((await t.request("GET", `${G}/v1/dials?fieldSelector=spec.color%3Dred`)).json.items.map((i: any) => i.metadata.name).sort(), ["one", "two"]);
    assert.equal((await t.request("GET", `${G}/v2/dials?fieldSelector=spec.color%3Dred`)).status, 400);
    assert.equal((await t.request("GET", `${G}/v2/dials?fieldSelector=spec.size%3D3`)).json.items.length, 2);
    assert.equal((await t.request("GET", `${G}/v1/dials?fieldSelector=spec.size%3D3`)).status, 400);
  });

  test("selectableFields are checked: at most 8, distinct, scalar fields of the schema", async () => {
    const bad = async (fields: unknown[]) => {
      const r = await t.request("POST", CRDS, { body: { ...crd([{ name: "v1", served: true, storage: true, schema, selectableFields: fields }]), metadata: { name: "dials.per.example.com" } } });
      return r;
    };
    const nine = Array.from({ length: 9 }, () => ({ jsonPath: ".spec.color" }));
    const tooMany = await bad(nine);
    assert.equal(tooMany.status, 422);
    assert.match(tooMany.text, /spec.versions\[0\].selectableFields: Too many: 9: must have at most 8 items/);
    assert.match((await bad([{ jsonPath: ".spec.color" }, { jsonPath: ".spec.color" }])).text, /selectableFields\[1\].jsonPath: Duplicate value/);
    assert.match((await bad([{ jsonPath: ".spec.tags" }])).text, /must point to a field of type string, boolean or integer/);
    assert.match((await bad([{ jsonPath: ".spec.nothere" }])).text, /does not refer to a field in the schema/);
  });
});

describe("custom resources: server-side apply walks each version by its own schema", () => {
  let t: TestServer;
  const G = "/apis/lists.example.com";
  const ports = (listType: Record<string, unknown>) => ({ openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: {
    ports: { type: "array", ...listType, items: { type: "object", required: ["name"], properties: { name: { type: "string" }, port: { type: "integer" } } } },
  } } } } });
  before(async () => {
    t = await startTestServer({ modules: [coreModule, apiextensionsModule] });
    const crd = {
      apiVersion: "apiextensions.orch.io/v1", kind: "CustomResourceDefinition", metadata: { name: "gates.lists.example.com" },
      spec: { group: "lists.example.com", scope: "Cluster", names: { plural: "gates", kind: "Gate" }, versions: [
        { name: "v1", served: true, storage: true, schema: ports({}) }, // atomic list: one owner
        { name: "v2", served: true, storage: false, schema: ports({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] }) },
      ] },
    };
    assert.equal((await t.request("POST", CRDS, { body: crd })).status, 201);
    await until("gates served", async () => ((await t.request("GET", `${G}/v2/gates`)).status === 200 ? true : undefined));
  });
  after(async () => t.close());

  const apply = (v: string, name: string, manager: string, port: string) =>
    t.request("PATCH", `${G}/${v}/gates/${name}?fieldManager=${manager}`, {
      rawBody: JSON.stringify({ apiVersion: `lists.example.com/${v}`, kind: "Gate", metadata: { name }, spec: { ports: [{ name: port, port: 1 }] } }),
      headers: { "content-type": "application/apply-patch+yaml" },
    });

  test("a list-type map at v2 merges two appliers' entries; the same list at v1 is atomic and conflicts", async () => {
    assert.equal((await apply("v2", "g2", "alice", "a")).status, 201);
    const merged = await apply("v2", "g2", "bob", "b");
    assert.equal(merged.status, 200, merged.text);
    assert.deepEqual(merged.json.spec.ports.map((p: any) => p.name), ["a", "b"]);
    assert.equal((await apply("v1", "g1", "alice", "a")).status, 201);
    const conflict = await apply("v1", "g1", "bob", "b");
    assert.equal(conflict.status, 409, conflict.text);
    assert.equal(conflict.json.message, `Apply failed with 1 conflict: conflict with "alice": .spec.ports`);
  });
});
