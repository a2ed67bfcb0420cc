// /openapi/v2 and /openapi/v3 against the real server with every built-in
// kind: the Swagger 2.0 document (definitions, extensions, paths), its
// Protobuf form (gnostic's openapi.v2.Document, decoded back with the
// declaration), ETag and 304, gzip, bad Accept and methods, and invalidate().

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { builtinModules } from "../../api/index.js";
import { namingFor } from "../../machinery/naming.js";
import type { ResourceDefinition } from "../../api/resource.js";
import { codecFor } from "../../machinery/codec/protobuf/index.js";
import { OPENAPI_V2_DOCUMENT, openApiV2Types } from "../../machinery/codec/protobuf/openapi-v2.js";
import { ApiRegistry } from "../api-registry.js";
import { startTestServer, type TestServer } from "../testing/harness.js";
import { OpenApi, OPENAPI_V2_PROTOBUF } from "./openapi.js";

const PB_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/** Every `$ref` in a JSON value. */
function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refs(v, out);
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

describe("OpenAPI documents", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
  });
  after(async () => t?.close());

  test("/openapi/v2 as JSON: definitions with kinds and patch extensions, paths with upstream's operations", async () => {
    const r = await t.request("GET", "/openapi/v2", { headers: { accept: "application/json" } });
    assert.equal(r.status, 200);
    assert.equal(r.headers["content-type"], "application/json");
    const doc = r.json;
    assert.equal(doc.swagger, "2.0");
    const deployment = doc.definitions["io.k8s.api.apps.v1.Deployment"];
    assert.deepEqual(deployment["x-kubernetes-group-version-kind"], [{ group: "apps", version: "v1", kind: "Deployment" }]);
    assert.equal(deployment.properties.spec.$ref, "#/definitions/io.k8s.api.apps.v1.DeploymentSpec");
    // apiVersion and kind on kinds and lists (kubectl ≤ 1.26 validates manifests against this document), not on their parts.
    for (const name of ["io.k8s.api.apps.v1.Deployment", "io.k8s.api.apps.v1.DeploymentList", "io.k8s.api.core.v1.ReplicationController"]) {
      assert.deepEqual([doc.definitions[name].properties.apiVersion?.type, doc.definitions[name].properties.kind?.type], ["string", "string"], name);
    }
    assert.equal(doc.definitions["io.k8s.api.apps.v1.DeploymentSpec"].properties.kind, undefined);
    assert.deepEqual(doc.definitions["io.k8s.api.apps.v1.DeploymentList"]["x-kubernetes-group-version-kind"], [{ group: "apps", version: "v1", kind: "DeploymentList" }]);
    const containers = doc.definitions["io.k8s.api.core.v1.PodSpec"].properties.containers;
    assert.equal(containers["x-kubernetes-patch-strategy"], "merge");
    assert.equal(containers["x-kubernetes-patch-merge-key"], "name");
    assert.equal(containers.items.$ref, "#/definitions/io.k8s.api.core.v1.Container");
    const ports = doc.definitions["io.k8s.api.core.v1.Container"].properties.ports;
    assert.equal(ports["x-kubernetes-list-type"], "map");
    assert.deepEqual(ports["x-kubernetes-list-map-keys"], ["containerPort", "protocol"]);
    assert.equal(doc.definitions["io.k8s.apimachinery.pkg.api.resource.Quantity"].type, "string", "no oneOf in v2");
    // Every reference resolves.
    const missing = refs(doc).filter((ref) => doc.definitions[ref.replace("#/definitions/", "")] === undefined);
    assert.deepEqual(missing, []);
    // Paths: the patch of a Deployment names its kind and takes fieldValidation and a body, as kubectl's verifier looks for.
    const item = doc.paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"];
    assert.deepEqual(item.patch["x-kubernetes-group-version-kind"], { group: "apps", version: "v1", kind: "Deployment" });
    assert.equal(item.patch["x-kubernetes-action"], "patch");
    assert.equal(item.patch.operationId, "patchAppsV1NamespacedDeployment");
    assert.ok(item.patch.consumes.includes("application/strategic-merge-patch+json"));
    const params = item.patch.parameters.map((p: any) => `${p.in}:${p.name}`);
    for (const p of ["body:body", "query:fieldValidation", "query:fieldManager", "query:dryRun", "query:force"]) assert.ok(params.includes(p), p);
    assert.deepEqual(item.parameters.map((p: any) => `${p.in}:${p.name}`), ["path:name", "path:namespace", "query:pretty"]);
    assert.equal(item.get.responses["200"].schema.$ref, "#/definitions/io.k8s.api.apps.v1.Deployment");
    const list = doc.paths["/api/v1/namespaces/{namespace}/pods"].get;
    assert.equal(list["x-kubernetes-action"], "list");
    assert.equal(list.responses["200"].schema.$ref, "#/definitions/io.k8s.api.core.v1.PodList");
    assert.ok(doc.paths["/api/v1/nodes/{name}"], "cluster-scoped paths have no namespace");
    assert.ok(doc.paths["/api/v1/namespaces/{namespace}/pods/{name}/status"].patch, "status subresource");
  });

  test("/openapi/v2 as Protobuf: gnostic's Document, the same content as the JSON", async () => {
    const r = await t.request("GET", "/openapi/v2", { headers: { accept: PB_ACCEPT } });
    assert.equal(r.status, 200);
    assert.equal(r.headers["content-type"], OPENAPI_V2_PROTOBUF);
    assert.equal(r.body[0], 0x0a, "field 1 (swagger), length-delimited");
    assert.equal(r.body.subarray(2, 2 + r.body[1]!).toString(), "2.0");
    const doc = codecFor(openApiV2Types()).decode(r.body, OPENAPI_V2_DOCUMENT) as any;
    assert.equal(doc.swagger, "2.0");
    const deployment = doc.definitions.additionalProperties["io.k8s.api.apps.v1.Deployment"];
    assert.deepEqual(deployment.type.value, ["object"]);
    assert.deepEqual(JSON.parse(deployment.vendorExtension["x-kubernetes-group-version-kind"].yaml), [{ group: "apps", version: "v1", kind: "Deployment" }]);
    const containers = doc.definitions.additionalProperties["io.k8s.api.core.v1.PodSpec"].properties.additionalProperties.containers;
    assert.equal(JSON.parse(containers.vendorExtension["x-kubernetes-patch-merge-key"].yaml), "name");
    assert.equal(containers.items.schema[0].ref, "#/definitions/io.k8s.api.core.v1.Container");
    const patch = doc.paths.path["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].patch;
    assert.deepEqual(JSON.parse(patch.vendorExtension["x-kubernetes-group-version-kind"].yaml), { group: "apps", version: "v1", kind: "Deployment" });
    const names = patch.parameters.map((p: any) => p.parameter.nonBodyParameter?.queryParameterSubSchema?.name ?? p.parameter.bodyParameter?.name);
    assert.ok(names.includes("fieldValidation") && names.includes("body"));
    const json = (await t.request("GET", "/openapi/v2")).json;
    assert.deepEqual(Object.keys(doc.definitions.additionalProperties).sort(), Object.keys(json.definitions).sort());
    assert.deepEqual(Object.keys(doc.paths.path).sort(), Object.keys(json.paths).sort());
  });

  test("ETag and 304 on If-None-Match, per representation; gzip when accepted", async () => {
    const json = await t.request("GET", "/openapi/v2", { headers: { accept: "application/json" } });
    const pb = await t.request("GET", "/openapi/v2", { headers: { accept: PB_ACCEPT } });
    const etag = json.headers["etag"] as string;
    assert.match(etag, /^"[0-9A-F]{64}"$/);
    assert.notEqual(pb.headers["etag"], etag);
    const again = await t.request("GET", "/openapi/v2", { headers: { accept: "application/json", "if-none-match": etag } });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    assert.equal(again.headers["etag"], etag);
    const stale = await t.request("GET", "/openapi/v2", { headers: { accept: "application/json", "if-none-match": '"OLD"' } });
    assert.equal(stale.status, 200);
    const gz = await t.request("GET", "/openapi/v2", { headers: { accept: PB_ACCEPT, "accept-encoding": "gzip" } });
    assert.equal(gz.headers["content-encoding"], "gzip");
    assert.ok(gunzipSync(gz.body).equals(pb.body));
    assert.ok(gz.body.length < pb.body.length / 2);
    const v3 = (await t.request("GET", "/openapi/v3")).json;
    const url: string = v3.paths["apis/apps/v1"].serverRelativeURL;
    const first = await t.request("GET", url);
    assert.equal(first.headers["etag"], `"${url.split("hash=")[1]}"`, "the v3 ETag is the hash in the index");
    assert.equal((await t.request("GET", url, { headers: { "if-none-match": first.headers["etag"] as string } })).status, 304);
  });

  test("v3 documents are drawn from the same model: kinds, allOf references, patch parameters", async () => {
    const index = (await t.request("GET", "/openapi/v3")).json;
    const doc = (await t.request("GET", index.paths["api/v1"].serverRelativeURL)).json;
    const pod = doc.components.schemas["io.k8s.api.core.v1.Pod"];
    assert.deepEqual(pod["x-kubernetes-group-version-kind"], [{ group: "", version: "v1", kind: "Pod" }]);
    assert.deepEqual(pod.properties.spec.allOf, [{ $ref: "#/components/schemas/io.k8s.api.core.v1.PodSpec" }]);
    assert.ok(doc.components.schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"].oneOf);
    const patch = doc.paths["/api/v1/namespaces/{namespace}/pods/{name}"].patch;
    assert.ok(patch.parameters.some((p: any) => p.name === "fieldValidation"));
    assert.ok(patch.requestBody.content["application/apply-patch+yaml"]);
  });

  test("bad requests: unknown document 404, unacceptable type 406, a write 405; the server stays up", async () => {
    const cases: Array<[string, string, Record<string, string>, number, string]> = [
      ["GET", "/openapi/v3/apis/nope/v1", {}, 404, "NotFound"],
      ["GET", "/openapi/v2", { accept: "text/html" }, 406, "NotAcceptable"],
      ["GET", "/openapi/v3", { accept: "image/png" }, 406, "NotAcceptable"],
      ["POST", "/openapi/v2", {}, 405, "MethodNotAllowed"],
    ];
    for (const [method, path, headers, code, reason] of cases) {
      const r = await t.request(method, path, { headers });
      assert.equal(r.status, code, `${method} ${path}: ${r.text.slice(0, 200)}`);
      assert.equal(r.json?.kind, "Status", `${method} ${path}: ${r.text.slice(0, 200)}`);
      assert.equal(r.json.reason, reason);
    }
    assert.equal((await t.request("GET", "/openapi/v2")).status, 200);
  });
});

describe("OpenApi.invalidate", () => {
  test("documents are kept until invalidate(), then rebuilt from the registry", () => {
    const extra: ResourceDefinition[] = [];
    class Growing extends ApiRegistry {
      override resourcesIn(group: string, version: string): ResourceDefinition[] {
        return [...super.resourcesIn(group, version), ...extra.filter((d) => d.group === group && d.versions.includes(version))];
      }
    }
    const registry = new Growing(builtinModules(), namingFor());
    const openapi = new OpenApi(registry);
    const before = openapi.answer("/openapi/v2") as any;
    const pods = registry.lookup("", "v1", "pods")!;
    extra.push({ ...pods, resource: "widgets", kind: "Widget" });
    assert.equal((openapi.answer("/openapi/v2") as any).paths["/api/v1/namespaces/{namespace}/widgets"], undefined, "cached");
    openapi.invalidate();
    const after = openapi.answer("/openapi/v2") as any;
    assert.ok(after.paths["/api/v1/namespaces/{namespace}/widgets/{name}"].patch);
    assert.ok(Object.keys(after.paths).length > Object.keys(before.paths).length);
    assert.equal(before.paths["/api/v1/namespaces/{namespace}/widgets/{name}"], undefined);
  });
});
