// The arithmetic of the HorizontalPodAutoscaler, after upstream's replica
// calculator and behavior normalization (pure functions, tested alone):
// - resource metrics: the pods' usage against their requests (Utilization) or
//   per pod (AverageValue); within the tolerance (0.1) nothing changes; pods
//   without metrics count as using their full request when scaling down and
//   nothing when scaling up; not-ready pods count as nothing when scaling up
//   on cpu; if that turns the decision around, nothing changes.
// - behavior: recommendations kept over the stabilization windows (scale up to
//   the lowest of the up window, down to the highest of the down window), then
//   the policies' limits over their periods (selectPolicy Max, Min, Disabled),
//   then minReplicas/maxReplicas.

import type { HPAScalingRules } from "../../api/autoscaling/index.js";

export const TOLERANCE = 0.1;

export interface PodSample {
  name: string;
  /** The pod's request of the resource (summed over containers, or one container's). */
  request: number;
  /** Usage, when the metrics API has it. */
  usage?: number;
  /** Ready (for cpu, unready pods count as nothing when scaling up). */
  ready: boolean;
}

export interface Proposal {
  replicas: number;
  /** Utilization in percent (Utilization targets) or the average per pod (AverageValue). */
  utilization?: number;
  averageValue: number;
}

export class MetricError extends Error {}

/**
 * The replicas a resource metric asks for. `target` is a percentage
 * (utilization) or a per-pod value (averageValue). `currentReplicas` is the
 * scale's current count.
 */
export function resourceReplicas(pods: readonly PodSample[], target: { utilization?: number; averageValue?: number }, currentReplicas: number, resource: string): Proposal {
  if (pods.length === 0) throw new MetricError("no pods returned by selector while calculating replica count");
  const withMetrics = pods.filter((p) => p.usage !== undefined);
  if (withMetrics.length === 0) throw new MetricError(`unable to get metrics for resource ${resource}: no metrics returned from resource metrics API`);
  const ignoreUnready = resource === "cpu";
  const counted = withMetrics.filter((p) => p.ready || !ignoreUnready);
  const unready = withMetrics.filter((p) => !p.ready && ignoreUnready);
  const missing = pods.filter((p) => p.usage === undefined);
  const usageSum = (list: readonly PodSample[]): number => list.reduce((a, p) => a + (p.usage ?? 0), 0);
  const requestSum = (list: readonly PodSample[]): number => list.reduce((a, p) => a + p.request, 0);
  const ratioOf = (list: readonly PodSample[]): { ratio: number; utilization?: number; average: number } => {
    const usage = usageSum(list);
    const average = list.length === 0 ? 0 : usage / list.length;
    if (target.utilization !== undefined) {
      const requests = requestSum(list);
      if (list.some((p) => !(p.request > 0))) throw new MetricError(`missing request for ${resource} in container(s) of pod(s) ${list.filter((p) => !(p.request > 0)).map((p) => p.name).join(", ")}`);
      const utilization = requests > 0 ? (usage * 100) / requests : 0;
      return { ratio: utilization / target.utilization, utilization: Math.round(utilization), average };
    }
    return { ratio: average / target.averageValue!, average };
  };
  if (counted.length === 0) {
    // Every pod with metrics is unready: nothing to scale on yet.
    return { replicas: currentReplicas, averageValue: 0 };
  }
  const first = ratioOf(counted);
  const proposal = (replicas: number): Proposal => ({ replicas, ...(first.utilization !== undefined ? { utilization: first.utilization } : {}), averageValue: first.average });
  if (missing.length === 0 && unready.length === 0) {
    if (Math.abs(1 - first.ratio) <= TOLERANCE) return proposal(currentReplicas);
    return proposal(Math.ceil(first.ratio * counted.length));
  }
  // Fill in the pods left out: missing ones at their full request (down) or nothing (up); unready ones at nothing (up only).
  const filled: PodSample[] = [...counted];
  for (const p of missing) filled.push({ ...p, usage: first.ratio < 1 ? (target.utilization !== undefined ? p.request : target.averageValue!) : 0 });
  if (first.ratio > 1) for (const p of unready) filled.push({ ...p, usage: 0 });
  const second = ratioOf(filled);
  if (Math.abs(1 - second.ratio) <= TOLERANCE || (first.ratio < 1 && second.ratio > 1) || (first.ratio > 1 && second.ratio < 1)) return proposal(currentReplicas);
  const replicas = Math.ceil(second.ratio * filled.length);
  // Never move against the first reading's direction.
  if ((first.ratio > 1 && replicas < currentReplicas) || (first.ratio < 1 && replicas > currentReplicas)) return proposal(currentReplicas);
  return proposal(replicas);
}

