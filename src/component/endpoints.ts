// The diagnostic endpoints every component serves with the same code:
// /healthz, /livez, /readyz (and /<endpoint>/<check>), /version, /metrics
// (text 0.0.4, OpenMetrics, or protobuf with native histograms), /metrics/slis,
// /statusz and /flagz (gates ComponentStatusz, ComponentFlagz). The component
// server and the API server both route requests through `serve`.
// Seed 002, "Endpoints".

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { namingFor } from "../machinery/naming.js";
import { admits, mediaType, parseAccept } from "./accept.js";
import type { FeatureGates } from "./feature-gates.js";
import type { FlagEntry } from "./flags.js";
import { HealthChecks, type HealthEndpoint } from "./health.js";
import {
  MetricsRegistry, OPENMETRICS_CONTENT_TYPE, PROTOBUF_CONTENT_TYPE, TEXT_CONTENT_TYPE, type ExpositionFormat,
} from "./metrics/index.js";
import { versionInfo } from "./version.js";
import { flagz, statusz } from "./zpages.js";

export type Request = IncomingMessage | Http2ServerRequest;
export type Response = ServerResponse | Http2ServerResponse;

/**
 * Extra read-only paths a component serves through the same auth (e.g. the node agent's /metrics/resource).
 * A key ending in "/" serves every path under it (the node agent's /containerLogs/).
 * `methods` names what it takes besides GET and HEAD (the node agent's POST /checkpoint/).
 */
export type ExtraHandler = ((req: Request, res: Response, url: URL) => void | Promise<void>) & { readonly methods?: readonly string[] };

export interface ComponentEndpointsOptions {
  /** The component as z-pages name it: "orch-scheduler". */
  readonly component: string;
  readonly featureGates: FeatureGates;
  readonly metrics: MetricsRegistry;
  readonly health: HealthChecks;
  /** The SLI registry behind /metrics/slis (the one `health` records into). */
  readonly sliMetrics: MetricsRegistry;
  /** The parsed command line, for /flagz. */
  readonly flags?: { list(): readonly FlagEntry[] };
  readonly extra?: Readonly<Record<string, ExtraHandler>>;
  readonly startTime?: Date;
}

const HEALTH: ReadonlySet<string> = new Set(["healthz", "livez", "readyz"]);
const HEALTH_PREFIXES = ["/healthz", "/livez", "/readyz"];

/** Health and version are public (upstream's always-allowed paths); everything else needs an authorized caller. */
export function isPublicPath(path: string): boolean {
  if (path === "/version") return true;
  for (const h of HEALTH_PREFIXES) if (path === h || path.startsWith(`${h}/`)) return true;
  return false;
}

/** Picks the exposition for an Accept header, by q: protobuf, OpenMetrics, else text 0.0.4. */
export function negotiateMetrics(accept: string | undefined): ExpositionFormat {
  for (const r of parseAccept(accept)) {
    const type = mediaType(r);
    if (type === "application/vnd.google.protobuf" && r.params["proto"] === "io.prometheus.client.MetricFamily" && r.params["encoding"] === "delimited") return "protobuf";
    if (type === "application/openmetrics-text") return "openmetrics";
    if (admits(r, "text/plain")) return "text";
  }
  return "text";
}

const CONTENT_TYPES: Readonly<Record<ExpositionFormat, string>> = {
  text: TEXT_CONTENT_TYPE, openmetrics: OPENMETRICS_CONTENT_TYPE, protobuf: PROTOBUF_CONTENT_TYPE,
};

export class ComponentEndpoints {
  readonly component: string;
  readonly metrics: MetricsRegistry;
  readonly sliMetrics: MetricsRegistry;
  readonly health: HealthChecks;
  readonly startTime: Date;
  readonly #options: ComponentEndpointsOptions;
  /** The served paths, worked out once (gates are immutable): handles() runs on every API server request. */
  readonly #paths: readonly string[];
  readonly #pathSet: ReadonlySet<string>;
  /** Extra keys ending in "/": served for every path below them. */
  readonly #prefixes: readonly string[];

