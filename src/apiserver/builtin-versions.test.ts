// A built-in kind served at two versions (autoscaling/v2 and v1
// HorizontalPodAutoscaler) on the real server and store: stored as v2,
// read, listed, watched and written at either version, every patch type
// included, in JSON, Table and Protobuf; v1 writes keep what only v2 says.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../api/index.js";
import { namingFor } from "../machinery/naming.js";
import { decodeEnvelope, encodeEnvelope } from "../machinery/codec/protobuf/index.js";
import { ApiRegistry } from "./api-registry.js";
import { startTestServer, type TestServer } from "./testing/harness.js";

const V1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";
const V2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
const ANN = "autoscaling.alpha.orch.io";
const registry = new ApiRegistry(builtinModules(), namingFor());

const v2Hpa = (name: string) => ({
  apiVersion: "autoscaling/v2",
  kind: "HorizontalPodAutoscaler",
  metadata: { name },
  spec: {
    scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
    minReplicas: 2,
    maxReplicas: 6,
    metrics: [
      { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } } },
      { type: "Resource", resource: { name: "memory", target: { type: "AverageValue", averageValue: "100Mi" } } },
    ],
    behavior: { scaleDown: { stabilizationWindowSeconds: 30, selectPolicy: "Max", policies: [{ type: "Pods", value: 1, periodSeconds: 60 }] } },
  },
});

const MERGE = { "content-type": "application/merge-patch+json" };

