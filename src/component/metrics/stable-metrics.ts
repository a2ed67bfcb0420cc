// Every stable metric of seed 002 ("Stable metrics (no labels may be added or
// removed)"), transcribed: name, kind, label names, the component and path
// serving it. Tests check components against it with assertExposesMetric;
// components whose metrics are not built yet are listed all the same.

export type ComponentName = "orch-apiserver" | "orch-controller-manager" | "orch-scheduler" | "nodeagent" | "orch-proxy" | "cloud-controller-manager";

export interface StableMetric {
  readonly name: string;
  readonly kind: "counter" | "gauge" | "histogram" | "custom";
  readonly labels: readonly string[];
  readonly component: ComponentName | "all";
  readonly path: string;
}

const m = (component: StableMetric["component"], path: string, kind: StableMetric["kind"], name: string, labels: readonly string[] = []): StableMetric =>
  Object.freeze({ name, kind, labels: Object.freeze([...labels]), component, path });

const API = "orch-apiserver";
const KCM = "orch-controller-manager";
const SCHED = "orch-scheduler";
const REQUEST = ["component", "dry_run", "group", "resource", "scope", "subresource", "verb", "version"];
const RESOURCE_LABELS = ["namespace", "pod", "node", "scheduler", "priority", "resource", "unit"];

export const STABLE_METRICS: readonly StableMetric[] = Object.freeze([
  m(API, "/metrics", "histogram", "apiserver_admission_controller_admission_duration_seconds", ["name", "operation", "rejected", "type"]),
  m(API, "/metrics", "histogram", "apiserver_admission_step_admission_duration_seconds", ["operation", "rejected", "type"]),
  m(API, "/metrics", "histogram", "apiserver_admission_webhook_admission_duration_seconds", ["name", "operation", "rejected", "type"]),
  m(API, "/metrics", "gauge", "apiserver_current_inflight_requests", ["request_kind"]),
  m(API, "/metrics", "gauge", "apiserver_longrunning_requests", ["component", "group", "resource", "scope", "subresource", "verb", "version"]),
  m(API, "/metrics", "histogram", "apiserver_request_duration_seconds", REQUEST),
  m(API, "/metrics", "counter", "apiserver_request_total", ["code", ...REQUEST]),
  m(API, "/metrics", "gauge", "apiserver_requested_deprecated_apis", ["group", "removed_release", "resource", "subresource", "version"]),
  m(API, "/metrics", "histogram", "apiserver_response_sizes", ["component", "group", "resource", "scope", "subresource", "verb", "version"]),
  m(API, "/metrics", "gauge", "apiserver_storage_objects", ["resource"]),
  m(API, "/metrics", "custom", "apiserver_storage_size_bytes", ["storage_cluster_id"]),

  m("nodeagent", "/metrics/resource", "custom", "container_cpu_usage_seconds_total", ["container", "pod", "namespace"]),
  m("nodeagent", "/metrics/resource", "custom", "container_memory_working_set_bytes", ["container", "pod", "namespace"]),
  m("nodeagent", "/metrics/resource", "custom", "container_start_time_seconds", ["container", "pod", "namespace"]),
  m("nodeagent", "/metrics/resource", "custom", "pod_cpu_usage_seconds_total", ["pod", "namespace"]),
  m("nodeagent", "/metrics/resource", "custom", "pod_memory_working_set_bytes", ["pod", "namespace"]),
  m("nodeagent", "/metrics/resource", "custom", "node_cpu_usage_seconds_total"),
  m("nodeagent", "/metrics/resource", "custom", "node_memory_working_set_bytes"),
  m("nodeagent", "/metrics/resource", "custom", "resource_scrape_error"),

  m(KCM, "/metrics", "histogram", "cronjob_controller_job_creation_skew_duration_seconds"),
  m(KCM, "/metrics", "counter", "job_controller_job_pods_finished_total", ["completion_mode", "result"]),
  m(KCM, "/metrics", "histogram", "job_controller_job_sync_duration_seconds", ["action", "completion_mode", "result"]),
  m(KCM, "/metrics", "counter", "job_controller_job_syncs_total", ["action", "completion_mode", "result"]),
  m(KCM, "/metrics", "counter", "job_controller_jobs_finished_total", ["completion_mode", "reason", "result"]),
  m(KCM, "/metrics", "counter", "node_collector_evictions_total", ["zone"]),

  m(SCHED, "/metrics", "custom", "orch_pod_resource_limit", RESOURCE_LABELS),
  m(SCHED, "/metrics", "custom", "orch_pod_resource_request", RESOURCE_LABELS),
  m(SCHED, "/metrics", "histogram", "scheduler_framework_extension_point_duration_seconds", ["extension_point", "profile", "status"]),
  m(SCHED, "/metrics", "gauge", "scheduler_pending_pods", ["queue"]),
  m(SCHED, "/metrics", "histogram", "scheduler_pod_scheduling_attempts"),
  m(SCHED, "/metrics", "counter", "scheduler_preemption_attempts_total"),
  m(SCHED, "/metrics", "histogram", "scheduler_preemption_victims"),
  m(SCHED, "/metrics", "counter", "scheduler_queue_incoming_pods_total", ["event", "queue"]),
  m(SCHED, "/metrics", "counter", "scheduler_schedule_attempts_total", ["profile", "result"]),
  m(SCHED, "/metrics", "histogram", "scheduler_scheduling_attempt_duration_seconds", ["profile", "result"]),

  m("all", "/metrics/slis", "gauge", "orch_healthcheck", ["name", "type"]),
  m("all", "/metrics/slis", "counter", "orch_healthchecks_total", ["name", "status", "type"]),
]);

/** The stable metrics one component must serve at one path. */
export function stableMetricsOf(component: ComponentName, path = "/metrics"): StableMetric[] {
  return STABLE_METRICS.filter((s) => (s.component === component || s.component === "all") && s.path === path);
}
