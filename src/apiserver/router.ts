// Which handler answers a request the filters let through (filters/index.ts):
// the component endpoints (health, /metrics, z-pages: seed 002), OpenAPI,
// discovery, then the resource API; anything else is a 404 Status. HTTP/1.1
// Upgrades are served only by the connect subresources (pods/exec, attach).

import type { ResourceDefinition } from "../api/resource.js";
import type { ComponentEndpoints } from "../component/index.js";
import { badRequest, pathNotFound } from "../machinery/index.js";
import type { ApiRegistry } from "./api-registry.js";
import type { RequestContext, ResponseExchange, UpgradeExchange } from "./filters/index.js";
import type { Discovery } from "./handlers/discovery.js";
import type { OpenApi } from "./handlers/openapi.js";
import { CONNECT_SUBRESOURCES, proxyPodStream } from "./handlers/pod-exec.js";
import { handlePodLog } from "./handlers/pod-log.js";
import { handleResource } from "./handlers/resource.js";
import { sendJson, type Encoding } from "./http/respond.js";
import type { NodeAgentClient } from "./node-agents.js";
import type { RegistryStore } from "./registry/store.js";
import type { WatchEnv } from "./registry/watch.js";
import type { ApiServerMetrics } from "./request-metrics.js";
import type { ResourcePath } from "./routing.js";
import type { Stores } from "./storage-factory.js";

export interface RouterOptions {
  readonly endpoints: ComponentEndpoints;
  readonly openapi: OpenApi;
  readonly discovery: Discovery;
  readonly registry: ApiRegistry;
  readonly stores: Stores;
  readonly watchEnv: WatchEnv & { readonly initialEventsEndAnnotation: string };
  readonly encoding: Encoding;
  /** Streaming lists report how long their initial events took (when the request is recorded). */
  readonly metrics: ApiServerMetrics;
  /** The node agents (pods/log). */
  readonly agents: NodeAgentClient;
  /** The API server's client certificate for node agents (pods/exec). */
  readonly agentClient: { readonly cert: string; readonly key: string };
}

export class Router {
  readonly #o: RouterOptions;

  constructor(options: RouterOptions) {
    this.#o = options;
  }

  async serve(ctx: RequestContext<ResponseExchange>): Promise<void> {
    const { endpoints, openapi, discovery, registry, stores, watchEnv, encoding, metrics } = this.#o;
    const { req, url, path: parsed, record } = ctx;
    const { res } = ctx.exchange;
    const path = url.pathname;
    if (endpoints.handles(path) && (req.method === "GET" || req.method === "HEAD") && (await endpoints.serve(req, res, url))) return;
    if (path === "/openapi/v3" || path.startsWith("/openapi/v3/") || path === "/openapi/v2") {
      const doc = openapi.answer(path);
      if (doc === undefined) throw pathNotFound();
      return sendJson(res, 200, doc);
    }
    if (parsed.kind === "discovery") {
      const answer = discovery.answer(parsed, req.headers.accept);
      if (answer === undefined) throw pathNotFound();
      return sendJson(res, 200, answer.body, answer.contentType);
    }
    if (parsed.kind === "resource") {
      const def = registry.lookup(parsed.group, parsed.version, parsed.resource);
      const store = def === undefined ? undefined : stores.for(def);
      if (store === undefined) throw pathNotFound();
      const streamed = this.#podStream(ctx, parsed, def!, store);
      if (streamed !== undefined) return streamed;
      // A streaming list reports how long its initial events took (apiserver_watch_list_duration_seconds).
      const env = record !== undefined && url.searchParams.get("sendInitialEvents") === "true"
        ? { ...watchEnv, onInitialEventsEnd: () => metrics.watchListDone(parsed, (performance.now() - record.started) / 1000) }
        : watchEnv;
      return handleResource({ req, res, path: parsed, query: url.searchParams, store, watchEnv: env, schemas: registry.schemas, encoding });
    }
    throw pathNotFound();
  }

  // ---- pods/log, pods/exec and pods/attach: special cases until subresources are declarations ----
  // (issue 13: handleResource will serve pods/log itself, and a generic handleUpgrade the connect
  // subresources; then #podStream goes and upgrade() calls that.)

  /** Serves pods/log, refuses a connect subresource that did not come as an Upgrade; undefined for everything else. */
  #podStream(ctx: RequestContext<ResponseExchange>, parsed: ResourcePath, def: ResourceDefinition, store: RegistryStore): Promise<void> | undefined {
    const { req, url } = ctx;
    if (parsed.subresource === "log" && def.subresources?.log && parsed.name !== undefined) {
      return handlePodLog({ req, res: ctx.exchange.res, path: parsed, query: url.searchParams, pods: store, nodes: this.#o.stores.nodes, agents: this.#o.agents });
    }
    // Upgrades go to upgrade(); over HTTP/2 or without one, upstream answers the same.
    if (CONNECT_SUBRESOURCES.has(parsed.subresource ?? "") && def.subresources?.exec && parsed.name !== undefined) throw badRequest("Upgrade request required");
    return undefined;
  }

  /** An HTTP/1.1 Upgrade: pods/exec and pods/attach carried to the pod's node agent. */
  async upgrade(ctx: RequestContext<UpgradeExchange>): Promise<void> {
    const { req, url, path: parsed } = ctx;
    const { socket, head } = ctx.exchange;
    const def = parsed.kind === "resource" ? this.#o.registry.lookup(parsed.group, parsed.version, parsed.resource) : undefined;
    if (parsed.kind !== "resource" || !def?.subresources?.exec || !CONNECT_SUBRESOURCES.has(parsed.subresource ?? "") || parsed.name === undefined) {
      throw badRequest(`${req.headers.upgrade ?? "upgrade"} requests are served only by connect sub-resources (pods/exec, pods/attach)`);
    }
    const pods = this.#o.stores.for(def)!;
    await proxyPodStream({ req, socket, head, path: parsed, query: url.searchParams, pods, nodes: this.#o.stores.nodes, agentClient: this.#o.agentClient });
  }
  // ---- end of the pod stream special cases ----
}
