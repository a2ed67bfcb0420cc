// autoscaling/v2 HorizontalPodAutoscaler: upstream's field set (protobuf
// field numbers from k8s.io/api/autoscaling/v2/generated.proto), defaults
// (minReplicas 1; no metrics: cpu at 80% utilization; a behavior that is set
// gets upstream's scale-up and scale-down rules filled in), validation with
// upstream's messages, the status subresource and `kubectl get hpa`'s columns.

import { field, type ApiObject, type FieldError } from "../../machinery/index.js";
import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1 } from "../meta/schemas.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { status } from "../subresources/index.js";
import { nameAgeTable } from "../table-format.js";
import { parseQuantity } from "../core/quantity.js";

export const AUTOSCALING_V2 = "io.k8s.api.autoscaling.v2";
const V2 = AUTOSCALING_V2;
const ref = (name: string) => s.ref(`${V2}.${name}`);

export const HPA_TYPES: readonly TypeDef[] = [
  type(`${V2}.HorizontalPodAutoscaler`, "Scales a scalable resource's replicas on its pods' metrics.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    spec: f(2, ref("HorizontalPodAutoscalerSpec"), "What to scale, between which bounds, on which metrics."),
    status: f(3, ref("HorizontalPodAutoscalerStatus"), "What the autoscaler last saw and did."),
  }),
  type(`${V2}.HorizontalPodAutoscalerList`, "A list of HorizontalPodAutoscalers.", {
    metadata: f(1, s.ref(`${META_V1}.ListMeta`), "Standard list metadata."),
    items: f(2, s.array(ref("HorizontalPodAutoscaler")), "The HorizontalPodAutoscalers.", { required: true }),
  }),
  type(`${V2}.HorizontalPodAutoscalerSpec`, "The autoscaler's target, bounds, metrics and behavior.", {
    scaleTargetRef: f(1, ref("CrossVersionObjectReference"), "The scaled resource (its scale subresource).", { required: true }),
    minReplicas: f(2, s.int32(), "The lower bound (default 1)."),
    maxReplicas: f(3, s.int32(), "The upper bound.", { required: true }),
    metrics: f(4, s.array(ref("MetricSpec"), { listType: "atomic" }), "The metrics the replica count follows (default: cpu at 80% utilization)."),
    behavior: f(5, ref("HorizontalPodAutoscalerBehavior"), "How fast to scale up and down."),
  }),
  type(`${V2}.CrossVersionObjectReference`, "A reference to an object in any version.", {
    kind: f(1, s.string(), "The referent's kind.", { required: true }),
    name: f(2, s.string(), "The referent's name.", { required: true }),
    apiVersion: f(3, s.string(), "The referent's API version."),
  }),
  type(`${V2}.HorizontalPodAutoscalerBehavior`, "Scaling rules for each direction.", {
    scaleUp: f(1, ref("HPAScalingRules"), "Rules when scaling up."),
    scaleDown: f(2, ref("HPAScalingRules"), "Rules when scaling down."),
  }),
  type(`${V2}.HPAScalingRules`, "How much may change per period, and over which window recommendations are smoothed.", {
    stabilizationWindowSeconds: f(3, s.int32(), "Recommendations of this many past seconds are considered."),
    selectPolicy: f(1, s.string(), "Max, Min or Disabled."),
    policies: f(2, s.array(ref("HPAScalingPolicy"), { listType: "atomic" }), "The allowed changes."),
  }),
  type(`${V2}.HPAScalingPolicy`, "One allowed change per period.", {
    type: f(1, s.string(), "Pods or Percent.", { required: true }),
    value: f(2, s.int32(), "The amount.", { required: true }),
    periodSeconds: f(3, s.int32(), "The period (1 to 1800 s).", { required: true }),
  }),
  type(`${V2}.MetricSpec`, "One metric and its target.", {
    type: f(1, s.string(), "Object, Pods, Resource, ContainerResource or External.", { required: true }),
    object: f(2, ref("ObjectMetricSource"), "A metric of one object."),
    pods: f(3, ref("PodsMetricSource"), "A metric of each pod, averaged."),
    resource: f(4, ref("ResourceMetricSource"), "A resource (cpu, memory) of each pod, from the metrics API."),
    containerResource: f(7, ref("ContainerResourceMetricSource"), "A resource of one container of each pod."),
    external: f(5, ref("ExternalMetricSource"), "A metric from outside the cluster."),
  }),
  type(`${V2}.MetricTarget`, "The target of a metric.", {
    type: f(1, s.string(), "Utilization, Value or AverageValue.", { required: true }),
    value: f(2, s.quantity(), "The target value."),
    averageValue: f(3, s.quantity(), "The target value per pod."),
    averageUtilization: f(4, s.int32(), "The target percentage of the pods' requests."),
  }),
  type(`${V2}.MetricValueStatus`, "The current value of a metric.", {
    value: f(1, s.quantity(), "The value."),
    averageValue: f(2, s.quantity(), "The value per pod."),
    averageUtilization: f(3, s.int32(), "The percentage of the pods' requests."),
  }),
  type(`${V2}.MetricIdentifier`, "A metric's name and selector.", {
    name: f(1, s.string(), "The metric's name.", { required: true }),
    selector: f(2, s.ref(`${META_V1}.LabelSelector`), "Narrows the metric's series."),
  }),
  type(`${V2}.ResourceMetricSource`, "A resource of the pods.", {
    name: f(1, s.string(), "cpu or memory.", { required: true }),
    target: f(2, ref("MetricTarget"), "The target.", { required: true }),
  }),
  type(`${V2}.ContainerResourceMetricSource`, "A resource of one container of the pods.", {
    name: f(1, s.string(), "cpu or memory.", { required: true }),
    target: f(2, ref("MetricTarget"), "The target.", { required: true }),
    container: f(3, s.string(), "The container's name.", { required: true }),
  }),
  type(`${V2}.PodsMetricSource`, "A custom metric of the pods.", {
    metric: f(1, ref("MetricIdentifier"), "The metric.", { required: true }),
    target: f(2, ref("MetricTarget"), "The target.", { required: true }),
  }),
  type(`${V2}.ObjectMetricSource`, "A custom metric of one object.", {
    describedObject: f(1, ref("CrossVersionObjectReference"), "The object.", { required: true }),
    target: f(2, ref("MetricTarget"), "The target.", { required: true }),
    metric: f(3, ref("MetricIdentifier"), "The metric.", { required: true }),
  }),
  type(`${V2}.ExternalMetricSource`, "An external metric.", {
    metric: f(1, ref("MetricIdentifier"), "The metric.", { required: true }),
    target: f(2, ref("MetricTarget"), "The target.", { required: true }),
  }),
  type(`${V2}.HorizontalPodAutoscalerStatus`, "What the autoscaler last saw and did.", {
    observedGeneration: f(1, s.int64(), "The generation last acted on."),
    lastScaleTime: f(2, s.time(), "When the replica count was last changed."),
    currentReplicas: f(3, s.int32(), "The replicas the target had."),
    desiredReplicas: f(4, s.int32(), "The replicas the autoscaler asked for.", { required: true }),
    currentMetrics: f(5, s.array(ref("MetricStatus"), { listType: "atomic" }), "The metrics' last values."),
    conditions: f(6, s.array(ref("HorizontalPodAutoscalerCondition"), { listType: "map", listMapKeys: ["type"] }), "AbleToScale, ScalingActive, ScalingLimited."),
  }),
  type(`${V2}.HorizontalPodAutoscalerCondition`, "One condition of the autoscaler.", {
    type: f(1, s.string(), "AbleToScale, ScalingActive or ScalingLimited.", { required: true }),
    status: f(2, s.string(), "True, False or Unknown.", { required: true }),
    lastTransitionTime: f(3, s.time(), "When the status last changed."),
    reason: f(4, s.string(), "Why, in CamelCase."),
    message: f(5, s.string(), "Why, for humans."),
  }),
  type(`${V2}.MetricStatus`, "The current value of one metric.", {
    type: f(1, s.string(), "The source type.", { required: true }),
    object: f(2, ref("ObjectMetricStatus"), ""),
    pods: f(3, ref("PodsMetricStatus"), ""),
    resource: f(4, ref("ResourceMetricStatus"), ""),
    containerResource: f(7, ref("ContainerResourceMetricStatus"), ""),
    external: f(5, ref("ExternalMetricStatus"), ""),
  }),
  type(`${V2}.ResourceMetricStatus`, "", { name: f(1, s.string(), "", { required: true }), current: f(2, ref("MetricValueStatus"), "", { required: true }) }),
  type(`${V2}.ContainerResourceMetricStatus`, "", { name: f(1, s.string(), "", { required: true }), current: f(2, ref("MetricValueStatus"), "", { required: true }), container: f(3, s.string(), "", { required: true }) }),
  type(`${V2}.PodsMetricStatus`, "", { metric: f(1, ref("MetricIdentifier"), "", { required: true }), current: f(2, ref("MetricValueStatus"), "", { required: true }) }),
  type(`${V2}.ObjectMetricStatus`, "", { metric: f(1, ref("MetricIdentifier"), "", { required: true }), current: f(2, ref("MetricValueStatus"), "", { required: true }), describedObject: f(3, ref("CrossVersionObjectReference"), "", { required: true }) }),
  type(`${V2}.ExternalMetricStatus`, "", { metric: f(1, ref("MetricIdentifier"), "", { required: true }), current: f(2, ref("MetricValueStatus"), "", { required: true }) }),
];

