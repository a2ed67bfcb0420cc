// Which handler answers a request the filters let through (filters/index.ts):
// the component endpoints (health, /metrics, z-pages: seed 002), OpenAPI,
// discovery, then the resource API; anything else is a 404 Status. HTTP/1.1
// Upgrades are served only by the connect subresources (pods/exec, attach).

import type { ComponentEndpoints } from "../component/index.js";
import { pathNotFound } from "../machinery/index.js";
import type { ApiRegistry } from "./api-registry.js";
import type { RequestContext, ResponseExchange, UpgradeExchange } from "./filters/index.js";
import type { Discovery } from "./handlers/discovery.js";
import type { OpenApi } from "./handlers/openapi.js";
import { handleResource, type HandlerDeps } from "./handlers/resource.js";
import { handleAuthenticationReview, isAuthenticationReview, type AuthenticationReviews } from "./handlers/authentication.js";
import { handleAuthorizationReview, isAuthorizationReview, type AuthorizationReviews } from "./authorization/reviews.js";
import { handleUpgrade } from "./handlers/subresources/upgrade.js";
import { createBinding } from "./handlers/subresources/binding.js";
import { BINDINGS } from "../api/core/index.js";
import { sendJson, type Encoding } from "./http/respond.js";
import { setWarnings } from "./handlers/write-options.js";
import type { NodeAgentClient } from "./node-agents.js";
import type { MetricsApi } from "./metrics-api/index.js";
import type { Aggregator } from "./aggregation/index.js";
import type { WatchEnv } from "./registry/watch.js";
import type { ApiServerMetrics } from "./request-metrics.js";
import type { Stores } from "./storage-factory.js";
import type { ServiceAccountTokens } from "./authentication/service-account-tokens.js";
import { OPENID_CACHE_CONTROL, type OpenIdMetadata } from "./authentication/openid-metadata.js";

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
  /** The node agents (pods/log, pods/exec, pods/attach). */
  readonly agents: NodeAgentClient;
  /** SelfSubjectReview and TokenReview (api/authentication): answered, not stored. */
  readonly authentication: AuthenticationReviews;
  /** Issues service-account tokens (serviceaccounts/NAME/token). */
  readonly serviceAccountTokens?: ServiceAccountTokens;
  /** Service-account issuer discovery (/.well-known/openid-configuration, /openid/v1/jwks), when the issuer allows it. */
  readonly openIdMetadata?: OpenIdMetadata;
  /** metrics.k8s.io, answered from the node agents' resource metrics, not stored. */
  readonly metricsApi?: MetricsApi;
  /** The access reviews (api/authorization): answered with the server's authorizers, not stored. */
  readonly authorization?: AuthorizationReviews;
  /** The aggregation layer: remote APIServices' groups, proxied to their servers. */
  readonly aggregator?: Aggregator;
}

export class Router {
  readonly #o: RouterOptions;
  readonly #deps: HandlerDeps;

  constructor(options: RouterOptions) {
    this.#o = options;
    this.#deps = { agents: options.agents, nodes: options.stores.nodes, pdbs: options.stores.for({ group: "policy", resource: "poddisruptionbudgets" }), endpoints: options.stores.for({ group: "", resource: "endpoints" }), ...(options.serviceAccountTokens ? { serviceAccountTokens: options.serviceAccountTokens } : {}) };
  }

