// The client's metrics, as upstream's client-go families name them (seed 002,
// "on all six": workqueue_*, informer_*, leader_election_*, rest_client_*).
// Each takes the component's registry through options; registration is
// idempotent, so every queue, informer and client of a process shares one
// family per name. Nothing here is touched when no registry is given.

import { exponentialBuckets, type Counter, type CustomCollector, type Gauge, type Histogram, type MetricsRegistry } from "../component/metrics/index.js";

// ---- work queue ----

const QUEUE_BUCKETS = exponentialBuckets(1e-8, 10, 10);

/** What one work queue reports; created by the queue when given a registry. */
export class WorkQueueMetrics {
  readonly #labels: { name: string };
  readonly #adds: Counter;
  readonly #depth: Gauge;
  readonly #retries: Counter;
  readonly #queueDuration: Histogram;
  readonly #workDuration: Histogram;
  /** When each waiting key was added, and when each key in process was taken (ms, performance clock). */
  readonly #addedAt = new Map<string, number>();
  readonly #startedAt = new Map<string, number>();
  readonly #removers: (() => void)[] = [];

  constructor(registry: MetricsRegistry, name: string) {
    const labelNames = ["name"];
    // Seed 002 lists the workqueue family among the beta metrics of all six components.
    const stabilityLevel = "BETA" as const;
    this.#labels = { name };
    this.#adds = registry.counter({ name: "workqueue_adds_total", stabilityLevel, labelNames, help: "Total number of adds handled by workqueue" });
    this.#depth = registry.gauge({ name: "workqueue_depth", stabilityLevel, labelNames, help: "Current depth of workqueue" });
    this.#retries = registry.counter({ name: "workqueue_retries_total", stabilityLevel, labelNames, help: "Total number of retries handled by workqueue" });
    this.#queueDuration = registry.histogram({
      name: "workqueue_queue_duration_seconds", stabilityLevel, labelNames, buckets: QUEUE_BUCKETS,
      help: "How long in seconds an item stays in workqueue before being requested.",
    });
    this.#workDuration = registry.histogram({
      name: "workqueue_work_duration_seconds", stabilityLevel, labelNames, buckets: QUEUE_BUCKETS,
      help: "How long in seconds processing an item from workqueue takes.",
    });
    const unfinished = registry.collector({
      name: "workqueue_unfinished_work_seconds", stabilityLevel, kind: "gauge", labelNames,
      help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    });
    const longest = registry.collector({
      name: "workqueue_longest_running_processor_seconds", stabilityLevel, kind: "gauge", labelNames,
      help: "How many seconds has the longest running processor for workqueue been running.",
    });
    this.#removers.push(
      (unfinished as CustomCollector).addSource(() => [{ labels: this.#labels, value: this.#inProgress().total }]),
      (longest as CustomCollector).addSource(() => [{ labels: this.#labels, value: this.#inProgress().longest }]),
    );
    this.#depth.set(this.#labels, 0);
    this.#adds.inc(this.#labels, 0);
    this.#retries.inc(this.#labels, 0);
  }

  #inProgress(): { total: number; longest: number } {
    const now = performance.now();
    let total = 0;
    let longest = 0;
    for (const t of this.#startedAt.values()) {
      const s = (now - t) / 1000;
      total += s;
      if (s > longest) longest = s;
    }
    return { total, longest };
  }

  added(key: string): void {
    this.#adds.inc(this.#labels);
    this.#depth.inc(this.#labels);
    if (!this.#addedAt.has(key)) this.#addedAt.set(key, performance.now());
  }

  taken(key: string): void {
    const now = performance.now();
    this.#depth.dec(this.#labels);
    const at = this.#addedAt.get(key);
    if (at !== undefined) {
      this.#addedAt.delete(key);
      this.#queueDuration.observe(this.#labels, (now - at) / 1000);
    }
    this.#startedAt.set(key, now);
  }

  done(key: string): void {
    const at = this.#startedAt.get(key);
    if (at === undefined) return;
    this.#startedAt.delete(key);
    this.#workDuration.observe(this.#labels, (performance.now() - at) / 1000);
  }

  retried(): void {
    this.#retries.inc(this.#labels);
  }

  /** The queue was emptied by shutDown(). */
  drained(): void {
    this.#depth.set(this.#labels, 0);
    this.#addedAt.clear();
  }

  /** Stops reporting the in-progress gauges (the queue is gone). */
  close(): void {
    for (const remove of this.#removers.splice(0)) remove();
  }
}

// ---- informers ----

export interface InformerMetrics {
  readonly lists: Counter;
  readonly listDuration: Histogram;
  readonly watchEvents: Counter;
  readonly storeItems: CustomCollector;
}

export function informerMetrics(registry: MetricsRegistry): InformerMetrics {
  return {
    lists: registry.counter({ name: "informer_lists_total", labelNames: ["resource"], help: "Number of full lists an informer made (the first and one per relist)." }),
    listDuration: registry.histogram({
      name: "informer_list_duration_seconds", labelNames: ["resource"], buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      help: "How long an informer's full (paged) list took.",
    }),
    watchEvents: registry.counter({ name: "informer_watch_events_total", labelNames: ["resource", "type"], help: "Watch events an informer received, by type." }),
    storeItems: registry.collector({ name: "informer_store_items", kind: "gauge", labelNames: ["resource"], help: "Objects in an informer's cache." }),
  };
}

// ---- leader election ----

export interface LeaderElectionMetrics {
  /** 1 while this process holds the lease. */
  readonly masterStatus: Gauge;
  /** Renewals that had to take the slow path (the lease was not ours or its update conflicted). */
  readonly slowpathTotal: Counter;
}

export function leaderElectionMetrics(registry: MetricsRegistry): LeaderElectionMetrics {
  return {
    masterStatus: registry.gauge({
      name: "leader_election_master_status", labelNames: ["name"],
      help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    }),
    slowpathTotal: registry.counter({
      name: "leader_election_slowpath_total", labelNames: ["name"],
      help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
    }),
  };
}

// ---- REST client ----

export interface RestClientMetrics {
  readonly requests: Counter;
  readonly duration: Histogram;
  readonly responseSize: Histogram;
}

export function restClientMetrics(registry: MetricsRegistry): RestClientMetrics {
  return {
    requests: registry.counter({
      name: "rest_client_requests_total", labelNames: ["code", "host", "method"],
      help: "Number of HTTP requests, partitioned by status code, method, and host.",
    }),
    duration: registry.histogram({
      name: "rest_client_request_duration_seconds", labelNames: ["verb", "host"],
      buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
      help: "Request latency in seconds. Broken down by verb, and host.",
    }),
    responseSize: registry.histogram({
      name: "rest_client_response_size_bytes", labelNames: ["verb", "host"],
      buckets: [64, 256, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216],
      help: "Response size in bytes. Broken down by verb and host.",
    }),
  };
}