export interface MetricTarget { type?: string; value?: string; averageValue?: string; averageUtilization?: number }
export interface MetricValueStatus { value?: string; averageValue?: string; averageUtilization?: number }
export interface ResourceMetricSource { name?: string; target?: MetricTarget; container?: string }
export interface MetricSpec {
  type?: string;
  resource?: ResourceMetricSource;
  containerResource?: ResourceMetricSource;
  pods?: { metric?: { name?: string }; target?: MetricTarget };
  object?: { metric?: { name?: string }; target?: MetricTarget; describedObject?: { kind?: string; name?: string } };
  external?: { metric?: { name?: string }; target?: MetricTarget };
}
export interface HPAScalingPolicy { type?: string; value?: number; periodSeconds?: number }
export interface HPAScalingRules { stabilizationWindowSeconds?: number; selectPolicy?: string; policies?: HPAScalingPolicy[] }
export interface HorizontalPodAutoscalerCondition { type: string; status: string; lastTransitionTime?: string; reason?: string; message?: string }
export interface MetricStatus { type: string; resource?: { name: string; current: MetricValueStatus }; containerResource?: { name: string; container: string; current: MetricValueStatus } }
export interface HorizontalPodAutoscaler extends ApiObject {
  spec?: {
    scaleTargetRef?: { kind?: string; name?: string; apiVersion?: string };
    minReplicas?: number;
    maxReplicas?: number;
    metrics?: MetricSpec[];
    behavior?: { scaleUp?: HPAScalingRules; scaleDown?: HPAScalingRules };
  };
  status?: {
    observedGeneration?: number;
    lastScaleTime?: string;
    currentReplicas?: number;
    desiredReplicas?: number;
    currentMetrics?: MetricStatus[];
    conditions?: HorizontalPodAutoscalerCondition[];
  };
}