  async serve(ctx: RequestContext<ResponseExchange>): Promise<void> {
    const { endpoints, openapi, discovery, registry, stores, watchEnv, encoding, metrics } = this.#o;
    const { req, url, path: parsed, record } = ctx;
    const { res } = ctx.exchange;
    const path = url.pathname;
    if (endpoints.handles(path) && (req.method === "GET" || req.method === "HEAD") && (await endpoints.serve(req, res, url))) return;
    const oidc = this.#o.openIdMetadata === undefined ? undefined : await this.#o.openIdMetadata.document(path);
    if (oidc !== undefined) {
      // As upstream's go-restful route: GET only (HEAD answers the headers), anything else is 405.
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { "content-type": "text/plain; charset=utf-8" }).end("405: Method Not Allowed");
        return;
      }
      res.writeHead(200, { "content-type": oidc.contentType, "cache-control": OPENID_CACHE_CONTROL, "content-length": oidc.body.length });
      if (req.method === "HEAD") res.end();
      else res.end(oidc.body);
      return;
    }
    if (openapi.handles(path)) return openapi.serve(req, res, path, { gzip: encoding.compression });
    if (this.#o.aggregator !== undefined && (await this.#o.aggregator.serve(ctx))) return;
    if (parsed.kind === "discovery") {
      const answer = discovery.answer(parsed, req.headers.accept);
      if (answer === undefined) throw pathNotFound();
      return sendJson(res, 200, answer.body, answer.contentType);
    }
    if (parsed.kind === "resource" && parsed.namespace === undefined && parsed.name === undefined && isAuthenticationReview(this.#o.authentication, parsed.group, parsed.version, parsed.resource)) {
      return handleAuthenticationReview(this.#o.authentication, req, res, parsed.group, parsed.resource, ctx.user!);
    }
    if (parsed.kind === "resource" && parsed.name === undefined && this.#o.authorization !== undefined && isAuthorizationReview(this.#o.authorization, parsed.group, parsed.version, parsed.resource, parsed.namespace)) {
      return handleAuthorizationReview(this.#o.authorization, req, res, parsed, ctx.user!);
    }
    if (parsed.kind === "resource" && this.#o.metricsApi?.handles(parsed.group)) {
      const def = registry.lookup(parsed.group, parsed.version, parsed.resource);
      if (def === undefined || parsed.subresource !== undefined || (parsed.namespace !== undefined && !def.namespaced)) throw pathNotFound();
      return this.#o.metricsApi.serve({ req, res, def, version: parsed.version, namespace: parsed.namespace, name: parsed.name, query: url.searchParams });
    }
    if (parsed.kind === "resource") {
      const def = registry.lookup(parsed.group, parsed.version, parsed.resource);
      // The top-level bindings (create-only, not stored): the binding subresource of the pod the body names.
      const pods = def?.group === "" && def.resource === BINDINGS ? registry.lookup("", parsed.version, "pods") : undefined;
      if (pods !== undefined) {
        return createBinding({ req, res, path: parsed, query: url.searchParams, store: stores.for(pods)!, watchEnv, schemas: registry.schemas, encoding, ...(ctx.user !== undefined ? { user: ctx.user } : {}), ...this.#deps });
      }
      const store = def === undefined ? undefined : stores.for(def);
      if (store === undefined) throw pathNotFound();
      const versionWarning = def!.versionWarning?.(parsed.version);
      if (versionWarning !== undefined) setWarnings(res, [versionWarning]);
      // A streaming list reports how long its initial events took (apiserver_watch_list_duration_seconds).
      const env = record !== undefined && url.searchParams.get("sendInitialEvents") === "true"
        ? { ...watchEnv, onInitialEventsEnd: () => metrics.watchListDone(parsed, (performance.now() - record.started) / 1000) }
        : watchEnv;
      return handleResource({ req, res, path: parsed, query: url.searchParams, store, watchEnv: env, schemas: registry.schemas, encoding, ...(ctx.user !== undefined ? { user: ctx.user } : {}), ...this.#deps });
    }
    throw pathNotFound();
  }

  /** An HTTP/1.1 Upgrade: a connect subresource (pods/exec, pods/attach) carried to the pod's node agent. */
  async upgrade(ctx: RequestContext<UpgradeExchange>): Promise<void> {
    const { req, url, path } = ctx;
    const { socket, head } = ctx.exchange;
    if (this.#o.aggregator !== undefined && (await this.#o.aggregator.upgrade(ctx))) return;
    const def = path.kind === "resource" ? this.#o.registry.lookup(path.group, path.version, path.resource) : undefined;
    const store = def === undefined ? undefined : this.#o.stores.for(def);
    await handleUpgrade({ req, socket, head, path, query: url.searchParams, store, ...(ctx.user !== undefined ? { user: ctx.user } : {}), ...this.#deps });
  }
}