describe("HorizontalPodAutoscaler at autoscaling/v1 and v2", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
  });
  after(() => t?.close());

  test("discovery: both versions, v2 preferred", async () => {
    const group = await t.request("GET", "/apis/autoscaling");
    assert.equal(group.status, 200, group.text);
    assert.deepEqual(group.json.versions.map((v: any) => v.version), ["v2", "v1"]);
    assert.equal(group.json.preferredVersion.version, "v2");
    const v1 = await t.request("GET", "/apis/autoscaling/v1");
    const hpa = v1.json.resources.filter((r: any) => r.name.startsWith("horizontalpodautoscalers"));
    assert.deepEqual(hpa.map((r: any) => r.name), ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]);
    assert.deepEqual(hpa[0].shortNames, ["hpa"]);
  });

  test("a v1 create (kubectl autoscale's form) is defaulted in v1, stored as v2, read back in v1 unchanged", async () => {
    const body = { apiVersion: "autoscaling/v1", kind: "HorizontalPodAutoscaler", metadata: { name: "a" }, spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" }, maxReplicas: 4, targetCPUUtilizationPercentage: 50 } };
    const created = await t.request("POST", V1, { body });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.apiVersion, "autoscaling/v1");
    assert.deepEqual(created.json.spec, { ...body.spec, minReplicas: 1 });
    assert.equal(created.json.metadata.annotations, undefined);
    const v2 = await t.request("GET", `${V2}/a`);
    assert.equal(v2.json.apiVersion, "autoscaling/v2");
    assert.deepEqual(v2.json.spec.metrics, [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } } }]);
    assert.equal(v2.json.metadata.resourceVersion, created.json.metadata.resourceVersion);
    const v1 = await t.request("GET", `${V1}/a`);
    assert.deepEqual(v1.json, created.json);
    // Without a CPU target, v2 holds upstream's default: cpu at 80 %.
    const bare = await t.request("POST", V1, { body: { ...body, metadata: { name: "bare" }, spec: { scaleTargetRef: body.spec.scaleTargetRef, maxReplicas: 2 } } });
    assert.equal(bare.status, 201, bare.text);
    assert.equal(bare.json.spec.targetCPUUtilizationPercentage, 80);
  });

  test("a v2 object read, listed and tabled at v1: v2-only fields in the annotations", async () => {
    const created = await t.request("POST", V2, { body: v2Hpa("b") });
    assert.equal(created.status, 201, created.text);
    const v1 = await t.request("GET", `${V1}/b`);
    assert.equal(v1.status, 200, v1.text);
    assert.equal(v1.json.apiVersion, "autoscaling/v1");
    assert.equal(v1.json.spec.targetCPUUtilizationPercentage, 60);
    assert.deepEqual(JSON.parse(v1.json.metadata.annotations[`${ANN}/metrics`]), [{ type: "Resource", resource: { name: "memory", targetAverageValue: "100Mi" } }]);
    const behavior = JSON.parse(v1.json.metadata.annotations[`${ANN}/behavior`]);
    assert.equal(behavior.ScaleDown.StabilizationWindowSeconds, 30);
    assert.equal(behavior.ScaleUp.SelectPolicy, "Max", "v2's defaults for the other direction");
    const list = await t.request("GET", V1);
    assert.equal(list.json.apiVersion, "autoscaling/v1");
    assert.equal(list.json.kind, "HorizontalPodAutoscalerList");
    assert.ok(list.json.items.every((i: any) => i.apiVersion === "autoscaling/v1"));
    assert.ok(list.json.items.some((i: any) => i.metadata.name === "b" && i.spec.targetCPUUtilizationPercentage === 60));
    const table = await t.request("GET", `${V1}/b`, { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } });
    assert.equal(table.status, 200, table.text);
    assert.deepEqual(table.json.columnDefinitions.map((c: any) => c.name), ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"]);
    assert.deepEqual(table.json.rows[0].cells.slice(0, 6), ["b", "Deployment/web", "cpu: <unknown>/60%, memory: <unknown>/100Mi", 2, 6, 0]);
  });

  test("Protobuf at v1: the v1 type's encoding, for an object and a list", async () => {
    const lookup = (apiVersion: string, kind: string) => registry.schemaTypeOf(apiVersion, kind);
    const json = (await t.request("GET", `${V1}/b`)).json;
    const pb = await t.request("GET", `${V1}/b`, { headers: { accept: "application/vnd.kubernetes.protobuf" } });
    assert.equal(pb.headers["content-type"], "application/vnd.kubernetes.protobuf");
    assert.deepEqual(decodeEnvelope(pb.body, registry.schemas, lookup), json);
    const list = await t.request("GET", V1, { headers: { accept: "application/vnd.kubernetes.protobuf" } });
    const decoded = decodeEnvelope(list.body, registry.schemas, lookup) as any;
    assert.equal(decoded.kind, "HorizontalPodAutoscalerList");
    assert.ok(decoded.items.some((i: any) => i.metadata.name === "b" && i.spec.targetCPUUtilizationPercentage === 60));
    // A Protobuf v1 body is accepted too.
    const body = { apiVersion: "autoscaling/v1", kind: "HorizontalPodAutoscaler", metadata: { name: "pb" }, spec: { scaleTargetRef: { kind: "Deployment", name: "web" }, maxReplicas: 3, targetCPUUtilizationPercentage: 40 } };
    const created = await t.request("POST", V1, { rawBody: Buffer.from(encodeEnvelope(body, "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler", registry.schemas)), headers: { "content-type": "application/vnd.kubernetes.protobuf" } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.spec.targetCPUUtilizationPercentage, 40);
  });

  test("a v1 watch sees v2 writes converted", async () => {
    const rv = (await t.request("GET", V1)).json.metadata.resourceVersion;
    const w = await t.watch(`${V1}?watch=true&resourceVersion=${rv}`);
    const patched = await t.request("PATCH", `${V2}/b`, { body: { spec: { maxReplicas: 7 } }, headers: MERGE });
    assert.equal(patched.status, 200, patched.text);
    const [event] = await w.next(1, 3000);
    w.close();
    assert.equal(event.type, "MODIFIED");
    assert.equal(event.object.apiVersion, "autoscaling/v1");
    assert.equal(event.object.spec.maxReplicas, 7);
    assert.equal(event.object.spec.targetCPUUtilizationPercentage, 60);
    assert.ok(event.object.metadata.annotations[`${ANN}/behavior`]);
  });

  test("updates and every patch type at v1 change what v1 says and keep what only v2 says", async () => {
    const current = (await t.request("GET", `${V1}/b`)).json;
    current.spec.maxReplicas = 8;
    const put = await t.request("PUT", `${V1}/b`, { body: current });
    assert.equal(put.status, 200, put.text);
    const steps: [string, Record<string, string>, unknown, (spec: any) => void][] = [
      ["merge", MERGE, { spec: { targetCPUUtilizationPercentage: 65 } }, (s) => assert.equal(s.metrics.find((m: any) => m.resource.name === "cpu").resource.target.averageUtilization, 65)],
      ["json", { "content-type": "application/json-patch+json" }, [{ op: "replace", path: "/spec/minReplicas", value: 3 }], (s) => assert.equal(s.minReplicas, 3)],
      ["strategic", { "content-type": "application/strategic-merge-patch+json" }, { spec: { maxReplicas: 9 } }, (s) => assert.equal(s.maxReplicas, 9)],
      [
        "apply",
        { "content-type": "application/apply-patch+yaml" },
        { apiVersion: "autoscaling/v1", kind: "HorizontalPodAutoscaler", metadata: { name: "b" }, spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" }, maxReplicas: 10, targetCPUUtilizationPercentage: 70 } },
        (s) => assert.deepEqual([s.maxReplicas, s.metrics.find((m: any) => m.resource.name === "cpu").resource.target.averageUtilization], [10, 70]),
      ],
    ];
    for (const [name, headers, body, check] of steps) {
      const query = name === "apply" ? "?fieldManager=tester&force=true" : "";
      const r = await t.request("PATCH", `${V1}/b${query}`, { body, headers });
      assert.equal(r.status, 200, `${name}: ${r.text}`);
      assert.equal(r.json.apiVersion, "autoscaling/v1", name);
      const v2 = (await t.request("GET", `${V2}/b`)).json;
      check(v2.spec);
      assert.deepEqual(v2.spec.metrics.find((m: any) => m.resource.name === "memory"), { type: "Resource", resource: { name: "memory", target: { type: "AverageValue", averageValue: "100Mi" } } }, `${name}: the v2-only metric is kept`);
      assert.equal(v2.spec.behavior.scaleDown.stabilizationWindowSeconds, 30, `${name}: the behavior is kept`);
      assert.equal(v2.metadata.annotations?.[`${ANN}/metrics`], undefined, `${name}: no round-trip annotation is stored`);
    }
    const managers = (await t.request("GET", `${V1}/b`)).json.metadata.managedFields;
    assert.ok(managers.some((m: any) => m.manager === "tester" && m.operation === "Apply" && m.apiVersion === "autoscaling/v1"));
  });

  test("v1 writes are validated on the v2 form with upstream's messages; the status subresource answers at v1", async () => {
    const bad = await t.request("POST", V1, { body: { apiVersion: "autoscaling/v1", kind: "HorizontalPodAutoscaler", metadata: { name: "bad" }, spec: { scaleTargetRef: { kind: "Deployment", name: "web" }, maxReplicas: 0, targetCPUUtilizationPercentage: 0 } } });
    assert.equal(bad.status, 422, bad.text);
    assert.match(bad.json.message, /spec\.maxReplicas: Invalid value: 0: must be greater than 0/);
    assert.match(bad.json.message, /spec\.metrics\[0\]\.resource\.target\.averageUtilization: Invalid value: 0: must be greater than 0/);
    const unknown = await t.request("POST", `${V1}?fieldValidation=Strict`, { body: { apiVersion: "autoscaling/v1", kind: "HorizontalPodAutoscaler", metadata: { name: "strict" }, spec: { scaleTargetRef: { kind: "Deployment", name: "web" }, maxReplicas: 2, metrics: [] } } });
    assert.equal(unknown.status, 400, unknown.text);
    assert.match(unknown.json.message, /unknown field "spec\.metrics"/);
    const status = await t.request("GET", `${V1}/b/status`);
    assert.equal(status.status, 200, status.text);
    assert.equal(status.json.apiVersion, "autoscaling/v1");
    const st = { ...status.json, status: { currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 90 } };
    const put = await t.request("PUT", `${V1}/b/status`, { body: st });
    assert.equal(put.status, 200, put.text);
    const v2 = (await t.request("GET", `${V2}/b`)).json;
    assert.deepEqual(v2.status.currentMetrics, [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: 90 } } }]);
    assert.equal(v2.status.desiredReplicas, 3);
  });
});
