// The REST client: every verb of the resource API (seed 000, "Endpoints",
// "Query parameters") over one HTTP/2 session, reopened when it closes. A
// non-2xx answer throws an ApiError carrying the server's Status unchanged;
// watches yield parsed events and throw on an ERROR event.
//
// The pieces live in rest/: types.ts (what callers pass), query.ts (paths,
// query parameters, headers), transport.ts (the session), response.ts
// (bodies and errors), watch-stream.ts and discovery.ts.

import type { ApiList, ApiObject, Status } from "../machinery/index.js";
import type { ClientConfig } from "./kubeconfig.js";
import { restClientMetrics, type RestClientMetrics } from "./metrics.js";
import { discoverResources } from "./rest/discovery.js";
import {
  deleteBody,
  JSON_TYPE,
  METADATA_ACCEPT,
  METADATA_LIST_ACCEPT,
  PATCH_CONTENT_TYPES,
  PROTOBUF_ACCEPT,
  required,
  resourcePath,
  selectors,
  set,
  signal,
  writeQuery,
} from "./rest/query.js";
import { decodeProtobufResponse, errorFromResponse, isProtobufResponse, preview, readAll } from "./rest/response.js";
import { Http2Transport, type OpenedResponse } from "./rest/transport.js";
import type {
  CallOptions,
  CreateOptions,
  DeleteCollectionOptions,
  DeleteOptions,
  DiscoveredResource,
  GetOptions,
  ListOptions,
  PatchOptions,
  RawRequest,
  RawResponse,
  ResourceRef,
  RestClientOptions,
  UpdateOptions,
  Watch,
  WatchOptions,
} from "./rest/types.js";
import { EventStream } from "./rest/watch-stream.js";

export type * from "./rest/types.js";
export { decodeProtobufResponse, errorFromResponse } from "./rest/response.js";

export class RestClient {
  readonly config: ClientConfig;
  readonly #options: RestClientOptions;
  /** A path prefix in the server URL (`https://host/prefix`), kept on every request. */
  readonly #basePath: string;
  readonly #transport: Http2Transport;
  readonly #metrics: RestClientMetrics | undefined;