/** upstream's default rules: scale up at once by max(4 pods, 100%) per 15 s; scale down after a 300 s window by up to 100% per 15 s. */
export function defaultScaleUp(): HPAScalingRules {
  return { stabilizationWindowSeconds: 0, selectPolicy: "Max", policies: [{ type: "Pods", value: 4, periodSeconds: 15 }, { type: "Percent", value: 100, periodSeconds: 15 }] };
}
export function defaultScaleDown(): HPAScalingRules {
  return { stabilizationWindowSeconds: 300, selectPolicy: "Max", policies: [{ type: "Percent", value: 100, periodSeconds: 15 }] };
}

function fillRules(rules: HPAScalingRules | undefined, defaults: HPAScalingRules): HPAScalingRules {
  const out = { ...(rules ?? {}) };
  out.stabilizationWindowSeconds ??= defaults.stabilizationWindowSeconds!;
  out.selectPolicy ??= defaults.selectPolicy!;
  if (out.policies === undefined || out.policies.length === 0) out.policies = defaults.policies!;
  return out;
}

export function defaultHpa(obj: HorizontalPodAutoscaler): void {
  const spec = (obj.spec ??= {});
  spec.minReplicas ??= 1;
  if (spec.metrics === undefined || spec.metrics.length === 0) {
    spec.metrics = [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } }];
  }
  if (spec.behavior != null) {
    spec.behavior = { scaleUp: fillRules(spec.behavior.scaleUp, defaultScaleUp()), scaleDown: fillRules(spec.behavior.scaleDown, defaultScaleDown()) };
  }
}

const SOURCE_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"];
const SOURCE_FIELD: Record<string, keyof MetricSpec> = { Object: "object", Pods: "pods", Resource: "resource", ContainerResource: "containerResource", External: "external" };
function positiveQuantity(q: string | undefined): boolean {
  return (parseQuantity(q) ?? 0) > 0;
}

