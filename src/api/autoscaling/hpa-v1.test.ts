import { test } from "node:test";
import assert from "node:assert/strict";
import { namingFor } from "../../machinery/naming.js";
import type { ApiObject } from "../../machinery/index.js";
import { SchemaRegistry } from "../../machinery/schema.js";
import { schemaOf } from "../resource.js";
import { autoscalingModule } from "./index.js";

const upstream = autoscalingModule.resources(namingFor("k8s.io"))[0]!;
const orch = autoscalingModule.resources(namingFor())[0]!;
const convert = async (def: typeof upstream, obj: ApiObject, version: string) => (await def.conversion!.convert([obj], version))[0]!;

/** A v2 object that uses every field v1 lacks. */
const fullV2 = (): ApiObject =>
  ({
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: { name: "web", namespace: "default", annotations: { owner: "team-a" }, resourceVersion: "7" },
    spec: {
      scaleTargetRef: { kind: "Deployment", name: "web", apiVersion: "apps/v1" },
      minReplicas: 2,
      maxReplicas: 10,
      metrics: [
        { type: "Resource", resource: { name: "memory", target: { type: "AverageValue", averageValue: "100Mi" } } },
        { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } } },
        { type: "Pods", pods: { metric: { name: "qps", selector: { matchLabels: { a: "b" } } }, target: { type: "AverageValue", averageValue: "10" } } },
        { type: "Object", object: { describedObject: { kind: "Ingress", name: "main", apiVersion: "networking.k8s.io/v1" }, metric: { name: "hits" }, target: { type: "Value", value: "2k" } } },
        { type: "External", external: { metric: { name: "queue", selector: { matchLabels: { q: "jobs" } } }, target: { type: "AverageValue", averageValue: "30" } } },
        { type: "ContainerResource", containerResource: { name: "cpu", container: "app", target: { type: "Utilization", averageUtilization: 70 } } },
      ],
      behavior: {
        scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: "Max", policies: [{ type: "Pods", value: 4, periodSeconds: 15 }] },
        scaleDown: { stabilizationWindowSeconds: 300, selectPolicy: "Min", policies: [{ type: "Percent", value: 10, periodSeconds: 60 }] },
      },
    },
    status: {
      observedGeneration: 3,
      lastScaleTime: "2026-11-28T09:00:00Z",
      currentReplicas: 3,
      desiredReplicas: 4,
      currentMetrics: [
        { type: "Resource", resource: { name: "memory", current: { averageValue: "80Mi" } } },
        { type: "Resource", resource: { name: "cpu", current: { averageValue: "300m", averageUtilization: 75 } } },
        { type: "Pods", pods: { metric: { name: "qps" }, current: { averageValue: "12" } } },
      ],
      conditions: [
        { type: "AbleToScale", status: "True", lastTransitionTime: "2026-11-28T08:00:00Z", reason: "ReadyForNewScale", message: "recommended size matches current size" },
        { type: "ScalingActive", status: "True", lastTransitionTime: "2026-11-28T08:00:00Z", reason: "ValidMetricFound", message: "ok" },
      ],
    },
  }) as unknown as ApiObject;

test("HPA v2 → v1 → v2 keeps every field (the rest travels in upstream's four annotations)", async () => {
  const v2 = fullV2();
  const v1 = await convert(upstream, structuredClone(v2), "v1");
  assert.equal(v1.apiVersion, "autoscaling/v1");
  const spec = (v1 as any).spec;
  assert.deepEqual(spec, { scaleTargetRef: { kind: "Deployment", name: "web", apiVersion: "apps/v1" }, minReplicas: 2, maxReplicas: 10, targetCPUUtilizationPercentage: 60 });
  assert.deepEqual((v1 as any).status, { observedGeneration: 3, lastScaleTime: "2026-11-28T09:00:00Z", currentReplicas: 3, desiredReplicas: 4, currentCPUUtilizationPercentage: 75 });
  const a = v1.metadata.annotations!;
  assert.deepEqual(Object.keys(a).sort(), ["autoscaling.alpha.kubernetes.io/behavior", "autoscaling.alpha.kubernetes.io/conditions", "autoscaling.alpha.kubernetes.io/current-metrics", "autoscaling.alpha.kubernetes.io/metrics", "owner"]);
  // upstream's encodings: v1 metric types, and the internal behavior type's Go field names
  const metrics = JSON.parse(a["autoscaling.alpha.kubernetes.io/metrics"]!);
  assert.equal(metrics.length, 5, "every metric but the CPU utilization target");
  assert.equal(a["autoscaling.alpha.kubernetes.io/metrics"]!.slice(0, 72), '[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}}'.slice(0, 72));
  assert.deepEqual(metrics[3], { type: "External", external: { metricName: "queue", metricSelector: { matchLabels: { q: "jobs" } }, targetAverageValue: "30" } });
  assert.deepEqual(metrics[2], { type: "Object", object: { target: { kind: "Ingress", name: "main", apiVersion: "networking.k8s.io/v1" }, metricName: "hits", targetValue: "2k" } });
  assert.equal(
    a["autoscaling.alpha.kubernetes.io/behavior"],
    '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}]},"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Min","Policies":[{"Type":"Percent","Value":10,"PeriodSeconds":60}]}}',
  );
  assert.deepEqual(JSON.parse(a["autoscaling.alpha.kubernetes.io/current-metrics"]!)[1], { type: "Resource", resource: { name: "cpu", currentAverageUtilization: 75, currentAverageValue: "300m" } });
  const back = await convert(upstream, v1, "v2");
  // The CPU utilization target comes back after the annotation's metrics (upstream's order).
  const want = fullV2() as any;
  const [cpu] = want.spec.metrics.splice(1, 1);
  want.spec.metrics.push(cpu);
  assert.deepEqual(back, want);
  // ... so a second round trip is exact.
  assert.deepEqual(await convert(upstream, await convert(upstream, structuredClone(back), "v1"), "v2"), back);
});

