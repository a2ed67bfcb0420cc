// The API server's metrics (seed 002, "Stable metrics" of orch-apiserver, with
// exactly their label names): requests by verb/resource/code, latency,
// response sizes, in-flight and long-running requests, object counts and
// storage size read at scrape time, streaming-list latency and field
// validation. The request path is kept cheap: labels are worked out once per
// request and each label set's series handles are cached.

import type { Incoming, Outgoing } from "./http/respond.js";
import type { ParsedPath } from "./routing.js";
import type { GroupResource } from "../machinery/index.js";
import type { Storage } from "../storage/index.js";
import { queryBool } from "../machinery/query-bool.js";
import {
  exponentialBuckets, type BoundCounter, type BoundGauge, type Counter, type Gauge, type Histogram, type MetricsRegistry,
} from "../component/metrics/index.js";

const COMPONENT = "apiserver";
const DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** Non-resource paths that get their own label (upstream keeps the health paths). */
const NAMED_PATHS = new Set(["/healthz", "/livez", "/readyz", "/metrics", "/metrics/slis", "/version", "/statusz", "/flagz"]);

/** What one request is about, as the metrics label it. */
type RequestLabels = {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  dry_run: string;
  component: string;
};

interface SeriesHandles {
  /** Undefined for long-running requests, which stay out of the histograms. */
  readonly duration: { observe(v: number): void } | undefined;
  /** apiserver_request_sli_duration_seconds: undefined also for dry runs (upstream leaves them out). */
  readonly sli: { observe(v: number): void } | undefined;
  readonly size: { observe(v: number): void } | undefined;
  readonly byCode: Map<number, BoundCounter>;
  readonly labels: RequestLabels;
  readonly longRunning: BoundGauge | undefined;
}

export interface RequestRecord {
  readonly started: number;
  /** Seconds the request waited for a slot of the in-flight limit (filters/inflight.ts): not in its SLI duration. */
  queuedSeconds: number;
  /** Seconds it spent calling admission webhooks: not in its SLI duration either. */
  webhookSeconds: number;
  readonly handles: SeriesHandles;
  /** Undefined for long-running requests: upstream's in-flight gauge counts what the in-flight limit counts. */
  readonly inflight: BoundGauge | undefined;
  readonly longRunning: BoundGauge | undefined;
  /** The write's fieldValidation directive ("" for reads). */
  readonly fieldValidation: string;
}

/** What the object counts need of a registry store. */
export interface StoredResource {
  readonly groupResource: GroupResource;
  readonly prefix: string;
}

export interface ApiServerMetricsOptions {
  readonly registry: MetricsRegistry;
  readonly storage: Storage;
  /** The served resources and their key prefixes in storage (the registry stores: `/registry/core/pods/`). */
  readonly resources: readonly StoredResource[];
  /** How often object counts and the store size are read (default 10 s; upstream reads etcd every minute). */
  readonly refreshIntervalMs?: number;
  readonly log?: (line: string) => void;
}