  constructor(options: ComponentEndpointsOptions) {
    this.#options = options;
    const g = options.featureGates;
    const paths = ["/healthz", "/livez", "/readyz", "/version", "/metrics", "/metrics/slis", ...Object.keys(options.extra ?? {})];
    if (g.enabled("ComponentStatusz")) paths.push("/statusz");
    if (g.enabled("ComponentFlagz")) paths.push("/flagz");
    this.#paths = Object.freeze(paths.sort());
    this.#pathSet = new Set(paths);
    this.#prefixes = Object.keys(options.extra ?? {}).filter((p) => p.endsWith("/"));
    this.component = options.component;
    this.metrics = options.metrics;
    this.sliMetrics = options.sliMetrics;
    this.health = options.health;
    this.startTime = options.startTime ?? new Date();
  }

  /** The read-only paths served, as /statusz lists them. */
  paths(): readonly string[] {
    return this.#paths;
  }

  /** Whether `serve` answers this path (so a server can route other paths elsewhere). */
  handles(path: string): boolean {
    return this.#pathSet.has(path) || isPublicPath(path) || this.#prefix(path) !== undefined;
  }

  /** Whether the path's handler takes this method besides GET and HEAD (ExtraHandler.methods). */
  takes(path: string, method: string): boolean {
    const extra = this.#options.extra?.[path] ?? this.#options.extra?.[this.#prefix(path) ?? ""];
    return extra?.methods?.includes(method.toUpperCase()) ?? false;
  }

  #prefix(path: string): string | undefined {
    for (const p of this.#prefixes) if (path.startsWith(p)) return p;
    return undefined;
  }

  /** Answers a GET for one of `paths()`; false when the path is not ours. Callers check access first. */
  async serve(req: Request, res: Response, url: URL): Promise<boolean> {
    const path = url.pathname;
    const [, first = "", sub, ...more] = path.split("/");
    if (HEALTH.has(first) && more.length === 0) {
      const answer = await this.health.answer(first as HealthEndpoint, sub, url.searchParams);
      send(res, answer.status, "text/plain; charset=utf-8", answer.body, { "x-content-type-options": "nosniff" });
      return true;
    }
    const gates = this.#options.featureGates;
    switch (path) {
      case "/version":
        send(res, 200, "application/json", JSON.stringify(versionInfo(), null, 2));
        return true;
      case "/metrics":
      case "/metrics/slis": {
        const registry = path === "/metrics" ? this.metrics : this.sliMetrics;
        const format = negotiateMetrics(req.headers.accept);
        send(res, 200, CONTENT_TYPES[format], registry.exposeAs(format));
        return true;
      }
      case "/statusz": {
        if (!gates.enabled("ComponentStatusz")) return false;
        const a = statusz({ component: this.component, startTime: this.startTime, paths: this.paths() }, req.headers.accept);
        send(res, a.status, a.contentType, a.body);
        return true;
      }
      case "/flagz": {
        if (!gates.enabled("ComponentFlagz")) return false;
        const a = flagz(this.component, this.#options.flags?.list() ?? [], req.headers.accept);
        send(res, a.status, a.contentType, a.body);
        return true;
      }
    }
    const extra = this.#options.extra?.[path] ?? this.#options.extra?.[this.#prefix(path) ?? ""];
    if (extra === undefined) return false;
    await extra(req, res, url);
    return true;
  }
}

function send(res: Response, status: number, contentType: string, body: string | Uint8Array, headers: Record<string, string> = {}): void {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  res.writeHead(status, { ...headers, "content-type": contentType, "content-length": bytes.length });
  res.end(bytes);
}

/** The endpoints with a fresh SLI registry and the standard checks plus `live`/`ready`. */
export function componentEndpoints(options: Omit<ComponentEndpointsOptions, "health" | "sliMetrics"> & {
  readonly health?: HealthChecks;
  readonly sliMetrics?: MetricsRegistry;
}): ComponentEndpoints {
  const sliMetrics = options.sliMetrics ?? new MetricsRegistry({ selfMetrics: false });
  const health = options.health ?? new HealthChecks({ sliRegistry: sliMetrics, metricPrefix: namingFor().metricPrefix });
  return new ComponentEndpoints({ ...options, health, sliMetrics });
}
