// metrics.k8s.io/v1beta1 answered from the scraper's samples (metrics-server's
// API, served by the API server itself): get and list of NodeMetrics
// (/nodes[/NAME]) and PodMetrics (/pods, /namespaces/NS/pods[/NAME]), the
// selectors applied to the Nodes and Pods themselves (so `kubectl top pods -l`
// works), labels copied from them, and the Table of the kinds' declarations
// when asked for. An object without two samples yet is not there (404 on get,
// left out of lists), as with metrics-server. Only GET: other verbs are 405.

import type { Node, Pod } from "../../api/core/types.js";
import { METRICS_GROUP, type NodeMetrics, type PodMetrics } from "../../api/metrics/index.js";
import type { ResourceDefinition } from "../../api/resource.js";
import { cachedRecord } from "../../storage/cacher/index.js";
import { formatDuration, methodNotSupported, notFound, type ApiObject } from "../../machinery/index.js";
import { sendList, sendObject, type Encoding, type Incoming, type Outgoing, type ResponseScope } from "../http/respond.js";
import type { RegistryStore } from "../registry/store.js";
import { usageOf, type ResourceScraper } from "./scrape.js";

export interface MetricsApiOptions {
  scraper: ResourceScraper;
  nodes: RegistryStore;
  pods: RegistryStore;
  encoding: Encoding;
}

export interface MetricsRequest {
  req: Incoming;
  res: Outgoing;
  def: ResourceDefinition;
  version: string;
  namespace: string | undefined;
  name: string | undefined;
  query: URLSearchParams;
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
const usage = (u: { nanoCores: number; bytes: number }): { cpu: string; memory: string } => ({ cpu: `${u.nanoCores}n`, memory: `${Math.round(u.bytes / 1024)}Ki` });
const windowOf = (seconds: number): string => formatDuration(Math.round(seconds * 1000));

export class MetricsApi {
  readonly #o: MetricsApiOptions;

  constructor(options: MetricsApiOptions) {
    this.#o = options;
  }

  handles(group: string): boolean {
    return group === METRICS_GROUP;
  }

  async serve(r: MetricsRequest): Promise<void> {
    const gr = { group: METRICS_GROUP, resource: r.def.resource };
    if (r.req.method !== "GET" && r.req.method !== "HEAD") throw methodNotSupported(gr, (r.req.method ?? "").toLowerCase());
    if (r.query.get("watch") === "true" || r.query.get("watch") === "1") throw methodNotSupported(gr, "watch");
    const scope: ResponseScope = { req: r.req, res: r.res, def: r.def, gv: `${METRICS_GROUP}/${r.version}`, encoding: this.#o.encoding };
    const selectors = { labelSelector: r.query.get("labelSelector") ?? undefined, fieldSelector: r.query.get("fieldSelector") ?? undefined };
    const now = iso(Date.now());
    const record = (obj: ApiObject) => cachedRecord({ key: `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`, object: obj, revision: 0 });
    if (r.def.resource === "nodes") {
      if (r.name !== undefined) {
        const node = (await this.#o.nodes.get(undefined, r.name).catch(() => undefined))?.object as Node | undefined;
        const m = node === undefined ? undefined : this.#nodeMetrics(node, now);
        if (m === undefined) throw notFound({ group: METRICS_GROUP, resource: "nodemetrics" }, r.name);
        return sendObject(scope, 200, record(m));
      }
      const nodes = await this.#o.nodes.list(undefined, selectors);
      const items = nodes.items.flatMap((c) => this.#nodeMetrics(c.object as Node, now) ?? []);
      return sendList(scope, { items: items.map(record), metadata: {} });
    }
    if (r.name !== undefined) {
      const pod = (await this.#o.pods.get(r.namespace, r.name).catch(() => undefined))?.object as Pod | undefined;
      const m = pod === undefined ? undefined : this.#podMetrics(pod, now);
      if (m === undefined) throw notFound({ group: METRICS_GROUP, resource: "podmetrics" }, r.name);
      return sendObject(scope, 200, record(m));
    }
    const pods = await this.#o.pods.list(r.namespace, selectors);
    const items = pods.items.flatMap((c) => this.#podMetrics(c.object as Pod, now) ?? []);
    return sendList(scope, { items: items.map(record), metadata: {} });
  }

  #nodeMetrics(node: Node, now: string): NodeMetrics | undefined {
    const u = usageOf(this.#o.scraper.get(node.metadata.name!)?.node);
    if (u === undefined) return undefined;
    return {
      apiVersion: `${METRICS_GROUP}/v1beta1`,
      kind: "NodeMetrics",
      metadata: { name: node.metadata.name!, creationTimestamp: now, ...(node.metadata.labels ? { labels: node.metadata.labels } : {}) },
      timestamp: iso(u.at),
      window: windowOf(u.windowSeconds),
      usage: usage(u),
    };
  }

  #podMetrics(pod: Pod, now: string): PodMetrics | undefined {
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) return undefined;
    const series = this.#o.scraper.get(nodeName)?.pods.get(`${pod.metadata.namespace}/${pod.metadata.name}`);
    if (series === undefined) return undefined;
    const containers: PodMetrics["containers"] = [];
    let at = 0;
    let window = 0;
    for (const [name, s] of series) {
      const u = usageOf(s);
      if (u === undefined) continue;
      containers.push({ name, usage: usage(u) });
      at = Math.max(at, u.at);
      window = Math.max(window, u.windowSeconds);
    }
    if (containers.length === 0) return undefined;
    containers.sort((a, b) => a.name.localeCompare(b.name));
    return {
      apiVersion: `${METRICS_GROUP}/v1beta1`,
      kind: "PodMetrics",
      metadata: { name: pod.metadata.name!, namespace: pod.metadata.namespace!, creationTimestamp: now, ...(pod.metadata.labels ? { labels: pod.metadata.labels } : {}) },
      timestamp: iso(at),
      window: windowOf(window),
      containers,
    };
  }
}
