// The agent's statistics endpoints on its port (behind the port's access
// check: nodes/stats for /stats/*, nodes/metrics for /metrics/*, as upstream's
// kubelet authorizes them): /stats/summary, /metrics/resource,
// /metrics/probes, and the container metrics at /metrics/statscollector and
// upstream's path /metrics/cadvisor. GET and HEAD only.

import { availableParallelism } from "node:os";
import type { Request, Response } from "../../component/endpoints.js";
import { DEFAULT_BUCKETS, MetricsRegistry, TEXT_CONTENT_TYPE, type Counter, type Histogram } from "../../component/metrics/index.js";
import type { ProbeResult } from "../probes/prober.js";
import type { StatsCollector } from "./collect.js";
import { containerMetrics, resourceMetrics } from "./exposition.js";
import { summary } from "./summary.js";

export const STATS_PATHS = ["/stats/summary", "/metrics/resource", "/metrics/probes", "/metrics/cadvisor", "/metrics/statscollector"] as const;

const PROBE_TYPE = { liveness: "Liveness", readiness: "Readiness", startup: "Startup" } as const;

/** prober_probe_total and prober_probe_duration_seconds, upstream's families and labels. */
export class ProbeMetrics {
  readonly registry = new MetricsRegistry({ selfMetrics: false });
  readonly #total: Counter;
  readonly #duration: Histogram;

  constructor() {
    this.#total = this.registry.counter({
      name: "prober_probe_total",
      help: "Cumulative number of a liveness, readiness or startup probe for a container by result.",
      labelNames: ["probe_type", "result", "container", "pod", "namespace", "pod_uid"],
      stabilityLevel: "BETA",
    });
    this.#duration = this.registry.histogram({
      name: "prober_probe_duration_seconds",
      help: "Duration in seconds for a probe response.",
      labelNames: ["probe_type", "container", "pod", "namespace"],
      buckets: DEFAULT_BUCKETS,
    });
  }

  record(r: ProbeResult): void {
    const base = { probe_type: PROBE_TYPE[r.kind], container: r.container, pod: r.pod.metadata.name ?? "", namespace: r.pod.metadata.namespace ?? "" };
    this.#total.inc({ ...base, result: r.ok ? "successful" : "failed", pod_uid: r.pod.metadata.uid ?? "" });
    this.#duration.observe(base, r.seconds);
  }
}

export interface StatsEndpointsOptions {
  collector: StatsCollector;
  probes: ProbeMetrics;
  nodeName: string;
  nodeStartTime: string;
  log?: (line: string) => void;
}

function send(req: Request, res: Response, code: number, type: string, body: string): void {
  res.writeHead(code, { "content-type": type, "content-length": Buffer.byteLength(body) });
  if (req.method === "HEAD") res.end();
  else res.end(body);
}

/** Answers one of STATS_PATHS (the component server has checked access). */
export async function serveStats(o: StatsEndpointsOptions, req: Request, res: Response, url: URL): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { "content-type": "text/plain; charset=utf-8", allow: "GET, HEAD" });
    res.end("405: Method Not Allowed");
    return;
  }
  const path = url.pathname;
  if (path === "/metrics/probes") return send(req, res, 200, TEXT_CONTENT_TYPE, o.probes.registry.expose());
  if (path === "/metrics/resource") {
    // A failed reading is still a 200 with resource_scrape_error 1 (what scrapers key on).
    const reading = await o.collector.read().catch((err: unknown) => {
      o.log?.(`stats: resource metrics: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    });
    return send(req, res, 200, TEXT_CONTENT_TYPE, resourceMetrics(reading));
  }
  let reading;
  try {
    reading = await o.collector.read();
  } catch (err) {
    const message = `failed to get stats: ${err instanceof Error ? err.message : String(err)}`;
    return send(req, res, 500, "text/plain; charset=utf-8", `Internal Error: ${message}\n`);
  }
  if (path === "/stats/summary") {
    return send(req, res, 200, "application/json", JSON.stringify(summary(reading, o.nodeName, o.nodeStartTime), null, 2));
  }
  return send(req, res, 200, TEXT_CONTENT_TYPE, containerMetrics(reading, { cores: availableParallelism() }));
}
