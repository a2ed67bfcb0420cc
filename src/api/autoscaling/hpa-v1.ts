// autoscaling/v1 HorizontalPodAutoscaler: its types (protobuf field numbers
// from k8s.io/api/autoscaling/v1/generated.proto) and its conversion to and
// from v2, the storage version, with upstream's behaviour: v1 holds one CPU
// utilization target (spec.targetCPUUtilizationPercentage) and the current
// CPU utilization; whatever else a v2 object says travels in annotations
// (metrics, current metrics, conditions, behavior) in upstream's encodings,
// so v2 → v1 → v2 keeps every field. Reading v1 without a CPU target and
// without other metrics yields v2's default, cpu at 80 %.

import type { ApiObject } from "../../machinery/index.js";
import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1 } from "../meta/schemas.js";
import type { SpokeVersion } from "../versions.js";
import { AUTOSCALING_V1 } from "./schemas.js";
import type { HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition, HPAScalingRules, MetricSpec, MetricStatus, MetricTarget, MetricValueStatus } from "./horizontalpodautoscalers.js";

const V1 = AUTOSCALING_V1;
const ref = (name: string) => s.ref(`${V1}.${name}`);

/** The round-trip annotations (upstream's autoscaling.alpha.kubernetes.io/metrics, ...), on the naming table's key domain. */
export interface RoundTripAnnotations {
  readonly metrics: string;
  readonly currentMetrics: string;
  readonly conditions: string;
  readonly behavior: string;
}

export function roundTripAnnotations(keyDomain: string): RoundTripAnnotations {
  const prefix = `autoscaling.alpha.${keyDomain}`;
  return { metrics: `${prefix}/metrics`, currentMetrics: `${prefix}/current-metrics`, conditions: `${prefix}/conditions`, behavior: `${prefix}/behavior` };
}

export const HPA_V1_TYPES: readonly TypeDef[] = [
  type(`${V1}.HorizontalPodAutoscaler`, "Scales a scalable resource's replicas on its pods' CPU utilization.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    spec: f(2, ref("HorizontalPodAutoscalerSpec"), "What to scale, between which bounds, at which CPU utilization."),
    status: f(3, ref("HorizontalPodAutoscalerStatus"), "What the autoscaler last saw and did."),
  }),
  type(`${V1}.HorizontalPodAutoscalerList`, "A list of HorizontalPodAutoscalers.", {
    metadata: f(1, s.ref(`${META_V1}.ListMeta`), "Standard list metadata."),
    items: f(2, s.array(ref("HorizontalPodAutoscaler")), "The HorizontalPodAutoscalers.", { required: true }),
  }),
  type(`${V1}.HorizontalPodAutoscalerSpec`, "The autoscaler's target, bounds and CPU target.", {
    scaleTargetRef: f(1, ref("CrossVersionObjectReference"), "The scaled resource (its scale subresource).", { required: true }),
    minReplicas: f(2, s.int32(), "The lower bound (default 1)."),
    maxReplicas: f(3, s.int32(), "The upper bound.", { required: true }),
    targetCPUUtilizationPercentage: f(4, s.int32(), "The target average CPU utilization, in percent of the pods' requests (default 80)."),
  }),
  type(`${V1}.CrossVersionObjectReference`, "A reference to an object in any version.", {
    kind: f(1, s.string(), "The referent's kind.", { required: true }),
    name: f(2, s.string(), "The referent's name.", { required: true }),
    apiVersion: f(3, s.string(), "The referent's API version."),
  }),
  type(`${V1}.HorizontalPodAutoscalerStatus`, "What the autoscaler last saw and did.", {
    observedGeneration: f(1, s.int64(), "The generation last acted on."),
    lastScaleTime: f(2, s.time(), "When the replica count was last changed."),
    currentReplicas: f(3, s.int32(), "The replicas the target had.", { required: true }),
    desiredReplicas: f(4, s.int32(), "The replicas the autoscaler asked for.", { required: true }),
    currentCPUUtilizationPercentage: f(5, s.int32(), "The current average CPU utilization, in percent of the pods' requests."),
  }),
];

type Json = Record<string, unknown>;
interface HpaV1 extends ApiObject {
  spec?: { scaleTargetRef?: Json; minReplicas?: number; maxReplicas?: number; targetCPUUtilizationPercentage?: number };
  status?: { observedGeneration?: number; lastScaleTime?: string; currentReplicas?: number; desiredReplicas?: number; currentCPUUtilizationPercentage?: number };
}

/** Drop undefined members (the JSON form omits them). */
function compact<T extends Json>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}
const clone = <T>(v: T): T => (v === undefined ? v : structuredClone(v));