test("HPA v1 → v2 → v1 is exact; without a CPU target v2 gets upstream's 80 %", async () => {
  const v1 = {
    apiVersion: "autoscaling/v1",
    kind: "HorizontalPodAutoscaler",
    metadata: { name: "web", namespace: "default", labels: { app: "web" } },
    spec: { scaleTargetRef: { kind: "Deployment", name: "web", apiVersion: "apps/v1" }, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 50 },
    status: { currentReplicas: 2, desiredReplicas: 2, currentCPUUtilizationPercentage: 40 },
  } as unknown as ApiObject;
  const v2 = await convert(orch, structuredClone(v1), "v2");
  assert.deepEqual((v2 as any).spec.metrics, [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } } }]);
  assert.deepEqual((v2 as any).status.currentMetrics, [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: 40 } } }]);
  const back = await convert(orch, v2, "v1");
  // v2's current metrics say no more than v1's: they still travel in the annotation, as upstream's do.
  assert.deepEqual(JSON.parse(back.metadata.annotations!["autoscaling.alpha.orch.io/current-metrics"]!), [{ type: "Resource", resource: { name: "cpu", currentAverageUtilization: 40 } }]);
  delete back.metadata.annotations!["autoscaling.alpha.orch.io/current-metrics"];
  assert.deepEqual(back, { ...v1, metadata: { ...v1.metadata, annotations: {} } });
  const noTarget = structuredClone(v1) as any;
  delete noTarget.spec.targetCPUUtilizationPercentage;
  assert.deepEqual((await convert(orch, noTarget, "v2") as any).spec.metrics, [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } }]);
});

test("HPA v1: a malformed round-trip annotation is ignored, as upstream ignores what it cannot decode", async () => {
  const v1 = {
    apiVersion: "autoscaling/v1",
    kind: "HorizontalPodAutoscaler",
    metadata: { name: "web", annotations: { "autoscaling.alpha.orch.io/metrics": "{not json", "autoscaling.alpha.orch.io/behavior": "[]" } },
    spec: { scaleTargetRef: { kind: "Deployment", name: "web" }, maxReplicas: 5, targetCPUUtilizationPercentage: 50 },
  } as unknown as ApiObject;
  const v2 = (await convert(orch, v1, "v2")) as any;
  assert.deepEqual(v2.spec.metrics, [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } } }]);
  assert.equal(v2.spec.behavior, undefined);
  assert.equal(v2.metadata.annotations, undefined, "the round-trip annotations are dropped");
});

test("HPA is served at v2 (preferred, stored) and v1, each with its own type", () => {
  const registry = new SchemaRegistry();
  autoscalingModule.registerSchemas(registry);
  assert.deepEqual(orch.versions, ["v2", "v1"]);
  assert.equal(orch.storageVersion, "v2");
  assert.equal(schemaOf(orch, "v1"), "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler");
  assert.equal(schemaOf(orch, "v2"), "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler");
  const spec = registry.mustGet("io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerSpec");
  assert.deepEqual([spec.fields["minReplicas"]!.tag, spec.fields["targetCPUUtilizationPercentage"]!.tag], [2, 4]);
  assert.ok(registry.get("io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerList"));
});