export interface Recommendation { at: number; replicas: number }
export interface ScaleEvent { at: number; change: number }

export interface NormalizeInput {
  now: number;
  current: number;
  /** The metrics' proposal. */
  desired: number;
  min: number;
  max: number;
  scaleUp: HPAScalingRules;
  scaleDown: HPAScalingRules;
  /** Past recommendations (this one is added by the caller after). */
  recommendations: readonly Recommendation[];
  upEvents: readonly ScaleEvent[];
  downEvents: readonly ScaleEvent[];
}

export interface Normalized {
  replicas: number;
  /** What held the count, for the ScalingLimited condition. */
  limited?: { reason: "TooManyReplicas" | "TooFewReplicas" | "ScaleUpLimit" | "ScaleDownLimit"; message: string };
  /** The stabilized recommendation (before limits). */
  stabilized: number;
}

function periodStart(events: readonly ScaleEvent[], now: number, periodSeconds: number): number {
  return events.filter((e) => e.at > now - periodSeconds * 1000).reduce((a, e) => a + e.change, 0);
}

/** The highest count the scale-up rules allow from `current`. */
export function scaleUpLimit(current: number, events: readonly ScaleEvent[], rules: HPAScalingRules, now: number): number {
  if (rules.selectPolicy === "Disabled") return current;
  const limits = (rules.policies ?? []).map((p) => {
    const start = current - periodStart(events, now, p.periodSeconds ?? 15);
    return p.type === "Pods" ? start + (p.value ?? 0) : Math.ceil(start * (1 + (p.value ?? 0) / 100));
  });
  if (limits.length === 0) return Number.MAX_SAFE_INTEGER;
  return rules.selectPolicy === "Min" ? Math.min(...limits) : Math.max(...limits);
}

/** The lowest count the scale-down rules allow from `current`. */
export function scaleDownLimit(current: number, events: readonly ScaleEvent[], rules: HPAScalingRules, now: number): number {
  if (rules.selectPolicy === "Disabled") return current;
  const limits = (rules.policies ?? []).map((p) => {
    const start = current + periodStart(events, now, p.periodSeconds ?? 15);
    return p.type === "Pods" ? start - (p.value ?? 0) : Math.floor(start * (1 - (p.value ?? 0) / 100));
  });
  if (limits.length === 0) return 0;
  return rules.selectPolicy === "Min" ? Math.max(...limits) : Math.min(...limits);
}

export function normalize(i: NormalizeInput): Normalized {
  const upWindow = (i.scaleUp.stabilizationWindowSeconds ?? 0) * 1000;
  const downWindow = (i.scaleDown.stabilizationWindowSeconds ?? 300) * 1000;
  let up = i.desired;
  let down = i.desired;
  for (const r of i.recommendations) {
    if (r.at > i.now - upWindow) up = Math.min(up, r.replicas);
    if (r.at > i.now - downWindow) down = Math.max(down, r.replicas);
  }
  let stabilized = i.current;
  if (up > i.current) stabilized = up;
  if (down < i.current) stabilized = down;
  if (stabilized > i.current) {
    const limit = scaleUpLimit(i.current, i.upEvents, i.scaleUp, i.now);
    const bound = Math.min(limit, i.max);
    if (stabilized > bound) {
      return { replicas: bound, stabilized, limited: limit < i.max ? { reason: "ScaleUpLimit", message: "the desired replica count is increasing faster than the maximum scale rate" } : { reason: "TooManyReplicas", message: "the desired replica count is more than the maximum replica count" } };
    }
  } else if (stabilized < i.current) {
    const limit = scaleDownLimit(i.current, i.downEvents, i.scaleDown, i.now);
    const bound = Math.max(limit, i.min);
    if (stabilized < bound) {
      return { replicas: bound, stabilized, limited: limit > i.min ? { reason: "ScaleDownLimit", message: "the desired replica count is decreasing faster than the maximum scale rate" } : { reason: "TooFewReplicas", message: "the desired replica count is less than the minimum replica count" } };
    }
  }
  if (stabilized > i.max) return { replicas: i.max, stabilized, limited: { reason: "TooManyReplicas", message: "the desired replica count is more than the maximum replica count" } };
  if (stabilized < i.min) return { replicas: i.min, stabilized, limited: { reason: "TooFewReplicas", message: "the desired replica count is less than the minimum replica count" } };
  return { replicas: stabilized, stabilized };
}