function validateTarget(t: MetricTarget | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (t === undefined) return errs;
  if (!t.type) errs.push(field.required(`${path}.type`, "must specify a metric target type"));
  else if (!["Utilization", "Value", "AverageValue"].includes(t.type)) errs.push(field.invalid(`${path}.type`, t.type, "must be either Utilization, Value, or AverageValue"));
  if (t.value !== undefined && !positiveQuantity(t.value)) errs.push(field.invalid(`${path}.value`, t.value, "must be positive"));
  if (t.averageValue !== undefined && !positiveQuantity(t.averageValue)) errs.push(field.invalid(`${path}.averageValue`, t.averageValue, "must be positive"));
  if (t.averageUtilization !== undefined && t.averageUtilization < 1) errs.push(field.invalid(`${path}.averageUtilization`, t.averageUtilization, "must be greater than 0"));
  return errs;
}

function validateResourceSource(src: ResourceMetricSource, path: string, container: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (!src.name) errs.push(field.required(`${path}.name`, "must specify a resource name"));
  if (container && !src.container) errs.push(field.required(`${path}.container`, "must specify a container"));
  if (src.target === undefined) return [...errs, field.required(`${path}.target`, "must specify a metric target")];
  errs.push(...validateTarget(src.target, `${path}.target`));
  if (src.target.averageUtilization === undefined && src.target.averageValue === undefined) errs.push(field.required(`${path}.target.averageUtilization`, "must set either a target raw value or a target utilization"));
  if (src.target.averageUtilization !== undefined && src.target.averageValue !== undefined) errs.push(field.forbidden(`${path}.target.averageValue`, "may not set both a target raw value and a target utilization"));
  return errs;
}

function validateRules(rules: HPAScalingRules | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (rules === undefined) return errs;
  const w = rules.stabilizationWindowSeconds;
  if (w !== undefined && w < 0) errs.push(field.invalid(`${path}.stabilizationWindowSeconds`, w, "must be greater than or equal to zero"));
  if (w !== undefined && w > 3600) errs.push(field.invalid(`${path}.stabilizationWindowSeconds`, w, "must be less than or equal to 3600"));
  if (rules.selectPolicy !== undefined && !["Disabled", "Max", "Min"].includes(rules.selectPolicy)) errs.push(field.notSupported(`${path}.selectPolicy`, rules.selectPolicy, ["Disabled", "Max", "Min"]));
  if (rules.policies !== undefined && rules.policies.length === 0) errs.push(field.required(`${path}.policies`, "must specify at least one Policy"));
  (rules.policies ?? []).forEach((p, i) => {
    const at = `${path}.policies[${i}]`;
    if (!["Pods", "Percent"].includes(p.type ?? "")) errs.push(field.notSupported(`${at}.type`, p.type ?? "", ["Percent", "Pods"]));
    if (!((p.value ?? 0) > 0)) errs.push(field.invalid(`${at}.value`, p.value ?? 0, "must be greater than zero"));
    if (!((p.periodSeconds ?? 0) > 0)) errs.push(field.invalid(`${at}.periodSeconds`, p.periodSeconds ?? 0, "must be greater than zero"));
    else if (p.periodSeconds! > 1800) errs.push(field.invalid(`${at}.periodSeconds`, p.periodSeconds, "must be less than or equal to 1800"));
  });
  return errs;
}

