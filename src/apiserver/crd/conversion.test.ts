// Conversion between a custom kind's versions on the real server and store,
// with a real HTTPS conversion webhook started here: objects are stored in
// the storage version and converted on get, list, watch and writes; each
// version validates and defaults by its own schema (defaults on read too);
// webhook failures are 500s with upstream's text; None only changes apiVersion.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { coreModule } from "../../api/core/index.js";
import { apiextensionsModule } from "../../api/apiextensions/index.js";
import { admissionregistrationModule } from "../../api/admissionregistration/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";
import { endpointCrd, startConversionWebhook, until, type ConversionWebhook } from "./testing.js";

const CRDS = "/apis/apiextensions.orch.io/v1/customresourcedefinitions";

async function served(t: TestServer, path: string): Promise<void> {
  await until(path, async () => ((await t.request("GET", path)).status === 200 ? true : undefined), 3000);
}

describe("custom resources: conversion webhook across two versions", () => {
  let t: TestServer;
  let hook: ConversionWebhook;
  const group = "conv.example.com";
  const V1 = `/apis/${group}/v1/namespaces/default/endpoints`;
  const V2 = `/apis/${group}/v2/namespaces/default/endpoints`;
  before(async () => {
    hook = await startConversionWebhook();
    t = await startTestServer({ modules: [coreModule, apiextensionsModule, admissionregistrationModule] });
    const conversion = { strategy: "Webhook", webhook: { clientConfig: { url: hook.url, caBundle: hook.caBundle }, conversionReviewVersions: ["v1"] } };
    const crd = await t.request("POST", CRDS, { body: endpointCrd(conversion, group) });
    assert.equal(crd.status, 201, crd.text);
    await served(t, V1);
    await served(t, V2);
  });
  after(async () => {
    await t?.close();
    await hook?.close();
  });

  test("a v2 create is stored as v1 and read back in either version", async () => {
    hook.reviews.length = 0;
    const created = await t.request("POST", V2, { body: { apiVersion: `${group}/v2`, kind: "Endpoint", metadata: { name: "a", labels: { x: "y" } }, spec: { hostPort: "db.local:5432" } } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.apiVersion, `${group}/v2`);
    assert.deepEqual(created.json.spec, { hostPort: "db.local:5432", protocol: "TCP" }, "v2's default applied");
    // Converted to v1 to be stored: the webhook saw a v1 request.
    assert.ok(hook.reviews.some((r) => r.request.desiredAPIVersion === `${group}/v1` && r.apiVersion === "apiextensions.k8s.io/v1" && r.request.objects[0].spec.hostPort === "db.local:5432"));
    const v1 = await t.request("GET", `${V1}/a`);
    assert.equal(v1.status, 200, v1.text);
    assert.equal(v1.json.apiVersion, `${group}/v1`);
    assert.deepEqual(v1.json.spec, { host: "db.local", port: 5432 }, "stored in the storage version (v1), v2-only fields pruned");
    assert.deepEqual(v1.json.metadata.labels, { x: "y" });
    const v2 = await t.request("GET", `${V2}/a`);
    assert.equal(v2.json.apiVersion, `${group}/v2`);
    assert.deepEqual(v2.json.spec, { hostPort: "db.local:5432", protocol: "TCP" }, "converted on read, v2's default applied on read");
    assert.equal(v2.json.metadata.uid, v1.json.metadata.uid);
    assert.equal(v2.json.metadata.resourceVersion, v1.json.metadata.resourceVersion);
  });

  test("lists and watches in v2 are converted; a v1 write shows up converted", async () => {
    const v1 = await t.request("POST", V1, { body: { apiVersion: `${group}/v1`, kind: "Endpoint", metadata: { name: "b" }, spec: { host: "cache", port: 6379 } } });
    assert.equal(v1.status, 201, v1.text);
    const list = await t.request("GET", V2);
    assert.equal(list.status, 200, list.text);
    assert.equal(list.json.apiVersion, `${group}/v2`);
    const b = list.json.items.find((i: any) => i.metadata.name === "b");
    assert.equal(b.apiVersion, `${group}/v2`);
    assert.equal(b.spec.hostPort, "cache:6379");
    const w = await t.watch(`${V2}?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`);
    const patched = await t.request("PATCH", `${V1}/b`, { body: { spec: { port: 6380 } }, headers: { "content-type": "application/merge-patch+json" } });
    assert.equal(patched.status, 200, patched.text);
    const [event] = await w.next(1, 3000);
    w.close();
    assert.equal(event.type, "MODIFIED");
    assert.equal(event.object.apiVersion, `${group}/v2`);
    assert.equal(event.object.spec.hostPort, "cache:6380");
  });

  test("patches and updates through v2 apply to the v2 form and validate by v2's schema", async () => {
    const patched = await t.request("PATCH", `${V2}/b`, { body: { spec: { hostPort: "cache:7000" } }, headers: { "content-type": "application/merge-patch+json" } });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.spec.hostPort, "cache:7000");
    assert.equal((await t.request("GET", `${V1}/b`)).json.spec.port, 7000);
    const bad = await t.request("PATCH", `${V2}/b`, { body: { spec: { hostPort: "no port" } }, headers: { "content-type": "application/merge-patch+json" } });
    assert.equal(bad.status, 422, bad.text);
    assert.match(bad.json.message, /spec.hostPort: Invalid value: "no port": spec.hostPort in body should match/);
    // v1's schema does not know hostPort: the same field through v1 is pruned (and refused when strict).
    const strict = await t.request("POST", `${V1}?fieldValidation=Strict`, { body: { apiVersion: `${group}/v1`, kind: "Endpoint", metadata: { name: "c" }, spec: { host: "h", hostPort: "h:1" } } });
    assert.equal(strict.status, 400, strict.text);
    assert.match(strict.json.message, /unknown field "spec.hostPort"/);
    const missing = await t.request("POST", V2, { body: { apiVersion: `${group}/v2`, kind: "Endpoint", metadata: { name: "c" }, spec: { host: "h" } } });
    assert.equal(missing.status, 422, missing.text);
    assert.match(missing.json.message, /spec.hostPort: Required value/);
    const got = await t.request("GET", `${V2}/b`);
    const put = await t.request("PUT", `${V2}/b`, { body: { ...got.json, spec: { hostPort: "cache:7001" } } });
    assert.equal(put.status, 200, put.text);
    assert.equal((await t.request("GET", `${V1}/b`)).json.spec.port, 7001);
  });

  test("server-side apply through v2 creates and updates", async () => {
    const apply = (hostPort: string) => t.request("PATCH", `${V2}/ssa?fieldManager=test`, {
      rawBody: JSON.stringify({ apiVersion: `${group}/v2`, kind: "Endpoint", metadata: { name: "ssa" }, spec: { hostPort } }),
      headers: { "content-type": "application/apply-patch+yaml" },
    });
    const created = await apply("a:1");
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.spec.hostPort, "a:1");
    const updated = await apply("a:2");
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.json.spec.hostPort, "a:2");
    assert.deepEqual((await t.request("GET", `${V1}/ssa`)).json.spec, { host: "a", port: 2 });
    assert.equal(updated.json.metadata.managedFields[0].apiVersion, `${group}/v2`);
  });

  test("admission webhooks see the object in the request's version", async () => {
    const config = {
      apiVersion: "admissionregistration.orch.io/v1", kind: "ValidatingWebhookConfiguration", metadata: { name: "see" },
      webhooks: [{ name: "see.conv.example.com", admissionReviewVersions: ["v1"], sideEffects: "None", clientConfig: { url: hook.url.replace("/convert", "/admit"), caBundle: hook.caBundle },
        rules: [{ operations: ["CREATE"], apiGroups: [group], apiVersions: ["*"], resources: ["endpoints"] }] }],
    };
    assert.equal((await t.request("POST", "/apis/admissionregistration.orch.io/v1/validatingwebhookconfigurations", { body: config })).status, 201);
    const admitted = () => hook.reviews.filter((r) => r.kind === "AdmissionReview");
    // Through v1, which is not the preferred version (v2 is): the review says v1 and carries the v1 object.
    const body = { apiVersion: `${group}/v1`, kind: "Endpoint", metadata: { name: "seen" }, spec: { host: "s", port: 1 } };
    await until("the webhook to be called", async () => {
      const r = await t.request("POST", V1, { body });
      assert.equal(r.status, 201, r.text);
      if (admitted().length > 0) return true;
      await t.request("DELETE", `${V1}/seen`);
      return undefined;
    }, 3000);
    const review = admitted()[0].request;
    assert.deepEqual(review.kind, { group, version: "v1", kind: "Endpoint" });
    assert.equal(review.resource.version, "v1");
    assert.equal(review.object.apiVersion, `${group}/v1`);
    assert.deepEqual(review.object.spec, { host: "s", port: 1 });
    assert.equal((await t.request("DELETE", "/apis/admissionregistration.orch.io/v1/validatingwebhookconfigurations/see")).status, 200);
  });

  test("each version's Table has its own printer columns", async () => {
    const accept = { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" };
    const v1 = await t.request("GET", V1, { headers: accept });
    assert.equal(v1.status, 200, v1.text);
    assert.deepEqual(v1.json.columnDefinitions.map((c: any) => c.name), ["Name", "Host"]);
    assert.deepEqual(v1.json.rows.find((r: any) => r.cells[0] === "a").cells, ["a", "db.local"]);
    const v2 = await t.request("GET", `${V2}/a`, { headers: accept });
    assert.equal(v2.status, 200, v2.text);
    assert.deepEqual(v2.json.columnDefinitions.map((c: any) => c.name), ["Name", "Age"], "v2 has no printer columns: upstream's Age");
  });

  test("webhook failures are 500s with upstream's text; the server stays up", async () => {
    try {
      hook.mode = "fail";
      const failed = await t.request("GET", `${V2}/a`);
      assert.equal(failed.status, 500, failed.text);
      assert.equal(failed.json.reason, "InternalError");
      assert.equal(failed.json.message, `Internal error occurred: conversion webhook for ${group}/v1, Kind=Endpoint failed: the converter refuses`);
      const listed = await t.request("GET", V2);
      assert.equal(listed.status, 500, listed.text);
      assert.match(listed.json.message, new RegExp(`conversion webhook for ${group}/v1, Kind=EndpointList failed: the converter refuses`));
      const list = await t.request("GET", V1);
      const w = await t.watch(`${V2}?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`);
      assert.equal((await t.request("PATCH", `${V1}/a`, { body: { metadata: { labels: { poke: "1" } } }, headers: { "content-type": "application/merge-patch+json" } })).status, 200);
      const [event] = await w.next(1, 3000);
      w.close();
      assert.equal(event.type, "ERROR", "a watch whose event cannot be converted ends with an ERROR event");
      assert.equal(event.object.code, 500);
      assert.match(event.object.message, /conversion webhook for conv.example.com\/v1, Kind=Endpoint failed: the converter refuses/);
      hook.mode = "wrong-uid";
      const uid = await t.request("GET", `${V2}/a`);
      assert.equal(uid.status, 500);
      assert.match(uid.json.message, /failed: expected response.uid="[0-9a-f-]+", got "nope"/);
      hook.mode = "http-500";
      const http = await t.request("GET", `${V2}/a`);
      assert.equal(http.status, 500);
      assert.match(http.json.message, /conversion webhook for conv.example.com\/v1, Kind=Endpoint failed: .*status code 500/);
      hook.mode = "rename";
      const renamed = await t.request("GET", `${V2}/a`);
      assert.equal(renamed.status, 500);
      assert.match(renamed.json.message, /returned invalid object: must have the same name: a != renamed/);
      const create = await t.request("POST", V2, { body: { apiVersion: `${group}/v2`, kind: "Endpoint", metadata: { name: "z" }, spec: { hostPort: "z:1" } } });
      assert.equal(create.status, 500, create.text);
      assert.equal((await t.request("GET", `${V1}/z`)).status, 404, "nothing stored when conversion to the storage version fails");
      // The storage version needs no webhook.
      assert.equal((await t.request("GET", `${V1}/a`)).status, 200);
    } finally {
      hook.mode = "ok";
    }
    assert.equal((await t.request("GET", `${V2}/a`)).status, 200);
  });

  test("an unreachable webhook: 500 naming the POST", async () => {
    const other = await startConversionWebhook();
    const url = other.url;
    await other.close();
    const conversion = { strategy: "Webhook", webhook: { clientConfig: { url, caBundle: hook.caBundle }, conversionReviewVersions: ["v1beta1"] } };
    const g = "down.example.com";
    assert.equal((await t.request("POST", CRDS, { body: endpointCrd(conversion, g) })).status, 201);
    await served(t, `/apis/${g}/v1/namespaces/default/endpoints`);
    assert.equal((await t.request("POST", `/apis/${g}/v1/namespaces/default/endpoints`, { body: { metadata: { name: "a" }, spec: { host: "h", port: 1 } } })).status, 201);
    const r = await t.request("GET", `/apis/${g}/v2/namespaces/default/endpoints/a`);
    assert.equal(r.status, 500, r.text);
    assert.match(r.json.message, new RegExp(`^Internal error occurred: conversion webhook for ${g}/v1, Kind=Endpoint failed: Post "${url.replace(/[.?]/g, "\\$&")}\\?timeout=30s": `));
  });

  test("v1beta1 ConversionReviews when the definition asks for them", async () => {
    const g = "beta.example.com";
    const conversion = { strategy: "Webhook", webhook: { clientConfig: { url: hook.url, caBundle: hook.caBundle }, conversionReviewVersions: ["v1beta1"] } };
    assert.equal((await t.request("POST", CRDS, { body: endpointCrd(conversion, g) })).status, 201);
    await served(t, `/apis/${g}/v2/namespaces/default/endpoints`);
    hook.reviews.length = 0;
    const created = await t.request("POST", `/apis/${g}/v2/namespaces/default/endpoints`, { body: { metadata: { name: "a" }, spec: { hostPort: "h:9" } } });
    assert.equal(created.status, 201, created.text);
    assert.equal(hook.reviews[0].apiVersion, "apiextensions.k8s.io/v1beta1");
    assert.deepEqual((await t.request("GET", `/apis/${g}/v1/namespaces/default/endpoints/a`)).json.spec, { host: "h", port: 9 });
  });
});

