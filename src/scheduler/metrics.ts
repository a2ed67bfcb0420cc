// The scheduler's metrics (seed 002, "Scheduler /metrics"): every stable
// scheduler_* metric with exactly the seed's labels, the beta scheduling
// SLI, and <prefix>pod_resource_request / _limit collected from the pods at
// scrape time. Registered on the component's MetricsRegistry; without one,
// nothing is recorded.

import type { Pod } from "../api/core/types.js";
import { exponentialBuckets, type Counter, type Gauge, type Histogram, type MetricsRegistry } from "../component/metrics/index.js";
import type { QueueMetrics, QueueName } from "./queue/scheduling-queue.js";
import { podResources } from "./framework/resources.js";
import { isPodTerminal } from "../api/core/pod-phase.js";

export type AttemptResult = "scheduled" | "unschedulable" | "error";

interface Families {
  pending: Gauge;
  incoming: Counter;
  attempts: Counter;
  attemptDuration: Histogram;
  extensionPoint: Histogram;
  podAttempts: Histogram;
  sli: Histogram;
  preemptionAttempts: Counter;
  preemptionVictims: Histogram;
}

const STABLE = { stabilityLevel: "STABLE" } as const;
const POD_RESOURCE_LABELS = ["namespace", "pod", "node", "scheduler", "priority", "resource", "unit"];

export class SchedulerMetrics implements QueueMetrics {
  readonly profile: string;
  readonly #f: Families | undefined;

  /** `pods` lists the pods the resource collectors report (the scheduler's pod cache). */
  constructor(options: { registry?: MetricsRegistry | undefined; profile?: string; metricPrefix?: string; pods?: () => Iterable<Pod> }) {
    this.profile = options.profile ?? "default-scheduler";
    const r = options.registry;
    if (r === undefined) return;
    this.#f = {
      pending: r.gauge({ name: "scheduler_pending_pods", help: "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.", labelNames: ["queue"], ...STABLE }),
      incoming: r.counter({ name: "scheduler_queue_incoming_pods_total", help: "Number of pods added to scheduling queues by event and queue type.", labelNames: ["queue", "event"], ...STABLE }),
      attempts: r.counter({ name: "scheduler_schedule_attempts_total", help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.", labelNames: ["result", "profile"], ...STABLE }),
      attemptDuration: r.histogram({ name: "scheduler_scheduling_attempt_duration_seconds", help: "Scheduling attempt latency in seconds (scheduling algorithm + binding)", labelNames: ["result", "profile"], buckets: exponentialBuckets(0.001, 2, 15), ...STABLE }),
      extensionPoint: r.histogram({ name: "scheduler_framework_extension_point_duration_seconds", help: "Latency for running all plugins of a specific extension point.", labelNames: ["extension_point", "status", "profile"], buckets: exponentialBuckets(0.0001, 2, 12), ...STABLE }),
      podAttempts: r.histogram({ name: "scheduler_pod_scheduling_attempts", help: "Number of attempts to successfully schedule a pod.", buckets: exponentialBuckets(1, 2, 5), ...STABLE }),
      sli: r.histogram({ name: "scheduler_pod_scheduling_sli_duration_seconds", help: "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.", labelNames: ["attempts"], buckets: exponentialBuckets(0.01, 2, 20), stabilityLevel: "BETA" }),
      preemptionAttempts: r.counter({ name: "scheduler_preemption_attempts_total", help: "Total preemption attempts in the cluster till now", ...STABLE }),
      preemptionVictims: r.histogram({ name: "scheduler_preemption_victims", help: "Number of selected preemption victims", buckets: exponentialBuckets(1, 2, 7), ...STABLE }),
    };
    const prefix = options.metricPrefix ?? "orch_";
    const pods = options.pods ?? (() => []);
    for (const kind of ["requests", "limits"] as const) {
      const what = kind === "requests" ? "request" : "limit";
      r.collector({
        name: `${prefix}pod_resource_${what}`,
        help: `Resources ${kind === "requests" ? "requested" : "limited"} by workloads on the cluster, broken down by pod. This shows the resource usage the scheduler and node agent expect per pod for resources along with the unit for the resource if any.`,
        labelNames: POD_RESOURCE_LABELS,
        kind: "gauge",
        ...STABLE,
        collect: () => podResourceSamples(pods(), kind),
      });
    }
  }

  pending(queue: QueueName, count: number): void {
    this.#f?.pending.set({ queue }, count);
  }

  incoming(queue: QueueName, event: string): void {
    this.#f?.incoming.inc({ queue, event });
  }

  attempt(result: AttemptResult, seconds: number): void {
    this.#f?.attempts.inc({ result, profile: this.profile });
    this.#f?.attemptDuration.observe({ result, profile: this.profile }, seconds);
  }

  extensionPoint(extensionPoint: string, status: string, seconds: number): void {
    this.#f?.extensionPoint.observe({ extension_point: extensionPoint, status, profile: this.profile }, seconds);
  }

  /** A pod bound: how many attempts it took, and how long since it first entered the queue. */
  podScheduled(attempts: number, sinceFirstQueuedSeconds: number): void {
    this.#f?.podAttempts.observe({}, attempts);
    this.#f?.sli.observe({ attempts: String(attempts) }, sinceFirstQueuedSeconds);
  }

  preemption(victims: number): void {
    this.#f?.preemptionAttempts.inc({});
    this.#f?.preemptionVictims.observe({}, victims);
  }
}

/** Upstream's units: cpu in cores, memory and storage in bytes, other resources unitless. */
function unitOf(resource: string): string {
  if (resource === "cpu") return "cores";
  if (resource === "memory" || resource === "storage" || resource === "ephemeral-storage" || resource.startsWith("hugepages-")) return "bytes";
  return "";
}

function* podResourceSamples(pods: Iterable<Pod>, kind: "requests" | "limits"): Iterable<{ labels: Record<string, string>; value: number }> {
  for (const pod of pods) {
    if (isPodTerminal(pod)) continue;
    const spec = pod.spec ?? {};
    for (const [resource, value] of podResources(pod, kind)) {
      yield {
        labels: {
          namespace: pod.metadata.namespace ?? "",
          pod: pod.metadata.name ?? "",
          node: spec.nodeName ?? "",
          scheduler: spec.schedulerName ?? "",
          priority: spec.priority != null ? String(spec.priority) : "",
          resource,
          unit: unitOf(resource),
        },
        value: resource === "cpu" ? value / 1000 : value,
      };
    }
  }
}
