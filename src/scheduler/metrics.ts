// The scheduler's metrics (seed 002, "Scheduler /metrics"): every stable
// scheduler_* metric with exactly the seed's labels, plus the beta
// scheduling SLI. Registered on the registry the component passes in (the
// shared MetricsRegistry of src/component/metrics); without one, nothing is recorded.

import type { QueueMetrics, QueueName } from "./queue/scheduling-queue.js";

type Labels = Record<string, string>;

/** What this module needs of the component's MetricsRegistry (its counter, gauge and histogram). */
export interface MetricsRegistryLike {
  counter(o: { name: string; help: string; labelNames?: string[]; stabilityLevel?: string }): { inc(labels?: Labels, value?: number): void };
  gauge(o: { name: string; help: string; labelNames?: string[]; stabilityLevel?: string }): { set(labels: Labels, value: number): void };
  histogram(o: { name: string; help: string; labelNames?: string[]; buckets?: number[]; stabilityLevel?: string }): {
    observe(labels: Labels, value: number): void;
  };
}

function exponential(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start * factor ** i);
}

export type AttemptResult = "scheduled" | "unschedulable" | "error";

export class SchedulerMetrics implements QueueMetrics {
  readonly profile: string;
  readonly #r: {
    pending: ReturnType<MetricsRegistryLike["gauge"]>;
    incoming: ReturnType<MetricsRegistryLike["counter"]>;
    attempts: ReturnType<MetricsRegistryLike["counter"]>;
    attemptDuration: ReturnType<MetricsRegistryLike["histogram"]>;
    extensionPoint: ReturnType<MetricsRegistryLike["histogram"]>;
    podAttempts: ReturnType<MetricsRegistryLike["histogram"]>;
    sli: ReturnType<MetricsRegistryLike["histogram"]>;
    preemptionAttempts: ReturnType<MetricsRegistryLike["counter"]>;
    preemptionVictims: ReturnType<MetricsRegistryLike["histogram"]>;
  } | undefined;

  constructor(registry: MetricsRegistryLike | undefined, profile = "default-scheduler") {
    this.profile = profile;
    if (registry === undefined) return;
    const stable = { stabilityLevel: "STABLE" };
    this.#r = {
      pending: registry.gauge({ name: "scheduler_pending_pods", help: "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.", labelNames: ["queue"], ...stable }),
      incoming: registry.counter({ name: "scheduler_queue_incoming_pods_total", help: "Number of pods added to scheduling queues by event and queue type.", labelNames: ["queue", "event"], ...stable }),
      attempts: registry.counter({ name: "scheduler_schedule_attempts_total", help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.", labelNames: ["result", "profile"], ...stable }),
      attemptDuration: registry.histogram({ name: "scheduler_scheduling_attempt_duration_seconds", help: "Scheduling attempt latency in seconds (scheduling algorithm + binding)", labelNames: ["result", "profile"], buckets: exponential(0.001, 2, 15), ...stable }),
      extensionPoint: registry.histogram({ name: "scheduler_framework_extension_point_duration_seconds", help: "Latency for running all plugins of a specific extension point.", labelNames: ["extension_point", "status", "profile"], buckets: exponential(0.0001, 2, 12), ...stable }),
      podAttempts: registry.histogram({ name: "scheduler_pod_scheduling_attempts", help: "Number of attempts to successfully schedule a pod.", buckets: exponential(1, 2, 5), ...stable }),
      sli: registry.histogram({ name: "scheduler_pod_scheduling_sli_duration_seconds", help: "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.", labelNames: ["attempts"], buckets: exponential(0.01, 2, 20), stabilityLevel: "BETA" }),
      preemptionAttempts: registry.counter({ name: "scheduler_preemption_attempts_total", help: "Total preemption attempts in the cluster till now", ...stable }),
      preemptionVictims: registry.histogram({ name: "scheduler_preemption_victims", help: "Number of selected preemption victims", buckets: exponential(1, 2, 7), ...stable }),
    };
  }

  pending(queue: QueueName, count: number): void {
    this.#r?.pending.set({ queue }, count);
  }

  incoming(queue: QueueName, event: string): void {
    this.#r?.incoming.inc({ queue, event });
  }

  attempt(result: AttemptResult, seconds: number): void {
    this.#r?.attempts.inc({ result, profile: this.profile });
    this.#r?.attemptDuration.observe({ result, profile: this.profile }, seconds);
  }

  extensionPoint(extensionPoint: string, status: string, seconds: number): void {
    this.#r?.extensionPoint.observe({ extension_point: extensionPoint, status, profile: this.profile }, seconds);
  }

  /** A pod bound: how many attempts it took, and how long since it first entered the queue. */
  podScheduled(attempts: number, sinceFirstQueuedSeconds: number): void {
    this.#r?.podAttempts.observe({}, attempts);
    this.#r?.sli.observe({ attempts: String(attempts) }, sinceFirstQueuedSeconds);
  }

  preemption(victims: number): void {
    this.#r?.preemptionAttempts.inc({});
    this.#r?.preemptionVictims.observe({}, victims);
  }
}
