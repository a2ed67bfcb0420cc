// End to end: HorizontalPodAutoscalers at autoscaling/v1 and v2 with real
// kubectl binaries against `orch apiserver` and `orch controller-manager`:
// `kubectl autoscale` of 1.27 and 1.33 (each version's request recorded),
// a v2 object with a behavior read through `kubectl get hpa.v1.autoscaling`,
// v1 edits that keep v2's fields, `kubectl explain` per version, and the HPA
// controller scaling a Deployment for an HPA created at v1.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/controllers/testing.js";
import { Kubectl, kubectlPath, kubectlSkipReason } from "./support/kubectl.js";
import { startComponent, startOrch, type ComponentProcess, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-hpa-versions-"));
const ANN = "autoscaling.alpha.orch.io";

/** The API version of the HPA `kubectl -v=6` reported creating (its request log line: 1.27's form, then 1.30's structured one). */
function postedVersion(stderr: string): string | undefined {
  const at = String.raw`https://\S+/apis/autoscaling/(v\w+)/namespaces/default/horizontalpodautoscalers[^\s"]*`;
  return (new RegExp(String.raw`POST ${at} 201 Created`).exec(stderr) ?? new RegExp(String.raw`verb="POST" url="${at}" status="201 Created"`).exec(stderr))?.[1];
}

describe("HorizontalPodAutoscaler versions with real kubectl", { skip: kubectlSkipReason() ?? (kubectlPath("1.27") === undefined ? "kubectl 1.27 not installed" : false) }, () => {
  let api: OrchProcess;
  let kcm: ComponentProcess;
  let k: Kubectl;
  let k127: Kubectl;

  before(async () => {
    api = await startOrch("apiserver");
    kcm = await startComponent("controller-manager", [`--kubeconfig=${api.kubeconfig}`, "--secure-port=0", "--horizontal-pod-autoscaler-sync-period=1s"]);
    k = new Kubectl(api.kubeconfig);
    k127 = new Kubectl(api.kubeconfig, "1.27");
    for (const name of ["web", "api", "shop"]) await k.ok("create", "deployment", name, "--image=busybox", "--replicas=1");
  });
  after(async () => {
    await kcm?.stop();
    await api?.stop();
    rmSync(files, { recursive: true, force: true });
  });

  test("kubectl 1.27 autoscale (autoscaling/v1): read at v1 as created, at v2 converted, and the controller scales the Deployment", async () => {
    const r = await k127.run(["autoscale", "deployment", "web", "--min=2", "--max=4", "--cpu-percent=50", "-v=6"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(postedVersion(r.stderr), "v1", "kubectl 1.27 creates HPAs at autoscaling/v1");
    // kubectl 1.27 resolves the short name at the version given; later ones (1.30, 1.33) resolve hpa.v1.autoscaling
    // to the preferred version on the client, so they are given the full name.
    const v1 = JSON.parse(await k127.ok("get", "hpa.v1.autoscaling", "web", "-o", "json"));
    assert.equal(v1.apiVersion, "autoscaling/v1");
    assert.deepEqual([v1.spec.minReplicas, v1.spec.maxReplicas, v1.spec.targetCPUUtilizationPercentage], [2, 4, 50]);
    const v2 = JSON.parse(await k.ok("get", "hpa", "web", "-o", "json"));
    assert.equal(v2.apiVersion, "autoscaling/v2");
    assert.deepEqual(v2.spec.metrics, [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } } }]);
    // Below minReplicas the controller scales without metrics (upstream's first rule).
    await eventually("web scaled to minReplicas", async () => JSON.parse(await k.ok("get", "deployment", "web", "-o", "json")).spec.replicas === 2, 30_000);
    const described = await k127.ok("describe", "hpa", "web");
    assert.match(described, /New size: 2; reason: Current number of replicas below Spec\.MinReplicas/);
  });

  test("kubectl 1.33 autoscale (autoscaling/v2): read back at v1", async () => {
    const r = await k.run(["autoscale", "deployment", "api", "--max=3", "--cpu-percent=70", "-v=6"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(postedVersion(r.stderr), "v2", "kubectl 1.33 creates HPAs at autoscaling/v2");
    const v1 = JSON.parse(await k.ok("get", "horizontalpodautoscalers.v1.autoscaling", "api", "-o", "json"));
    assert.equal(v1.apiVersion, "autoscaling/v1");
    assert.deepEqual([v1.spec.minReplicas, v1.spec.maxReplicas, v1.spec.targetCPUUtilizationPercentage], [1, 3, 70]);
    const v2 = JSON.parse(await k.ok("get", "hpa.v2.autoscaling", "api", "-o", "json"));
    assert.equal(v2.spec.metrics[0].resource.target.averageUtilization, 70);
  });

  test("a v2 HPA with a behavior: kubectl get hpa.v1.autoscaling shows it in v1's terms, v1 edits keep what only v2 says", async () => {
    writeFileSync(join(files, "shop.yaml"), [
      "apiVersion: autoscaling/v2", "kind: HorizontalPodAutoscaler", "metadata: {name: shop}", "spec:",
      "  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: shop}", "  minReplicas: 1", "  maxReplicas: 5",
      "  metrics:",
      "  - {type: Resource, resource: {name: memory, target: {type: AverageValue, averageValue: 200Mi}}}",
      "  - {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}",
      "  behavior:", "    scaleDown: {stabilizationWindowSeconds: 60, policies: [{type: Pods, value: 1, periodSeconds: 30}]}", "",
    ].join("\n"));
    await k.ok("apply", "-f", join(files, "shop.yaml"));
    const v1 = JSON.parse(await k127.ok("get", "hpa.v1.autoscaling", "shop", "-o", "json"));
    assert.equal(v1.apiVersion, "autoscaling/v1");
    assert.equal(v1.spec.targetCPUUtilizationPercentage, 60);
    assert.deepEqual(JSON.parse(v1.metadata.annotations[`${ANN}/metrics`]), [{ type: "Resource", resource: { name: "memory", targetAverageValue: "200Mi" } }]);
    const behavior = JSON.parse(v1.metadata.annotations[`${ANN}/behavior`]);
    assert.equal(behavior.ScaleDown.StabilizationWindowSeconds, 60);
    assert.deepEqual(behavior.ScaleDown.Policies, [{ Type: "Pods", Value: 1, PeriodSeconds: 30 }]);
    const table = await k.ok("get", "horizontalpodautoscalers.v1.autoscaling", "shop");
    assert.match(table, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE\s*$/m);
    assert.match(table, /^shop\s+Deployment\/shop\s+memory: <unknown>\/200Mi, cpu: <unknown>\/60%\s+1\s+5\s+\d+\s+/m);
    // kubectl 1.27 patching at v1 (its HPA version), then editing the v1 form with replace.
    await k127.ok("patch", "hpa.v1.autoscaling", "shop", "--type=merge", "-p", JSON.stringify({ spec: { targetCPUUtilizationPercentage: 75 } }));
    const replaced = { ...v1, metadata: { ...v1.metadata, resourceVersion: undefined }, spec: { ...v1.spec, maxReplicas: 6, targetCPUUtilizationPercentage: 75 } };
    await k127.run(["replace", "-f", "-"], { input: JSON.stringify(replaced) }).then((r) => assert.equal(r.code, 0, r.stderr));
    const after = JSON.parse(await k.ok("get", "hpa.v2.autoscaling", "shop", "-o", "json"));
    assert.equal(after.spec.maxReplicas, 6);
    assert.deepEqual(after.spec.metrics, [
      { type: "Resource", resource: { name: "memory", target: { type: "AverageValue", averageValue: "200Mi" } } },
      { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 75 } } },
    ]);
    assert.equal(after.spec.behavior.scaleDown.stabilizationWindowSeconds, 60);
    assert.equal(after.metadata.annotations?.[`${ANN}/behavior`], undefined, "the round-trip annotations are not stored");
  });

  test("kubectl explain reads each version's own schema", async () => {
    assert.match(await k.ok("explain", "hpa.spec.targetCPUUtilizationPercentage", "--api-version=autoscaling/v1"), /FIELD:\s+targetCPUUtilizationPercentage\s+<integer>/);
    assert.match(await k.ok("explain", "hpa.spec.behavior", "--api-version=autoscaling/v2"), /FIELD:\s+behavior/);
    const r = await k.run(["explain", "hpa.spec.behavior", "--api-version=autoscaling/v1"]);
    assert.notEqual(r.code, 0, "v1 has no behavior field");
  });
});