describe("custom resources: conversion None", () => {
  let t: TestServer;
  const group = "none.example.com";
  before(async () => {
    t = await startTestServer({ modules: [coreModule, apiextensionsModule] });
    assert.equal((await t.request("POST", CRDS, { body: endpointCrd({ strategy: "None" }, group) })).status, 201);
    await served(t, `/apis/${group}/v2/namespaces/default/endpoints`);
  });
  after(async () => t?.close());

  test("only apiVersion changes; each version keeps its own schema and defaults", async () => {
    const created = await t.request("POST", `/apis/${group}/v1/namespaces/default/endpoints`, { body: { metadata: { name: "a" }, spec: { host: "h", port: 1 } } });
    assert.equal(created.status, 201, created.text);
    const v2 = await t.request("GET", `/apis/${group}/v2/namespaces/default/endpoints/a`);
    assert.equal(v2.status, 200);
    assert.equal(v2.json.apiVersion, `${group}/v2`);
    // The same object, pruned by v2's schema (host and port are v1's), plus v2's default on read; v1 does not see it.
    assert.deepEqual(v2.json.spec, { protocol: "TCP" });
    assert.deepEqual((await t.request("GET", `/apis/${group}/v1/namespaces/default/endpoints/a`)).json.spec, { host: "h", port: 1 });
    const list = await t.request("GET", `/apis/${group}/v2/endpoints`);
    assert.equal(list.json.items[0].apiVersion, `${group}/v2`);
    assert.equal(list.json.items[0].spec.protocol, "TCP");
  });

  test("a default added to the schema later shows on objects stored before it (defaults on read)", async () => {
    const path = `/apis/${group}/v1/namespaces/default/endpoints/a`;
    assert.equal((await t.request("GET", path)).json.spec.weight, undefined);
    const crd = (await t.request("GET", `${CRDS}/endpoints.${group}`)).json;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.weight = { type: "integer", default: 5 };
    const put = await t.request("PUT", `${CRDS}/endpoints.${group}`, { body: crd });
    assert.equal(put.status, 200, put.text);
    const got = await until("the new default on read", async () => {
      const r = (await t.request("GET", path)).json;
      return r.spec.weight === 5 ? r : undefined;
    }, 3000);
    assert.equal(got.spec.host, "h");
    const listed = (await t.request("GET", `/apis/${group}/v1/endpoints`)).json;
    assert.equal(listed.items[0].spec.weight, 5);
  });
});