const isCpuUtilization = (m: MetricSpec) => m.type === "Resource" && m.resource !== undefined && m.resource.name === "cpu" && m.resource.target?.averageUtilization !== undefined;

// ---- v2 metric specs and statuses as v1's (the annotations' element types) ----

type Described = { kind?: string; name?: string; apiVersion?: string };
type Identified = { metric?: { name?: string; selector?: Json }; target?: MetricTarget; current?: MetricValueStatus; describedObject?: Described };

function metricSpecToV1(m: MetricSpec): Json {
  const out: Json = { type: m.type };
  const obj = m.object as Identified | undefined;
  if (obj !== undefined) out.object = compact({ target: clone(obj.describedObject ?? {}), metricName: obj.metric?.name ?? "", targetValue: obj.target?.value, selector: clone(obj.metric?.selector), averageValue: obj.target?.averageValue });
  const pods = m.pods as Identified | undefined;
  if (pods !== undefined) out.pods = compact({ metricName: pods.metric?.name ?? "", targetAverageValue: pods.target?.averageValue, selector: clone(pods.metric?.selector) });
  if (m.resource !== undefined) out.resource = compact({ name: m.resource.name, targetAverageUtilization: m.resource.target?.averageUtilization, targetAverageValue: m.resource.target?.averageValue });
  const cr = m.containerResource;
  if (cr !== undefined) out.containerResource = compact({ name: cr.name, targetAverageUtilization: cr.target?.averageUtilization, targetAverageValue: cr.target?.averageValue, container: cr.container ?? "" });
  const ext = m.external as Identified | undefined;
  if (ext !== undefined) out.external = compact({ metricName: ext.metric?.name ?? "", metricSelector: clone(ext.metric?.selector), targetValue: ext.target?.value, targetAverageValue: ext.target?.averageValue });
  return out;
}

const identifier = (name: unknown, selector: unknown) => compact({ name: (name as string) ?? "", selector: clone(selector) as Json | undefined });

function metricSpecFromV1(m: Json): MetricSpec {
  const out: Json = { type: m.type };
  const obj = m.object as Json | undefined;
  if (obj !== undefined) {
    out.object = {
      describedObject: clone(obj.target ?? {}),
      target: compact({ type: obj.averageValue === undefined ? "Value" : "AverageValue", value: obj.targetValue, averageValue: obj.averageValue }),
      metric: identifier(obj.metricName, obj.selector),
    };
  }
  const pods = m.pods as Json | undefined;
  if (pods !== undefined) out.pods = { metric: identifier(pods.metricName, pods.selector), target: compact({ type: "AverageValue", averageValue: pods.targetAverageValue }) };
  const res = m.resource as Json | undefined;
  if (res !== undefined) out.resource = { name: res.name, target: resourceTarget(res) };
  const cr = m.containerResource as Json | undefined;
  if (cr !== undefined) out.containerResource = { name: cr.name, target: resourceTarget(cr), container: cr.container };
  const ext = m.external as Json | undefined;
  if (ext !== undefined) {
    out.external = {
      metric: identifier(ext.metricName, ext.metricSelector),
      target: compact({ type: ext.targetValue === undefined ? "AverageValue" : "Value", value: ext.targetValue, averageValue: ext.targetAverageValue }),
    };
  }
  return out as MetricSpec;
}

function resourceTarget(src: Json): MetricTarget {
  const utilization = src.targetAverageUtilization as number | undefined;
  return compact({ type: utilization === undefined ? "AverageValue" : "Utilization", averageValue: src.targetAverageValue as string | undefined, averageUtilization: utilization });
}

function metricStatusToV1(m: MetricStatus): Json {
  const out: Json = { type: m.type };
  const any = m as unknown as Record<string, Identified & { name?: string; container?: string }>;
  const obj = any.object;
  if (obj !== undefined) out.object = compact({ target: clone(obj.describedObject ?? {}), metricName: obj.metric?.name ?? "", currentValue: obj.current?.value, selector: clone(obj.metric?.selector), averageValue: obj.current?.averageValue });
  const pods = any.pods;
  if (pods !== undefined) out.pods = compact({ metricName: pods.metric?.name ?? "", currentAverageValue: pods.current?.averageValue, selector: clone(pods.metric?.selector) });
  const res = any.resource;
  if (res !== undefined) out.resource = compact({ name: res.name, currentAverageUtilization: res.current?.averageUtilization, currentAverageValue: res.current?.averageValue });
  const cr = any.containerResource;
  if (cr !== undefined) out.containerResource = compact({ name: cr.name, currentAverageUtilization: cr.current?.averageUtilization, currentAverageValue: cr.current?.averageValue, container: cr.container ?? "" });
  const ext = any.external;
  if (ext !== undefined) out.external = compact({ metricName: ext.metric?.name ?? "", metricSelector: clone(ext.metric?.selector), currentValue: ext.current?.value, currentAverageValue: ext.current?.averageValue });
  return out;
}