export function validateHpa(obj: HorizontalPodAutoscaler): FieldError[] {
  const spec = obj.spec ?? {};
  const errs: FieldError[] = [];
  const target = spec.scaleTargetRef ?? {};
  if (!target.kind) errs.push(field.required("spec.scaleTargetRef.kind", ""));
  else if (target.kind.includes("/") || target.kind.includes("%")) errs.push(field.invalid("spec.scaleTargetRef.kind", target.kind, `may not contain '/'`));
  if (!target.name) errs.push(field.required("spec.scaleTargetRef.name", ""));
  else if (target.name.includes("/") || target.name.includes("%")) errs.push(field.invalid("spec.scaleTargetRef.name", target.name, `may not contain '/'`));
  if (spec.minReplicas !== undefined && spec.minReplicas < 1) errs.push(field.invalid("spec.minReplicas", spec.minReplicas, "must be greater than or equal to 1"));
  const max = spec.maxReplicas ?? 0;
  if (max < 1) errs.push(field.invalid("spec.maxReplicas", max, "must be greater than 0"));
  if (spec.minReplicas !== undefined && max < spec.minReplicas) errs.push(field.invalid("spec.maxReplicas", max, "must be greater than or equal to `minReplicas`"));
  (spec.metrics ?? []).forEach((m, i) => {
    const at = `spec.metrics[${i}]`;
    if (!m.type) return errs.push(field.required(`${at}.type`, "must specify a metric source type"));
    if (!SOURCE_TYPES.includes(m.type)) return errs.push(field.notSupported(`${at}.type`, m.type, SOURCE_TYPES));
    const own = SOURCE_FIELD[m.type]!;
    for (const key of Object.values(SOURCE_FIELD)) if (key !== own && m[key] !== undefined) errs.push(field.forbidden(`${at}.${key}`, "must populate the given metric source only"));
    const src = m[own];
    if (src === undefined) return errs.push(field.required(`${at}.${own}`, "must populate information for the given metric source"));
    if (own === "resource" || own === "containerResource") errs.push(...validateResourceSource(src as ResourceMetricSource, `${at}.${own}`, own === "containerResource"));
    else {
      const custom = src as { metric?: { name?: string }; target?: MetricTarget };
      if (!custom.metric?.name) errs.push(field.required(`${at}.${own}.metric.name`, "must specify a metric name"));
      errs.push(...validateTarget(custom.target, `${at}.${own}.target`));
    }
    return undefined;
  });
  errs.push(...validateRules(spec.behavior?.scaleUp, "spec.behavior.scaleUp"), ...validateRules(spec.behavior?.scaleDown, "spec.behavior.scaleDown"));
  return errs;
}

/** kubectl's TARGETS cell: `cpu: 250%/50%`, `memory: 10Mi/20Mi`, `<unknown>` before a measurement. */
export function formatTargets(hpa: HorizontalPodAutoscaler): string {
  const specs = hpa.spec?.metrics ?? [];
  if (specs.length === 0) return "<none>";
  const current = hpa.status?.currentMetrics ?? [];
  const parts = specs.map((m, i) => {
    const src = m.type === "ContainerResource" ? m.containerResource : m.resource;
    if (src === undefined) return `<${m.type}>`;
    const st = current[i]?.type === m.type ? (m.type === "ContainerResource" ? current[i]?.containerResource?.current : current[i]?.resource?.current) : undefined;
    const t = src.target ?? {};
    if (t.averageUtilization !== undefined) return `${src.name}: ${st?.averageUtilization !== undefined ? `${st.averageUtilization}%` : "<unknown>"}/${t.averageUtilization}%`;
    return `${src.name}: ${st?.averageValue ?? "<unknown>"}/${t.averageValue ?? t.value ?? "<unknown>"}`;
  });
  return parts.length > 3 ? `${parts.slice(0, 3).join(", ")} + ${parts.length - 3} more...` : parts.join(", ");
}

export const horizontalPodAutoscalers: ResourceDefinition = defineResource<HorizontalPodAutoscaler>({
  group: "autoscaling",
  versions: ["v2"],
  resource: "horizontalpodautoscalers",
  singular: "horizontalpodautoscaler",
  kind: "HorizontalPodAutoscaler",
  namespaced: true,
  shortNames: ["hpa"],
  categories: ["all"],
  schema: `${V2}.HorizontalPodAutoscaler`,
  subresources: [status()],
  defaults: defaultHpa,
  prepareForCreate(obj) {
    delete obj.status;
  },
  validate: (obj) => validateHpa(obj),
  validateUpdate: (obj) => validateHpa(obj),
  table: nameAgeTable<HorizontalPodAutoscaler>({
    columns: [
      { name: "Reference", type: "string", description: "The scaled object.", priority: 0 },
      { name: "Targets", type: "string", description: "The metrics' current values and targets.", priority: 0 },
      { name: "MinPods", type: "string", description: "The lower bound of replicas.", priority: 0 },
      { name: "MaxPods", type: "integer", description: "The upper bound of replicas.", priority: 0 },
      { name: "Replicas", type: "integer", description: "The target's replicas last seen.", priority: 0 },
    ],
    cells: (h) => [
      `${h.spec?.scaleTargetRef?.kind ?? ""}/${h.spec?.scaleTargetRef?.name ?? ""}`,
      formatTargets(h),
      h.spec?.minReplicas === undefined ? "<unset>" : h.spec.minReplicas,
      h.spec?.maxReplicas ?? 0,
      h.status?.currentReplicas ?? 0,
    ],
  }),
});