export class ApiServerMetrics {
  readonly #requests: Counter;
  readonly #duration: Histogram;
  readonly #sli: Histogram;
  readonly #queueWait: Histogram;
  readonly #sizes: Histogram;
  readonly #inflight: { mutating: BoundGauge; readOnly: BoundGauge };
  readonly #longRunning: Gauge;
  readonly #watchList: Histogram;
  readonly #fieldValidation: Histogram;
  readonly deprecatedApis: Gauge;
  readonly #cache = new Map<string, SeriesHandles>();
  readonly #objectCounts = new Map<string, number>();
  #sizeBytes: number | undefined;
  readonly #options: ApiServerMetricsOptions;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: ApiServerMetricsOptions) {
    this.#options = options;
    const r = options.registry;
    const labels = ["component", "dry_run", "group", "resource", "scope", "subresource", "verb", "version"];
    this.#requests = r.counter({
      name: "apiserver_request_total", stabilityLevel: "STABLE", labelNames: ["code", ...labels],
      help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
    });
    this.#duration = r.histogram({
      name: "apiserver_request_duration_seconds", stabilityLevel: "STABLE", labelNames: labels, buckets: DURATION_BUCKETS,
      help: "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
    });
    // Upstream's SLI (what its scalability SLOs are measured on): the duration without the time spent
    // waiting in API Priority and Fairness queues (here: the in-flight limit's queues) and in admission
    // webhooks; dry runs are left out.
    this.#sli = r.histogram({
      name: "apiserver_request_sli_duration_seconds", stabilityLevel: "ALPHA", labelNames: labels.filter((l) => l !== "dry_run"), buckets: DURATION_BUCKETS,
      help: "Response latency distribution (not counting webhook duration and priority & fairness queue wait times) in seconds for each verb, group, version, resource, subresource, scope and component.",
    });
    this.#queueWait = r.histogram({
      name: "apiserver_flowcontrol_request_wait_duration_seconds", stabilityLevel: "BETA", labelNames: ["execute", "flow_schema", "priority_level"],
      buckets: [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30],
      help: "Length of time a request spent waiting in its queue",
    });
    this.#sizes = r.histogram({
      name: "apiserver_response_sizes", stabilityLevel: "STABLE", labelNames: labels.filter((l) => l !== "dry_run"),
      buckets: exponentialBuckets(1000, 10, 8),
      help: "Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.",
    });
    const inflight = r.gauge({
      name: "apiserver_current_inflight_requests", stabilityLevel: "STABLE", labelNames: ["request_kind"],
      help: "Number of requests currently being served, by kind (mutating or readOnly).",
    });
    this.#inflight = { mutating: inflight.bind({ request_kind: "mutating" }), readOnly: inflight.bind({ request_kind: "readOnly" }) };
    this.#longRunning = r.gauge({
      name: "apiserver_longrunning_requests", stabilityLevel: "STABLE",
      labelNames: ["component", "group", "resource", "scope", "subresource", "verb", "version"],
      help: "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
    });
    this.deprecatedApis = r.gauge({
      name: "apiserver_requested_deprecated_apis", stabilityLevel: "STABLE",
      labelNames: ["group", "removed_release", "resource", "subresource", "version"],
      help: "Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.",
    });
    this.#watchList = r.histogram({
      name: "apiserver_watch_list_duration_seconds", stabilityLevel: "BETA", labelNames: ["group", "resource", "scope", "version"],
      buckets: [0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 15, 20, 30, 45, 60],
      help: "Response latency distribution in seconds for watch list requests broken by group, version, resource and scope.",
    });
    this.#fieldValidation = r.histogram({
      name: "field_validation_request_duration_seconds", labelNames: ["field_validation", "status"],
      buckets: [0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
      help: "Response latency distribution in seconds for each field validation value",
    });
    r.collector({
      name: "apiserver_storage_objects", kind: "gauge", stabilityLevel: "STABLE", deprecatedVersion: "1.34.0", labelNames: ["resource"],
      help: "[DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
      collect: () => options.resources.map(({ groupResource: { group, resource }, prefix }) => ({
        labels: { resource: group === "" ? resource : `${resource}.${group}` },
        value: this.#objectCounts.get(prefix) ?? -1,
      })),
    });
    r.collector({
      name: "apiserver_resource_objects", kind: "gauge", labelNames: ["group", "resource"],
      help: "Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
      collect: () => options.resources.map(({ groupResource: { group, resource }, prefix }) => ({
        labels: { group, resource }, value: this.#objectCounts.get(prefix) ?? -1,
      })),
    });
    r.collector({
      name: "apiserver_storage_size_bytes", kind: "gauge", stabilityLevel: "STABLE", labelNames: ["storage_cluster_id"],
      help: "Size of the storage database file physically allocated in bytes.",
      collect: () => (this.#sizeBytes === undefined ? [] : [{ labels: { storage_cluster_id: options.storage.backend }, value: this.#sizeBytes }]),
    });
  }

  /** Reads object counts and the store size now, then every refresh interval until stop(). */
  async start(): Promise<void> {
    await this.refresh();
    this.#timer = setInterval(() => void this.refresh(), this.#options.refreshIntervalMs ?? 10_000);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }

  /** One read of every resource's object count (-1 where it fails) and of the store size. */
  async refresh(): Promise<void> {
    const { storage } = this.#options;
    await Promise.all(this.#options.resources.map(async ({ prefix }) => {
      try {
        this.#objectCounts.set(prefix, await storage.count(prefix));
      } catch {
        this.#objectCounts.set(prefix, -1);
      }
    }));
    try {
      this.#sizeBytes = (await storage.stats()).sizeBytes;
    } catch {
      // Keep the last size; the next refresh tries again.
    }
  }

  /** Call when a request arrives (after routing). */
  begin(req: Incoming, path: ParsedPath, query: URLSearchParams): RequestRecord {
    const method = req.method ?? "GET";
    const verb = requestVerb(method, req.headers["content-type"], path, query);
    const dryRun = query.get("dryRun") === "All" ? "All" : "";
    // The cache key is built from the parts; the labels object only on the first request of its kind.
    const key = path.kind === "resource"
      ? `${verb}|${path.group}|${path.version}|${path.resource}|${path.subresource ?? ""}|${path.name !== undefined ? "r" : path.namespace !== undefined ? "n" : "c"}|${dryRun}`
      : `${verb}||||${path.kind === "other" ? path.path : ""}||${dryRun}`;
    let handles = this.#cache.get(key);
    if (handles === undefined) {
      const labels = requestLabels(verb, path, dryRun);
      const { dry_run: _dryRun, ...sizeLabels } = labels;
      // Long-running requests are counted while open, not timed.
      const histograms = !longRunningVerb(verb, path);
      handles = {
        duration: histograms ? this.#duration.bind(labels) : undefined,
        sli: histograms && dryRun === "" ? this.#sli.bind(sizeLabels) : undefined,
        size: histograms ? this.#sizes.bind(sizeLabels) : undefined,
        byCode: new Map(),
        labels,
        longRunning: histograms ? undefined : this.#longRunning.bind((({ dry_run: _d, ...l }) => l)(labels)),
      };
      // Unknown paths must not grow the cache without bound.
      if (this.#cache.size < 10_000) this.#cache.set(key, handles);
    }
    const inflight = handles.longRunning !== undefined ? undefined : method === "GET" || method === "HEAD" ? this.#inflight.readOnly : this.#inflight.mutating;
    inflight?.inc();
    handles.longRunning?.inc();
    const write = verb === "POST" || verb === "PUT" || verb === "PATCH" || verb === "APPLY";
    // No directive (or "") means Warn, as upstream (src/machinery/decode/field-validation.ts).
    const fieldValidation = write ? query.get("fieldValidation") || "Warn" : "";
    const record = { started: performance.now(), queuedSeconds: 0, webhookSeconds: 0, handles, inflight, longRunning: handles.longRunning, fieldValidation };
    records.set(req, record);
    return record;
  }

  /** Call when the response has ended. */
  end(record: RequestRecord, res: Pick<Outgoing, "statusCode">, bytes: number | undefined): void {
    const { handles } = record;
    record.inflight?.dec();
    record.longRunning?.dec();
    const code = res.statusCode;
    let counter = handles.byCode.get(code);
    if (counter === undefined) {
      counter = this.#requests.bind({ ...handles.labels, code: String(code) });
      handles.byCode.set(code, counter);
    }
    counter.inc();
    // Long-running requests stay out of the latency and size histograms, as upstream.
    if (record.longRunning !== undefined) return;
    const seconds = (performance.now() - record.started) / 1000;
    handles.duration?.observe(seconds);
    handles.sli?.observe(Math.max(0, seconds - record.queuedSeconds - record.webhookSeconds));
    if (bytes !== undefined) handles.size?.observe(bytes);
    if (record.fieldValidation !== "") {
      this.#fieldValidation.observe({ field_validation: record.fieldValidation, status: String(code) }, seconds);
    }
  }

  /** A queue of the in-flight limit's two series: waits that then ran, and waits that were refused (bound once, not per request). */
  queueWaits(queue: { flow_schema: string; priority_level: string }): { ran: { observe(v: number): void }; refused: { observe(v: number): void } } {
    return { ran: this.#queueWait.bind({ ...queue, execute: "true" }), refused: this.#queueWait.bind({ ...queue, execute: "false" }) };
  }

  /** A streaming list (watch with sendInitialEvents) sent its last initial event after `seconds`. */
  watchListDone(path: ParsedPath, seconds: number): void {
    if (path.kind !== "resource") return;
    this.#watchList.observe({ group: path.group, resource: path.resource, scope: path.namespace === undefined ? "cluster" : "namespace", version: path.version }, seconds);
  }
}

/** Each recorded request's record, for the parts of the server that see only the request. */
const records = new WeakMap<object, RequestRecord>();

/** The request spent `seconds` calling an admission webhook (left out of its SLI duration). */
export function addWebhookSeconds(req: object, seconds: number): void {
  const record = records.get(req);
  if (record !== undefined) record.webhookSeconds += seconds;
}

/** Counts the body bytes a response writes (for apiserver_response_sizes); call the result once it has ended. */
export function countResponseBytes(res: Outgoing): () => number {
  let n = 0;
  const size = (chunk: unknown) => (typeof chunk === "string" ? Buffer.byteLength(chunk) : (chunk as Uint8Array | undefined)?.byteLength ?? 0);
  const out = res as unknown as { write: (...a: unknown[]) => boolean; end: (...a: unknown[]) => unknown };
  const write = out.write;
  const end = out.end;
  out.write = function (this: unknown, ...args: unknown[]) {
    n += size(args[0]);
    return write.apply(this, args);
  };
  out.end = function (this: unknown, ...args: unknown[]) {
    if (typeof args[0] !== "function") n += size(args[0]);
    return end.apply(this, args);
  };
  return () => n;
}

const CONNECT_SUBRESOURCES = new Set(["exec", "attach", "portforward", "proxy"]);

/**
 * Watches, log streams and connections (exec, attach, port-forward, proxy)
 * are long-running (upstream's check): the metrics count them while open
 * without timing them, and the in-flight limit and request timeout
 * (filters/inflight.ts, filters/timeout.ts) leave them alone.
 */
export function isLongRunning(req: Incoming, path: ParsedPath, query: URLSearchParams): boolean {
  return longRunningVerb(requestVerb(req.method ?? "GET", req.headers["content-type"], path, query), path);
}

function longRunningVerb(verb: string, path: ParsedPath): boolean {
  return verb === "WATCH" || verb === "CONNECT" || (path.kind === "resource" && path.subresource === "log");
}

function requestVerb(method: string, contentType: string | string[] | undefined, path: ParsedPath, query: URLSearchParams): string {
  if (path.kind !== "resource") return method;
  // Connect sub-resources (pods/exec) are upstream's CONNECT verb, whatever the method.
  if (path.subresource !== undefined && CONNECT_SUBRESOURCES.has(path.subresource)) return "CONNECT";
  if (method === "GET") {
    if (path.name !== undefined) return "GET";
    return queryBool(query, "watch") === true ? "WATCH" : "LIST";
  }
  if (method === "PATCH" && typeof contentType === "string" && contentType.startsWith("application/apply-patch")) return "APPLY";
  return method;
}

function requestLabels(verb: string, path: ParsedPath, dryRun: string): RequestLabels {
  if (path.kind !== "resource") {
    const p = path.kind === "other" ? path.path : "";
    return { verb, group: "", version: "", resource: "", subresource: NAMED_PATHS.has(p) ? p : "", scope: "", dry_run: dryRun, component: COMPONENT };
  }
  const scope = path.name !== undefined ? "resource" : path.namespace !== undefined ? "namespace" : "cluster";
  return {
    verb, group: path.group, version: path.version, resource: path.resource, subresource: path.subresource ?? "",
    scope, dry_run: dryRun, component: COMPONENT,
  };
}
