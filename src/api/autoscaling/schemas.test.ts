import { test } from "node:test";
import assert from "node:assert/strict";
import { namingFor } from "../../machinery/naming.js";
import { SchemaRegistry } from "../../machinery/schema.js";
import { formatFieldError } from "../../machinery/field-errors.js";
import { autoscalingModule } from "./index.js";
import { defaultHpa, formatTargets, validateHpa, type HorizontalPodAutoscaler } from "./horizontalpodautoscalers.js";

test("autoscaling: the v1 Scale types and the v2 HorizontalPodAutoscaler", () => {
  const registry = new SchemaRegistry();
  autoscalingModule.registerSchemas(registry);
  assert.ok(registry.get("io.k8s.api.autoscaling.v1.Scale"));
  assert.deepEqual(autoscalingModule.resources(namingFor()).map((d) => `${d.group}/${d.versions.join(",")}/${d.resource}`), ["autoscaling/v2,v1/horizontalpodautoscalers"]);
  const status = registry.mustGet("io.k8s.api.autoscaling.v1.ScaleStatus");
  assert.deepEqual([status.fields["replicas"]!.tag, status.fields["selector"]!.tag], [1, 2]);
  const spec = registry.mustGet("io.k8s.api.autoscaling.v2.MetricSpec");
  assert.deepEqual([spec.fields["resource"]!.tag, spec.fields["containerResource"]!.tag, spec.fields["external"]!.tag], [4, 7, 5]);
});

const hpa = (spec: Record<string, unknown>): HorizontalPodAutoscaler => ({ apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler", metadata: { name: "h" }, spec } as HorizontalPodAutoscaler);

test("HPA defaults: minReplicas 1, cpu at 80%, a set behavior filled with upstream's rules", () => {
  const a = hpa({ scaleTargetRef: { kind: "Deployment", name: "web" }, maxReplicas: 3 });
  defaultHpa(a);
  assert.equal(a.spec!.minReplicas, 1);
  assert.deepEqual(a.spec!.metrics, [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } }]);
  assert.equal(a.spec!.behavior, undefined);
  const b = hpa({ scaleTargetRef: { kind: "Deployment", name: "web" }, maxReplicas: 3, behavior: { scaleDown: { stabilizationWindowSeconds: 10 } } });
  defaultHpa(b);
  assert.deepEqual(b.spec!.behavior, {
    scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: "Max", policies: [{ type: "Pods", value: 4, periodSeconds: 15 }, { type: "Percent", value: 100, periodSeconds: 15 }] },
    scaleDown: { stabilizationWindowSeconds: 10, selectPolicy: "Max", policies: [{ type: "Percent", value: 100, periodSeconds: 15 }] },
  });
});

test("HPA validation: upstream's messages", () => {
  const cases: [Record<string, unknown>, string[]][] = [
    [{ maxReplicas: 0, minReplicas: 0 }, [
      "spec.scaleTargetRef.kind: Required value",
      "spec.scaleTargetRef.name: Required value",
      "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
      "spec.maxReplicas: Invalid value: 0: must be greater than 0",
    ]],
    [{ scaleTargetRef: { kind: "Deployment", name: "web" }, minReplicas: 3, maxReplicas: 2 }, ["spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"]],
    [{ scaleTargetRef: { kind: "Deployment", name: "web" }, maxReplicas: 2, metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization" } } }] }, ["spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization"]],
    [{ scaleTargetRef: { kind: "Deployment", name: "web" }, maxReplicas: 2, metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 0 } } }] }, ["spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0", "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization"].slice(0, 1)],
    [{ scaleTargetRef: { kind: "Deployment", name: "web" }, maxReplicas: 2, metrics: [{ type: "Bogus" }] }, ['spec.metrics[0].type: Unsupported value: "Bogus": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"']],
    [{ scaleTargetRef: { kind: "Deployment", name: "web" }, maxReplicas: 2, metrics: [{ type: "Resource" }] }, ["spec.metrics[0].resource: Required value: must populate information for the given metric source"]],
    [{ scaleTargetRef: { kind: "Deployment", name: "web" }, maxReplicas: 2, behavior: { scaleDown: { selectPolicy: "Sometimes", policies: [{ type: "Pods", value: 0, periodSeconds: 1801 }] } } }, [
      'spec.behavior.scaleDown.selectPolicy: Unsupported value: "Sometimes": supported values: "Disabled", "Max", "Min"',
      "spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero",
      "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
    ]],
  ];
  for (const [spec, want] of cases) assert.deepEqual(validateHpa(hpa(spec)).map(formatFieldError), want, JSON.stringify(spec));
});

test("HPA TARGETS cell as kubectl prints it", () => {
  const a = hpa({ metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } } }, { type: "Resource", resource: { name: "memory", target: { type: "AverageValue", averageValue: "100Mi" } } }] });
  assert.equal(formatTargets(a), "cpu: <unknown>/50%, memory: <unknown>/100Mi");
  a.status = { currentMetrics: [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: 250, averageValue: "250m" } } }, { type: "Resource", resource: { name: "memory", current: { averageValue: "20Mi" } } }] };
  assert.equal(formatTargets(a), "cpu: 250%/50%, memory: 20Mi/100Mi");
});