  constructor(config: ClientConfig, options: RestClientOptions = {}) {
    this.config = config;
    this.#options = options;
    const url = new URL(config.server);
    if (url.protocol !== "https:") throw new Error(`the API server address must be https (got ${config.server})`);
    this.#basePath = url.pathname.replace(/\/+$/, "");
    this.#metrics = options.metrics === undefined ? undefined : restClientMetrics(options.metrics);
    this.#transport = new Http2Transport(config, url, {
      userAgent: options.userAgent,
      requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
      healthCheckIntervalMs: options.healthCheckIntervalMs ?? 30_000,
      onWarning: options.onWarning,
      metrics: this.#metrics,
    });
  }

  /**
   * A client like this one (server, credentials, user agent, metrics) on an
   * HTTP/2 session of its own: for requests that must not wait behind this
   * client's streams (on a shared session a lease renewal's answer shares one
   * socket with a flood of watch events, written after those queued first).
   */
  ownSession(): RestClient {
    return new RestClient(this.config, this.#options);
  }

  /** Reconnects with `config` as it is now (the node agent replaces its rotated certificate in place); open watches end and are resumed by their informers. */
  reconnect(): void {
    this.#transport.reconnect();
  }

  // ---- verbs ----

  async get<T extends ApiObject = ApiObject>(ref: ResourceRef, options: GetOptions): Promise<T> {
    const query = new URLSearchParams();
    set(query, "resourceVersion", options.resourceVersion);
    return this.#json<T>({
      method: "GET",
      path: this.#path(ref, required(ref, options.namespace), options.name, options.subresource),
      query,
      headers: { accept: options.metadataOnly ? METADATA_ACCEPT : this.#objectAccept() },
      ...signal(options),
    });
  }

  /** One page (or the whole collection without `limit`). */
  async list<T extends ApiObject = ApiObject>(ref: ResourceRef, options: ListOptions = {}): Promise<ApiList<T>> {
    const query = new URLSearchParams();
    selectors(query, options);
    if (options.limit !== undefined && options.limit > 0) query.set("limit", String(options.limit));
    set(query, "continue", options.continue);
    set(query, "resourceVersion", options.resourceVersion);
    set(query, "resourceVersionMatch", options.resourceVersionMatch);
    if (options.timeoutSeconds !== undefined) query.set("timeoutSeconds", String(options.timeoutSeconds));
    return this.#json<ApiList<T>>({
      method: "GET",
      path: this.#path(ref, options.namespace),
      query,
      headers: { accept: options.metadataOnly ? METADATA_LIST_ACCEPT : this.#objectAccept() },
      ...signal(options),
    });
  }

  /** Every page of a chunked list (seed 000, "Chunked lists"), all at the first page's resourceVersion. */
  async listAll<T extends ApiObject = ApiObject>(ref: ResourceRef, options: ListOptions & { pageSize?: number } = {}): Promise<ApiList<T>> {
    const { pageSize = 500, ...rest } = options;
    const first = await this.list<T>(ref, { ...rest, limit: pageSize });
    const items = [...first.items];
    let token = first.metadata.continue;
    while (token) {
      const page = await this.list<T>(ref, { ...rest, limit: pageSize, continue: token, resourceVersion: undefined, resourceVersionMatch: undefined });
      items.push(...page.items);
      token = page.metadata.continue;
    }
    return { apiVersion: first.apiVersion, kind: first.kind, metadata: { resourceVersion: first.metadata.resourceVersion }, items };
  }

  async create<T extends ApiObject = ApiObject>(ref: ResourceRef, object: T, options: CreateOptions = {}): Promise<T> {
    // A subresource is posted to its object's path (pods/<name>/binding, .../eviction).
    const name = options.subresource !== undefined ? object.metadata?.name : undefined;
    return this.#sendObject("POST", ref, object, name, options);
  }

  /** PUT: the object's metadata.resourceVersion makes it conditional (409 when stale). */
  async update<T extends ApiObject = ApiObject>(ref: ResourceRef, object: T, options: UpdateOptions = {}): Promise<T> {
    const name = options.name ?? object.metadata?.name;
    if (!name) throw new Error(`update of ${ref.resource} needs a name (metadata.name or options.name)`);
    return this.#sendObject("PUT", ref, object, name, options);
  }

  async patch<T extends ApiObject = ApiObject>(ref: ResourceRef, options: PatchOptions): Promise<T> {
    const query = writeQuery(options);
    if (options.force) query.set("force", "true");
    return this.#json<T>({
      method: "PATCH",
      path: this.#path(ref, required(ref, options.namespace), options.name, options.subresource),
      query,
      body: typeof options.patch === "string" ? options.patch : JSON.stringify(options.patch),
      headers: { "content-type": PATCH_CONTENT_TYPES[options.type ?? "merge"], accept: JSON_TYPE },
      ...signal(options),
    });
  }

  /** The object as marked for deletion (finalizers remain), or the server's success Status / last state when removed. */
  async delete<T extends ApiObject = ApiObject>(ref: ResourceRef, options: DeleteOptions): Promise<T | Status> {
    return this.#json<T | Status>({
      method: "DELETE",
      path: this.#path(ref, required(ref, options.namespace), options.name),
      body: JSON.stringify(deleteBody(options)),
      headers: { "content-type": JSON_TYPE, accept: JSON_TYPE },
      ...signal(options),
    });
  }

  async deleteCollection<T extends ApiObject = ApiObject>(ref: ResourceRef, options: DeleteCollectionOptions = {}): Promise<ApiList<T> | Status> {
    const query = new URLSearchParams();
    selectors(query, options);
    return this.#json<ApiList<T> | Status>({
      method: "DELETE",
      path: this.#path(ref, options.namespace),
      query,
      body: JSON.stringify(deleteBody(options)),
      headers: { "content-type": JSON_TYPE, accept: JSON_TYPE },
      ...signal(options),
    });
  }

  /**
   * Opens a watch (seed 000, "Watch behavior"). Resolves once the server has
   * answered: a refused watch (400, 410 Expired, 504 ...) rejects here with its
   * Status; an ERROR event later is thrown from the iteration.
   */
  async watch<T extends ApiObject = ApiObject>(ref: ResourceRef, options: WatchOptions = {}): Promise<Watch<T>> {
    const query = new URLSearchParams({ watch: "1" });
    selectors(query, options);
    set(query, "resourceVersion", options.resourceVersion);
    set(query, "resourceVersionMatch", options.resourceVersionMatch);
    if (options.allowWatchBookmarks) query.set("allowWatchBookmarks", "true");
    if (options.sendInitialEvents !== undefined) query.set("sendInitialEvents", String(options.sendInitialEvents));
    if (options.timeoutSeconds !== undefined) query.set("timeoutSeconds", String(options.timeoutSeconds));
    const opened = await this.#start({
      method: "GET",
      path: this.#path(ref, options.namespace),
      query,
      headers: { accept: options.metadataOnly ? METADATA_ACCEPT : JSON_TYPE },
      ...signal(options),
    }, { watch: true });
    if (opened.status < 200 || opened.status > 299) {
      throw errorFromResponse(opened.status, await readAll(opened.stream));
    }
    return new EventStream<T>(opened.stream, options.signal);
  }

  /**
   * Legacy discovery: /api, /api/<v>, /apis and every group version's
   * APIResourceList, flattened to one entry per resource and version.
   */
  async discover(options: CallOptions = {}): Promise<DiscoveredResource[]> {
    return discoverResources(<T>(path: string) => this.#json<T>({ method: "GET", path, headers: { accept: JSON_TYPE }, ...signal(options) }));
  }

  /** A request as given; the answer whatever its status (for paths the verbs above do not cover). */
  async request(request: RawRequest): Promise<RawResponse> {
    const started = this.#metrics === undefined ? 0 : performance.now();
    const opened = await this.#start(request, { watch: false });
    const body = await readAll(opened.stream);
    if (this.#metrics !== undefined) {
      const labels = { verb: request.method, host: this.#transport.host };
      this.#metrics.duration.observe(labels, (performance.now() - started) / 1000);
      this.#metrics.responseSize.observe(labels, body.length);
    }
    return { status: opened.status, headers: opened.headers, body };
  }

  /** Ends the session and whatever still runs on it (watches end quietly); later calls open a new one. */
  close(): void {
    this.#transport.close();
  }

  // ---- plumbing ----

  /**
   * Send, and send again while the server says when to (client-go's rule): a
   * 429, or any 5xx, with a Retry-After of whole seconds is waited out and
   * retried, up to MAX_RETRIES times; the last answer is returned as it is.
   * The request was not served (overload, priority and fairness, a starting
   * server), so any verb may be sent again.
   */
  async #start(request: RawRequest, mode: { watch: boolean }): Promise<OpenedResponse> {
    for (let attempt = 0; ; attempt++) {
      const opened = await this.#transport.start(request, mode);
      const wait = retryAfterSeconds(opened.status, opened.headers);
      if (wait === undefined || attempt >= MAX_RETRIES) return opened;
      await readAll(opened.stream);
      await sleep(wait * 1000, request.signal);
    }
  }

  #path(ref: ResourceRef, namespace: string | undefined, name?: string, subresource?: string): string {
    return resourcePath(this.#basePath, ref, namespace, name, subresource);
  }

  /** A whole object as the JSON body, in the namespace of the options or else the object's own. */
  #sendObject<T extends ApiObject>(method: "POST" | "PUT", ref: ResourceRef, object: T, name: string | undefined, options: CreateOptions | UpdateOptions): Promise<T> {
    const namespace = ref.namespaced ? options.namespace ?? object.metadata?.namespace : undefined;
    return this.#json<T>({
      method,
      path: this.#path(ref, required(ref, namespace), name, options.subresource),
      query: writeQuery(options),
      body: JSON.stringify(object),
      headers: { "content-type": JSON_TYPE, accept: JSON_TYPE },
      ...signal(options),
    });
  }

  #objectAccept(): string {
    return this.#options.protobuf === undefined ? JSON_TYPE : PROTOBUF_ACCEPT;
  }

  async #json<T>(request: RawRequest): Promise<T> {
    const res = await this.request(request);
    if (res.status < 200 || res.status > 299) throw errorFromResponse(res.status, res.body, this.#options.protobuf);
    if (res.body.length === 0) return undefined as T;
    if (isProtobufResponse(res.headers)) return decodeProtobufResponse(res.body, this.#options.protobuf, `${request.method} ${request.path}`) as T;
    try {
      return JSON.parse(res.body.toString("utf8")) as T;
    } catch (err) {
      throw new Error(`${request.method} ${request.path}: the server answered ${res.status} with a body that is not JSON: ${preview(res.body)}`, { cause: err });
    }
  }
}

/** How many times a request is sent again on a Retry-After (client-go's default maxRetries). */
const MAX_RETRIES = 10;

/** The seconds a 429 or 5xx answer asks the client to wait before sending again; undefined: not to be retried. */
export function retryAfterSeconds(status: number, headers: Record<string, unknown>): number | undefined {
  if (status !== 429 && status < 500) return undefined;
  const value = headers["retry-after"];
  if (typeof value !== "string" || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