function metricStatusFromV1(m: Json): MetricStatus {
  const out: Json = { type: m.type };
  const obj = m.object as Json | undefined;
  if (obj !== undefined) out.object = { metric: identifier(obj.metricName, obj.selector), current: compact({ value: obj.currentValue, averageValue: obj.averageValue }), describedObject: clone(obj.target ?? {}) };
  const pods = m.pods as Json | undefined;
  if (pods !== undefined) out.pods = { metric: identifier(pods.metricName, pods.selector), current: compact({ averageValue: pods.currentAverageValue }) };
  const res = m.resource as Json | undefined;
  if (res !== undefined) out.resource = { name: res.name, current: compact({ averageValue: res.currentAverageValue, averageUtilization: res.currentAverageUtilization }) };
  const cr = m.containerResource as Json | undefined;
  if (cr !== undefined) out.containerResource = { name: cr.name, current: compact({ averageValue: cr.currentAverageValue, averageUtilization: cr.currentAverageUtilization }), container: cr.container };
  const ext = m.external as Json | undefined;
  if (ext !== undefined) out.external = { metric: identifier(ext.metricName, ext.metricSelector), current: compact({ value: ext.currentValue, averageValue: ext.currentAverageValue }) };
  return out as unknown as MetricStatus;
}

// ---- behavior: upstream marshals its internal type, whose JSON names are the Go field names ----

function behaviorToAnnotation(b: { scaleUp?: HPAScalingRules; scaleDown?: HPAScalingRules }): string {
  const rules = (r: HPAScalingRules | undefined) =>
    r === undefined ? null : { StabilizationWindowSeconds: r.stabilizationWindowSeconds ?? null, SelectPolicy: r.selectPolicy ?? null, Policies: r.policies?.map((p) => ({ Type: p.type ?? "", Value: p.value ?? 0, PeriodSeconds: p.periodSeconds ?? 0 })) ?? null };
  return JSON.stringify({ ScaleUp: rules(b.scaleUp), ScaleDown: rules(b.scaleDown) });
}

/** Go's decoder matches field names case-insensitively: so does this one. */
function member(o: unknown, name: string): unknown {
  if (o === null || typeof o !== "object") return undefined;
  const key = Object.keys(o).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : (o as Json)[key];
}

