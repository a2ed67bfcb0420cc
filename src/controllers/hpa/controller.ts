// The HorizontalPodAutoscaler controller (upstream's
// horizontal-pod-autoscaler-controller): every sync period (upstream's
// --horizontal-pod-autoscaler-sync-period, 15 s) each autoscaler reads its
// target's scale subresource, the selected pods and their PodMetrics from
// metrics.k8s.io (which the API server serves from the node agents), computes
// the replicas each Resource or ContainerResource metric asks for
// (Utilization or AverageValue, tolerance 0.1), stabilizes and limits the
// highest by the behavior (default: scale-down window 300 s, upstream's
// --horizontal-pod-autoscaler-downscale-stabilization), writes the new count
// to the scale subresource, and reports conditions AbleToScale, ScalingActive
// and ScalingLimited and events (SuccessfulRescale, FailedGetScale,
// FailedGetResourceMetric, FailedRescale, FailedComputeMetricsReplicas).
// Pods, Object and External metrics need a custom metrics API orch does not
// serve: such a metric makes ScalingActive False.

import { defaultScaleDown, defaultScaleUp, type HorizontalPodAutoscaler, type HorizontalPodAutoscalerCondition, type HPAScalingRules, type MetricSpec, type MetricStatus } from "../../api/autoscaling/index.js";
import { parseQuantity } from "../../api/core/quantity.js";
import type { Pod } from "../../api/core/types.js";
import type { Scale } from "../../api/autoscaling/index.js";
import type { ApiObject } from "../../machinery/index.js";
import { formatTimestamp } from "../../machinery/index.js";
import { errorMessage, nowMs, type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { EventRecorder } from "../events.js";
import { MetricError, normalize, resourceReplicas, type PodSample, type Recommendation, type ScaleEvent } from "./replicas.js";

export const HPAS = Object.freeze({ group: "autoscaling", version: "v2", resource: "horizontalpodautoscalers", namespaced: true });
const POD_METRICS = Object.freeze({ group: "metrics.k8s.io", version: "v1beta1", resource: "pods", namespaced: true });
const PODS = Object.freeze({ group: "", version: "v1", resource: "pods", namespaced: true });

interface PodMetrics extends ApiObject {
  containers: { name: string; usage: Record<string, string> }[];
}

interface History {
  recommendations: Recommendation[];
  upEvents: ScaleEvent[];
  downEvents: ScaleEvent[];
}

interface MetricOutcome {
  replicas: number;
  status: MetricStatus;
  description: string;
}

export interface HpaOptions {
  syncPeriodMs: number;
  /** The scale-down window of autoscalers without a behavior (upstream's flag, default 5 min). */
  downscaleStabilizationMs: number;
}

export class HpaController {
  readonly #ctx: ControllerContext;
  readonly #o: HpaOptions;
  readonly #events: EventRecorder;
  readonly #history = new Map<string, History>();

  constructor(ctx: ControllerContext, options: HpaOptions) {
    this.#ctx = ctx;
    this.#o = options;
    this.#events = new EventRecorder(ctx, "horizontal-pod-autoscaler");
  }

  async run(): Promise<void> {
    const { signal } = this.#ctx;
    while (!signal.aborted) {
      await this.syncAll().catch((err: unknown) => this.#ctx.log(`hpa: ${errorMessage(err)}`));
      if (signal.aborted) break;
      await new Promise<void>((r) => {
        const t = setTimeout(r, this.#o.syncPeriodMs);
        signal.addEventListener("abort", () => { clearTimeout(t); r(); }, { once: true });
      });
    }
  }

  async syncAll(): Promise<void> {
    const list = await this.#ctx.client.list<HorizontalPodAutoscaler>(HPAS, { signal: this.#ctx.signal });
    const seen = new Set<string>();
    for (const hpa of list.items) {
      if (this.#ctx.signal.aborted) return;
      const key = `${hpa.metadata.namespace}/${hpa.metadata.name}`;
      seen.add(key);
      await this.reconcile(hpa).catch((err: unknown) => this.#ctx.log(`hpa ${key}: ${errorMessage(err)}`));
    }
    for (const key of [...this.#history.keys()]) if (!seen.has(key)) this.#history.delete(key);
  }

  async reconcile(hpa: HorizontalPodAutoscaler): Promise<void> {
    const now = nowMs(this.#ctx);
    const key = `${hpa.metadata.namespace}/${hpa.metadata.name}`;
    const history = this.#history.get(key) ?? { recommendations: [], upEvents: [], downEvents: [] };
    this.#history.set(key, history);
    const spec = hpa.spec ?? {};
    const min = spec.minReplicas ?? 1;
    const max = spec.maxReplicas ?? 1;
    const namespace = hpa.metadata.namespace!;
    const conditions = new Map<string, HorizontalPodAutoscalerCondition>();
    const set = (type: string, status: "True" | "False", reason: string, message: string): void => void conditions.set(type, { type, status, reason, message });
    const target = spec.scaleTargetRef ?? {};
    const finish = (status: NonNullable<HorizontalPodAutoscaler["status"]>): Promise<void> => this.#writeStatus(hpa, status, conditions, now);

    const ref = await this.#ctx.discovery.lookupKind(target.apiVersion || "apps/v1", target.kind ?? "").catch(() => undefined);
    let scale: Scale | undefined;
    let scaleError = ref === undefined ? `no matches for kind "${target.kind}" in group "${(target.apiVersion || "apps/v1").split("/").slice(0, -1).join("/")}"` : undefined;
    if (ref !== undefined) {
      scale = await this.#ctx.client.get<Scale & ApiObject>(ref, { namespace, name: target.name ?? "", subresource: "scale" }).catch((err: unknown) => {
        scaleError = errorMessage(err);
        return undefined;
      });
    }
    if (scale === undefined || ref === undefined) {
      set("AbleToScale", "False", "FailedGetScale", `the HPA controller was unable to get the target's current scale: ${scaleError}`);
      this.#events.record(hpa, "Warning", "FailedGetScale", scaleError ?? "");
      return finish({ currentReplicas: hpa.status?.currentReplicas ?? 0, desiredReplicas: hpa.status?.desiredReplicas ?? 0, currentMetrics: hpa.status?.currentMetrics ?? [] });
    }
    set("AbleToScale", "True", "SucceededGetScale", "the HPA controller was able to get the target's current scale");
    const current = scale.spec?.replicas ?? 0;
    let desired: number;
    let reason: string;
    let metricsStatus: MetricStatus[] = hpa.status?.currentMetrics ?? [];
    if (current === 0 && min !== 0) {
      set("ScalingActive", "False", "ScalingDisabled", "scaling is disabled since the replica count of the target is zero");
      return finish({ currentReplicas: 0, desiredReplicas: 0, currentMetrics: metricsStatus });
    } else if (current > max) {
      desired = max;
      reason = "Current number of replicas above Spec.MaxReplicas";
      set("ScalingLimited", "True", "TooManyReplicas", "the desired replica count is more than the maximum replica count");
    } else if (current < min) {
      desired = min;
      reason = "Current number of replicas below Spec.MinReplicas";
      set("ScalingLimited", "True", "TooFewReplicas", "the desired replica count is less than the minimum replica count");
    } else {
      let outcomes: MetricOutcome[];
      try {
        outcomes = await this.#metrics(hpa, scale, current);
      } catch (err) {
        const why = err instanceof MetricsFailure ? err : new MetricsFailure("FailedComputeMetricsReplicas", errorMessage(err));
        set("ScalingActive", "False", why.reason, `the HPA was unable to compute the replica count: ${why.message}`);
        this.#events.record(hpa, "Warning", why.reason, why.message);
        return finish({ currentReplicas: current, desiredReplicas: hpa.status?.desiredReplicas ?? current, currentMetrics: metricsStatus });
      }
      metricsStatus = outcomes.map((o) => o.status);
      const best = outcomes.reduce((a, b) => (b.replicas > a.replicas ? b : a));
      set("ScalingActive", "True", "ValidMetricFound", `the HPA was able to successfully calculate a replica count from ${best.description}`);
      const behavior = spec.behavior;
      const scaleUp: HPAScalingRules = behavior?.scaleUp ?? defaultScaleUp();
      const scaleDown: HPAScalingRules = behavior?.scaleDown ?? { ...defaultScaleDown(), stabilizationWindowSeconds: Math.round(this.#o.downscaleStabilizationMs / 1000) };
      const n = normalize({ now, current, desired: best.replicas, min, max, scaleUp, scaleDown, recommendations: history.recommendations, upEvents: history.upEvents, downEvents: history.downEvents });
      history.recommendations.push({ at: now, replicas: best.replicas });
      const keep = Math.max(scaleUp.stabilizationWindowSeconds ?? 0, scaleDown.stabilizationWindowSeconds ?? 0) * 1000;
      history.recommendations = history.recommendations.filter((r) => r.at > now - keep);
      desired = n.replicas;
      if (n.limited) set("ScalingLimited", "True", n.limited.reason, n.limited.message);
      else set("ScalingLimited", "False", "DesiredWithinRange", "the desired count is within the acceptable range");
      reason = desired > current ? `${best.description} above target` : "All metrics below target";
    }
    let lastScaleTime = hpa.status?.lastScaleTime;
    if (desired !== current) {
      try {
        await this.#ctx.client.update(ref, { ...scale, spec: { replicas: desired } } as Scale & ApiObject, { subresource: "scale" });
      } catch (err) {
        set("AbleToScale", "False", "FailedUpdateScale", `the HPA controller was unable to update the target scale: ${errorMessage(err)}`);
        this.#events.record(hpa, "Warning", "FailedRescale", `New size: ${desired}; reason: ${reason}; error: ${errorMessage(err)}`);
        return finish({ currentReplicas: current, desiredReplicas: desired, currentMetrics: metricsStatus, ...(lastScaleTime ? { lastScaleTime } : {}) });
      }
      set("AbleToScale", "True", "SucceededRescale", `the HPA controller was able to update the target scale to ${desired}`);
      this.#events.record(hpa, "Normal", "SuccessfulRescale", `New size: ${desired}; reason: ${reason}`);
      (desired > current ? history.upEvents : history.downEvents).push({ at: now, change: Math.abs(desired - current) });
      history.upEvents = history.upEvents.filter((e) => e.at > now - 1800_000);
      history.downEvents = history.downEvents.filter((e) => e.at > now - 1800_000);
      lastScaleTime = formatTimestamp(new Date(now));
    } else {
      set("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size");
    }
    return finish({ currentReplicas: current, desiredReplicas: desired, currentMetrics: metricsStatus, ...(lastScaleTime ? { lastScaleTime } : {}) });
  }

  /** Each metric's proposal; throws MetricsFailure when none could be computed. */
  async #metrics(hpa: HorizontalPodAutoscaler, scale: Scale, current: number): Promise<MetricOutcome[]> {
    const namespace = hpa.metadata.namespace!;
    const selector = scale.status?.selector;
    if (!selector) throw new MetricsFailure("InvalidSelector", "selector is required");
    const pods = (await this.#ctx.client.list<Pod>(PODS, { namespace, labelSelector: selector })).items
      .filter((p) => !p.metadata.deletionTimestamp && p.status?.phase !== "Failed" && p.status?.phase !== "Succeeded");
    let metrics: PodMetrics[] | undefined;
    const podMetrics = async (): Promise<PodMetrics[]> => {
      metrics ??= (await this.#ctx.client.list<PodMetrics>(POD_METRICS, { namespace, labelSelector: selector })).items;
      return metrics;
    };
    const outcomes: MetricOutcome[] = [];
    let failure: MetricsFailure | undefined;
    for (const m of hpa.spec?.metrics ?? []) {
      try {
        outcomes.push(await this.#resourceMetric(m, pods, podMetrics, current));
      } catch (err) {
        failure ??= err instanceof MetricsFailure ? err : new MetricsFailure("FailedGetResourceMetric", errorMessage(err));
      }
    }
    if (outcomes.length === 0) throw failure ?? new MetricsFailure("FailedComputeMetricsReplicas", "no metrics");
    return outcomes;
  }

  async #resourceMetric(m: MetricSpec, pods: readonly Pod[], podMetrics: () => Promise<PodMetrics[]>, current: number): Promise<MetricOutcome> {
    const type = m.type ?? "";
    if (type !== "Resource" && type !== "ContainerResource") {
      const reason = type === "Pods" ? "FailedGetPodsMetric" : type === "Object" ? "FailedGetObjectMetric" : "FailedGetExternalMetric";
      throw new MetricsFailure(reason, `unable to get ${type} metric: orch serves no custom or external metrics API`);
    }
    const src = (type === "Resource" ? m.resource : m.containerResource) ?? {};
    const resource = src.name ?? "";
    const container = type === "ContainerResource" ? src.container : undefined;
    const failReason = type === "Resource" ? "FailedGetResourceMetric" : "FailedGetContainerResourceMetric";
    let all: PodMetrics[];
    try {
      all = await podMetrics();
    } catch (err) {
      throw new MetricsFailure(failReason, `unable to get metrics for resource ${resource}: unable to fetch metrics from resource metrics API: ${errorMessage(err)}`);
    }
    const byName = new Map(all.map((pm) => [pm.metadata.name!, pm]));
    const samples: PodSample[] = pods.map((p) => {
      const containers = (p.spec?.containers ?? []).filter((c) => container === undefined || c.name === container);
      const request = containers.reduce((a, c) => a + (parseQuantity(c.resources?.requests?.[resource]) ?? 0), 0);
      const pm = byName.get(p.metadata.name!);
      const used = pm?.containers.filter((c) => container === undefined || c.name === container).map((c) => parseQuantity(c.usage[resource]));
      const usage = used === undefined || used.length === 0 || used.some((u) => u === undefined) ? undefined : (used as number[]).reduce((a, b) => a + b, 0);
      const ready = p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
      return { name: p.metadata.name!, request, ...(usage !== undefined ? { usage } : {}), ready };
    });
    const t = src.target ?? {};
    const utilization = t.type === "Utilization" ? t.averageUtilization : undefined;
    const averageValue = utilization === undefined ? parseQuantity(t.averageValue ?? t.value) : undefined;
    let p;
    try {
      p = resourceReplicas(samples, utilization !== undefined ? { utilization } : { averageValue: averageValue ?? 1 }, current, resource);
    } catch (err) {
      throw new MetricsFailure(failReason, err instanceof MetricError ? `unable to get metrics for resource ${resource}: ${err.message}` : errorMessage(err));
    }
    const average = resource === "cpu" ? `${Math.round(p.averageValue * 1000)}m` : String(Math.round(p.averageValue));
    const currentValue = { averageValue: average, ...(p.utilization !== undefined ? { averageUtilization: p.utilization } : {}) };
    const status: MetricStatus = type === "Resource"
      ? { type, resource: { name: resource, current: currentValue } }
      : { type, containerResource: { name: resource, container: container ?? "", current: currentValue } };
    const description = utilization !== undefined
      ? `${resource} resource utilization (percentage of request)`
      : `${resource} resource`;
    return { replicas: p.replicas, status, description };
  }

  async #writeStatus(hpa: HorizontalPodAutoscaler, status: NonNullable<HorizontalPodAutoscaler["status"]>, conditions: Map<string, HorizontalPodAutoscalerCondition>, now: number): Promise<void> {
    const stamp = formatTimestamp(new Date(now));
    const old = new Map((hpa.status?.conditions ?? []).map((c) => [c.type, c]));
    const merged = ["AbleToScale", "ScalingActive", "ScalingLimited"].flatMap((type) => {
      const c = conditions.get(type) ?? old.get(type);
      if (c === undefined) return [];
      const before = old.get(type);
      return [{ ...c, lastTransitionTime: before !== undefined && before.status === c.status ? before.lastTransitionTime ?? stamp : stamp }];
    });
    const next = { ...status, observedGeneration: hpa.metadata.generation ?? 0, conditions: merged };
    if (JSON.stringify(next) === JSON.stringify({ ...hpa.status, observedGeneration: hpa.status?.observedGeneration ?? 0 })) return;
    await this.#ctx.client.update<HorizontalPodAutoscaler>(HPAS, { ...hpa, status: next }, { subresource: "status" });
  }
}

class MetricsFailure extends Error {
  constructor(readonly reason: string, message: string) {
    super(message);
  }
}

export const hpaController: ControllerDescriptor = {
  name: "horizontal-pod-autoscaler-controller",
  aliases: ["horizontalpodautoscaling"],
  enabledByDefault: true,
  async run(ctx) {
    await new HpaController(ctx, {
      syncPeriodMs: ctx.config?.hpaSyncPeriodMs ?? 15_000,
      downscaleStabilizationMs: ctx.config?.hpaDownscaleStabilizationMs ?? 300_000,
    }).run();
  },
};
