import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import type { LimitRange, Pod } from "../../api/core/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";
import { applyDefaults, podLimitErrors } from "./limit-ranger.js";

const lr = (limits: object[]): LimitRange => ({ apiVersion: "v1", kind: "LimitRange", metadata: { name: "l" }, spec: { limits } });
const pod = (containers: object[], initContainers: object[] = []): Pod => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers, initContainers } as Pod["spec"] });
const c = (name: string, requests?: object, limits?: object) => ({ name, image: "x", resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } });

test("limit ranger: upstream's messages for each bound (table)", () => {
  const cases: [string, object[], Pod, string[]][] = [
    ["max limit", [{ type: "Container", max: { cpu: "1" } }], pod([c("a", { cpu: "500m" }, { cpu: "2" })]), ["maximum cpu usage per Container is 1, but limit is 2"]],
    ["max no limit", [{ type: "Container", max: { memory: "1Gi" } }], pod([c("a")]), ["maximum memory usage per Container is 1Gi.  No limit is specified"]],
    ["max request", [{ type: "Container", max: { cpu: "1" } }], pod([c("a", { cpu: "1500m" }, { cpu: "1" })]), ["maximum cpu usage per Container is 1, but request is 1500m"]],
    ["min no request", [{ type: "Container", min: { cpu: "100m" } }], pod([c("a")]), ["minimum cpu usage per Container is 100m.  No request is specified"]],
    ["min request", [{ type: "Container", min: { cpu: "100m" } }], pod([c("a", { cpu: "50m" })]), ["minimum cpu usage per Container is 100m, but request is 50m"]],
    ["min limit", [{ type: "Container", min: { memory: "64Mi" } }], pod([c("a", { memory: "64Mi" }, { memory: "32Mi" })]), ["minimum memory usage per Container is 64Mi, but limit is 32Mi"]],
    ["ratio", [{ type: "Container", maxLimitRequestRatio: { cpu: "2" } }], pod([c("a", { cpu: "100m" }, { cpu: "300m" })]), ["cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000"]],
    ["ratio no request", [{ type: "Container", maxLimitRequestRatio: { cpu: "2" } }], pod([c("a", undefined, { cpu: "300m" })]), ["cpu max limit to request ratio per Container is 2, but no request is specified or request is 0"]],
    ["pod sum", [{ type: "Pod", max: { cpu: "1" } }], pod([c("a", { cpu: "600m" }, { cpu: "600m" }), c("b", { cpu: "600m" }, { cpu: "600m" })]), ["maximum cpu usage per Pod is 1, but limit is 1200m"]],
    ["pod init max", [{ type: "Pod", max: { memory: "1Gi" } }], pod([c("a", undefined, { memory: "100Mi" })], [c("i", undefined, { memory: "2Gi" })]), ["maximum memory usage per Pod is 1Gi, but limit is 2Gi"]],
    ["init container as container", [{ type: "Container", max: { cpu: "1" } }], pod([c("a", undefined, { cpu: "1" })], [c("i", undefined, { cpu: "2" })]), ["maximum cpu usage per Container is 1, but limit is 2"]],
    ["within", [{ type: "Container", max: { cpu: "1" }, min: { cpu: "100m" } }], pod([c("a", { cpu: "100m" }, { cpu: "1" })]), []],
  ];
  for (const [name, limits, p, want] of cases) assert.deepEqual(podLimitErrors(p, lr(limits)), want, name);
});

test("limit ranger: defaults fill what containers lack, recorded in the annotation", () => {
  const p = pod([c("a", { cpu: "200m" }), c("b", undefined, { memory: "1Gi" })], [c("i")]);
  applyDefaults(p, lr([{ type: "Container", default: { cpu: "1", memory: "512Mi" }, defaultRequest: { cpu: "100m", memory: "256Mi" } }]), "orch.io/limit-ranger");
  const [a, b] = p.spec!.containers!;
  assert.deepEqual(a!.resources, { requests: { cpu: "200m", memory: "256Mi" }, limits: { cpu: "1", memory: "512Mi" } });
  assert.deepEqual(b!.resources, { requests: { cpu: "100m", memory: "256Mi" }, limits: { memory: "1Gi", cpu: "1" } });
  assert.equal(
    p.metadata.annotations?.["orch.io/limit-ranger"],
    "LimitRanger plugin set: memory request for container a; cpu, memory limit for container a; cpu, memory request for container b; cpu limit for container b; cpu, memory request for init container i; cpu, memory limit for init container i",
  );
});

let t: TestServer;
before(async () => {
  t = await startTestServer({ modules: builtinModules() });
});
after(() => t.close());

test("limit ranger on the server: a pod gets the namespace's defaults; one over max is a 403; other namespaces are free", async () => {
  const LR = "/api/v1/namespaces/default/limitranges";
  const created = await t.request("POST", LR, { body: { apiVersion: "v1", kind: "LimitRange", metadata: { name: "cpu" }, spec: { limits: [{ type: "Container", max: { cpu: "1" }, defaultRequest: { cpu: "250m" } }] } } });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.json.spec.limits[0].default, { cpu: "1" });
  const ok = await t.request("POST", "/api/v1/namespaces/default/pods", { body: { apiVersion: "v1", kind: "Pod", metadata: { name: "ok" }, spec: { containers: [{ name: "c", image: "x" }] } } });
  assert.equal(ok.status, 201, ok.text);
  assert.deepEqual(ok.json.spec.containers[0].resources, { requests: { cpu: "250m" }, limits: { cpu: "1" } });
  assert.equal(ok.json.metadata.annotations["orch.io/limit-ranger"], "LimitRanger plugin set: cpu request for container c; cpu limit for container c");
  const big = await t.request("POST", "/api/v1/namespaces/default/pods", { body: { apiVersion: "v1", kind: "Pod", metadata: { name: "big" }, spec: { containers: [{ name: "c", image: "x", resources: { limits: { cpu: "2" } } }] } } });
  assert.equal(big.status, 403);
  assert.equal(big.json.message, 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
  const bad = await t.request("POST", LR, { body: { apiVersion: "v1", kind: "LimitRange", metadata: { name: "bad" }, spec: { limits: [{ type: "Container", min: { cpu: "2" }, max: { cpu: "1" } }] } } });
  assert.equal(bad.status, 422);
  assert.match(bad.json.message, /min value 2 is greater than max value 1/);
  const other = await t.request("POST", "/api/v1/namespaces/orch-public/pods", { body: { apiVersion: "v1", kind: "Pod", metadata: { name: "big" }, spec: { containers: [{ name: "c", image: "x", resources: { limits: { cpu: "2" } } }] } } });
  assert.equal(other.status, 201, other.text);
});