function behaviorFromAnnotation(text: string): { scaleUp?: HPAScalingRules; scaleDown?: HPAScalingRules } | undefined {
  const parsed = parseJson(text);
  const rules = (r: unknown): HPAScalingRules | undefined => {
    if (r === null || typeof r !== "object") return undefined;
    const policies = member(r, "policies");
    return compact({
      stabilizationWindowSeconds: (member(r, "stabilizationWindowSeconds") ?? undefined) as number | undefined,
      selectPolicy: (member(r, "selectPolicy") ?? undefined) as string | undefined,
      policies: Array.isArray(policies) ? policies.map((p) => ({ type: member(p, "type") as string, value: member(p, "value") as number, periodSeconds: member(p, "periodSeconds") as number })) : undefined,
    });
  };
  const out = compact({ scaleUp: rules(member(parsed, "scaleUp")), scaleDown: rules(member(parsed, "scaleDown")) });
  return out.scaleUp === undefined && out.scaleDown === undefined ? undefined : out;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function conditionToV1(c: HorizontalPodAutoscalerCondition): Json {
  return compact({ type: c.type, status: c.status, lastTransitionTime: c.lastTransitionTime, reason: c.reason, message: c.message });
}

// ---- the two directions ----

/** A v2 HorizontalPodAutoscaler as v1 (apiVersion left to the caller). */
export function hpaToV1(obj: ApiObject, keys: RoundTripAnnotations): ApiObject {
  const hpa = obj as HorizontalPodAutoscaler;
  const metadata = structuredClone(hpa.metadata);
  const annotations: Record<string, string> = { ...(metadata.annotations ?? {}) };
  for (const k of Object.values(keys)) delete annotations[k];
  const spec = hpa.spec ?? {};
  const out: HpaV1 = { apiVersion: hpa.apiVersion, kind: hpa.kind, metadata };
  const metrics = spec.metrics ?? [];
  const cpu = metrics.find(isCpuUtilization);
  out.spec = compact({
    scaleTargetRef: clone(spec.scaleTargetRef) as Json | undefined,
    minReplicas: spec.minReplicas,
    maxReplicas: spec.maxReplicas,
    targetCPUUtilizationPercentage: cpu?.resource?.target?.averageUtilization,
  });
  const others = metrics.filter((m) => !isCpuUtilization(m));
  if (others.length > 0) annotations[keys.metrics] = JSON.stringify(others.map(metricSpecToV1));
  const status = hpa.status;
  if (status !== undefined) {
    let currentCPU: number | undefined;
    for (const m of status.currentMetrics ?? []) {
      if (m.type === "Resource" && m.resource?.name === "cpu" && m.resource.current?.averageUtilization !== undefined) currentCPU = m.resource.current.averageUtilization;
    }
    out.status = compact({
      observedGeneration: status.observedGeneration,
      lastScaleTime: status.lastScaleTime,
      currentReplicas: status.currentReplicas,
      desiredReplicas: status.desiredReplicas,
      currentCPUUtilizationPercentage: currentCPU,
    });
    if ((status.currentMetrics ?? []).length > 0) annotations[keys.currentMetrics] = JSON.stringify(status.currentMetrics!.map(metricStatusToV1));
    if ((status.conditions ?? []).length > 0) annotations[keys.conditions] = JSON.stringify(status.conditions!.map(conditionToV1));
  }
  if (spec.behavior != null) annotations[keys.behavior] = behaviorToAnnotation(spec.behavior);
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  return out;
}

/** A v1 HorizontalPodAutoscaler as v2 (apiVersion left to the caller). */
export function hpaFromV1(obj: ApiObject, keys: RoundTripAnnotations): ApiObject {
  const v1 = obj as HpaV1;
  const metadata = structuredClone(v1.metadata ?? {});
  const annotations: Record<string, string> = { ...(metadata.annotations ?? {}) };
  const spec = v1.spec ?? {};
  const out: HorizontalPodAutoscaler = { apiVersion: v1.apiVersion, kind: v1.kind, metadata };
  let metrics: MetricSpec[] = [];
  if (spec.targetCPUUtilizationPercentage != null) metrics = [cpuMetric(spec.targetCPUUtilizationPercentage)];
  const otherMetrics = annotations[keys.metrics] === undefined ? undefined : parseJson(annotations[keys.metrics]);
  // Upstream puts the annotation's metrics first and the CPU target after them.
  if (Array.isArray(otherMetrics)) metrics = [...otherMetrics.map((m) => metricSpecFromV1(m as Json)), ...metrics];
  const behavior = annotations[keys.behavior] === undefined ? undefined : behaviorFromAnnotation(annotations[keys.behavior]);
  // autoscaling/v1's implicit target, made explicit as upstream does in this conversion.
  if (metrics.length === 0) metrics = [cpuMetric(80)];
  out.spec = compact({
    scaleTargetRef: clone(spec.scaleTargetRef) as NonNullable<HorizontalPodAutoscaler["spec"]>["scaleTargetRef"],
    minReplicas: spec.minReplicas,
    maxReplicas: spec.maxReplicas,
    metrics,
    behavior,
  });
  const status = v1.status;
  const currentMetrics = annotations[keys.currentMetrics] === undefined ? undefined : parseJson(annotations[keys.currentMetrics]);
  const conditions = annotations[keys.conditions] === undefined ? undefined : parseJson(annotations[keys.conditions]);
  if (status !== undefined) {
    out.status = compact({
      observedGeneration: status.observedGeneration,
      lastScaleTime: status.lastScaleTime,
      currentReplicas: status.currentReplicas,
      desiredReplicas: status.desiredReplicas,
      currentMetrics: status.currentCPUUtilizationPercentage != null ? [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: status.currentCPUUtilizationPercentage } } }] : undefined,
    });
    // The annotation's statuses say more than currentCPUUtilizationPercentage: they replace it.
    if (Array.isArray(currentMetrics)) out.status.currentMetrics = currentMetrics.map((m) => metricStatusFromV1(m as Json));
    if (Array.isArray(conditions)) out.status.conditions = conditions.map((c) => compact({ ...(c as Json) }) as unknown as HorizontalPodAutoscalerCondition);
  }
  for (const k of Object.values(keys)) delete annotations[k];
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  return out;
}

function cpuMetric(utilization: number): MetricSpec {
  return { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: utilization } } };
}

/** autoscaling/v1 as a spoke of the v2 declaration (src/api/versions.ts), its annotations on `keyDomain`. */
export function hpaV1(keyDomain: string): SpokeVersion {
  const keys = roundTripAnnotations(keyDomain);
  return {
    schema: `${V1}.HorizontalPodAutoscaler`,
    toHub: (obj) => hpaFromV1(obj, keys),
    fromHub: (obj) => hpaToV1(obj, keys),
    defaults(obj) {
      const spec = ((obj as HpaV1).spec ??= {});
      spec.minReplicas ??= 1;
    },
  };
}
