// The REST client: every verb of the resource API (seed 000, "Endpoints",
// "Query parameters") over one HTTP/2 session, reopened when it closes. A
// non-2xx answer throws an ApiError carrying the server's Status unchanged;
// watches yield parsed events and throw on an ERROR event.

import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from "node:http2";
import { ApiError, buildStatus, isStatusObject, type ApiList, type ApiObject, type Status, type StatusReason } from "../machinery/index.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import type { ClientConfig } from "./kubeconfig.js";
import type { SchemaRegistry } from "../api/schema.js";
import { PROTOBUF_MEDIA_TYPES } from "../api/naming.js";
import { decodeEnvelope, hasProtobufMagic, type TypeLookup } from "../machinery/codec/protobuf/index.js";
import { restClientMetrics, type RestClientMetrics } from "./metrics.js";

/** Which resource a call is about: enough to build its paths. */
export interface ResourceRef {
  /** "" for the core group. */
  group: string;
  version: string;
  /** Plural: "namespaces". */
  resource: string;
  namespaced: boolean;
}

export type LabelSelectorInput = string | Readonly<Record<string, string>>;

interface CallOptions {
  /** Cancels the request (a watch: ends its stream). */
  signal?: AbortSignal;
}

export interface GetOptions extends CallOptions {
  namespace?: string;
  name: string;
  subresource?: string;
  resourceVersion?: string;
  /** Ask for PartialObjectMetadata (falls back to the full object when the server lacks it). */
  metadataOnly?: boolean;
}

export interface ListOptions extends CallOptions {
  /** Omitted on a namespaced resource: every namespace. */
  namespace?: string;
  labelSelector?: LabelSelectorInput;
  fieldSelector?: LabelSelectorInput;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: "Exact" | "NotOlderThan";
  timeoutSeconds?: number;
  metadataOnly?: boolean;
}

export interface WatchOptions extends CallOptions {
  namespace?: string;
  labelSelector?: LabelSelectorInput;
  fieldSelector?: LabelSelectorInput;
  resourceVersion?: string;
  resourceVersionMatch?: "Exact" | "NotOlderThan";
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
  metadataOnly?: boolean;
}

export interface WriteOptions extends CallOptions {
  /** Default: the object's metadata.namespace. */
  namespace?: string;
  dryRun?: boolean;
  fieldValidation?: "Ignore" | "Warn" | "Strict";
  fieldManager?: string;
}

export interface CreateOptions extends WriteOptions {
  subresource?: string;
}

export interface UpdateOptions extends WriteOptions {
  /** Default: the object's metadata.name. */
  name?: string;
  subresource?: string;
}

export type PatchType = "merge" | "json" | "strategic" | "apply";

export interface PatchOptions extends WriteOptions {
  name: string;
  patch: unknown;
  /** Default "merge" (JSON merge patch, RFC 7386). */
  type?: PatchType;
  subresource?: string;
  /** Server-side apply: take over conflicting fields. */
  force?: boolean;
}

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export type PropagationPolicy = "Orphan" | "Background" | "Foreground";

export interface DeleteOptions extends CallOptions {
  namespace?: string;
  name: string;
  propagationPolicy?: PropagationPolicy;
  gracePeriodSeconds?: number;
  preconditions?: Preconditions;
  dryRun?: boolean;
}

export interface DeleteCollectionOptions extends CallOptions {
  namespace?: string;
  labelSelector?: LabelSelectorInput;
  fieldSelector?: LabelSelectorInput;
  propagationPolicy?: PropagationPolicy;
  gracePeriodSeconds?: number;
  dryRun?: boolean;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";

export interface WatchEvent<T extends ApiObject = ApiObject> {
  type: WatchEventType;
  object: T;
}

/** An open watch: iterate it for events; close() ends it (iteration then ends quietly). */
export interface Watch<T extends ApiObject = ApiObject> extends AsyncIterable<WatchEvent<T>> {
  close(): void;
}

/** One resource from discovery, with what may be done to it. */
export interface DiscoveredResource extends ResourceRef {
  kind: string;
  singularName: string;
  verbs: readonly string[];
  shortNames: readonly string[];
  categories: readonly string[];
  subresources: readonly { name: string; verbs: readonly string[] }[];
  /** True for the group's preferred version. */
  preferred: boolean;
}

export interface RawRequest extends CallOptions {
  method: string;
  /** Absolute path, without the query. */
  path: string;
  query?: URLSearchParams;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface RestClientOptions {
  userAgent?: string;
  /** Limit on every call but watches (default 60 s). */
  requestTimeoutMs?: number;
  /** While streams are open, PING the server this often and drop a session that does not answer (default 30 s). */
  healthCheckIntervalMs?: number;
  /** Server `Warning` headers (unknown fields and the like). */
  onWarning?: (warning: string) => void;
  /** Ask for Protobuf (then JSON) on get and list, and decode it with these schemas. */
  protobuf?: ProtobufDecoding;
  /** The component's registry: rest_client_* metrics. */
  metrics?: MetricsRegistry;
}

export interface ProtobufDecoding {
  schemas: SchemaRegistry;
  /** Schema type name of an envelope's apiVersion and kind. */
  lookupType: TypeLookup;
}

const JSON_TYPE = "application/json";
// Upstream's spelling of the meta group: every server (ours included) accepts it.
const METADATA_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
const METADATA_LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
};
/** Session-level failures after which an idempotent request may be retried once on a new session. */
const RETRYABLE_CODES = new Set(["ERR_HTTP2_GOAWAY_SESSION", "ERR_HTTP2_INVALID_SESSION", "ERR_HTTP2_STREAM_CANCEL", "ECONNRESET", "ERR_HTTP2_SESSION_ERROR"]);

export class RestClient {
  readonly config: ClientConfig;
  readonly #options: Required<Pick<RestClientOptions, "requestTimeoutMs" | "healthCheckIntervalMs">> & RestClientOptions;
  readonly #origin: string;
  /** A path prefix in the server URL (`https://host/prefix`), kept on every request. */
  readonly #basePath: string;
  #session: ClientHttp2Session | undefined;
  #open = 0;
  #closed = false;
  readonly #metrics: RestClientMetrics | undefined;
  readonly #host: string;

  constructor(config: ClientConfig, options: RestClientOptions = {}) {
    this.config = config;
    this.#options = { requestTimeoutMs: 60_000, healthCheckIntervalMs: 30_000, ...options };
    const url = new URL(config.server);
    if (url.protocol !== "https:") throw new Error(`the API server address must be https (got ${config.server})`);
    this.#origin = url.origin;
    this.#basePath = url.pathname.replace(/\/+$/, "");
    this.#host = url.host;
    this.#metrics = options.metrics === undefined ? undefined : restClientMetrics(options.metrics);
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
    const namespace = ref.namespaced ? options.namespace ?? object.metadata?.namespace : undefined;
    const name = options.subresource !== undefined ? object.metadata?.name : undefined;
    return this.#json<T>({
      method: "POST",
      path: this.#path(ref, required(ref, namespace), name, options.subresource),
      query: writeQuery(options),
      body: JSON.stringify(object),
      headers: { "content-type": JSON_TYPE, accept: JSON_TYPE },
      ...signal(options),
    });
  }

  /** PUT: the object's metadata.resourceVersion makes it conditional (409 when stale). */
  async update<T extends ApiObject = ApiObject>(ref: ResourceRef, object: T, options: UpdateOptions = {}): Promise<T> {
    const namespace = ref.namespaced ? options.namespace ?? object.metadata?.namespace : undefined;
    const name = options.name ?? object.metadata?.name;
    if (!name) throw new Error(`update of ${ref.resource} needs a name (metadata.name or options.name)`);
    return this.#json<T>({
      method: "PUT",
      path: this.#path(ref, required(ref, namespace), name, options.subresource),
      query: writeQuery(options),
      body: JSON.stringify(object),
      headers: { "content-type": JSON_TYPE, accept: JSON_TYPE },
      ...signal(options),
    });
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
    const get = <T>(path: string) => this.#json<T>({ method: "GET", path, headers: { accept: JSON_TYPE }, ...signal(options) });
    const core = await get<{ versions?: string[] }>("/api");
    const groups = await get<{ groups?: { name: string; versions: { version: string }[]; preferredVersion?: { version: string } }[] }>("/apis");
    const wanted: { group: string; version: string; preferred: boolean }[] = [];
    (core.versions ?? []).forEach((version, i) => wanted.push({ group: "", version, preferred: i === 0 }));
    for (const g of groups.groups ?? []) {
      const preferred = g.preferredVersion?.version ?? g.versions[0]?.version;
      for (const v of g.versions) wanted.push({ group: g.name, version: v.version, preferred: v.version === preferred });
    }
    const lists = await Promise.all(
      wanted.map(async (w) => ({ ...w, list: await get<{ resources?: RawApiResource[] }>(w.group === "" ? `/api/${w.version}` : `/apis/${w.group}/${w.version}`) })),
    );
    const out: DiscoveredResource[] = [];
    for (const { group, version, preferred, list } of lists) {
      const entries = list.resources ?? [];
      for (const r of entries) {
        if (r.name.includes("/")) continue;
        const subresources = entries
          .filter((s) => s.name.startsWith(`${r.name}/`))
          .map((s) => ({ name: s.name.slice(r.name.length + 1), verbs: s.verbs ?? [] }));
        out.push({
          group,
          version,
          resource: r.name,
          namespaced: r.namespaced,
          kind: r.kind,
          singularName: r.singularName ?? "",
          verbs: r.verbs ?? [],
          shortNames: r.shortNames ?? [],
          categories: r.categories ?? [],
          subresources,
          preferred,
        });
      }
    }
    return out;
  }

  /** A request as given; the answer whatever its status (for paths the verbs above do not cover). */
  async request(request: RawRequest): Promise<RawResponse> {
    const started = this.#metrics === undefined ? 0 : performance.now();
    const opened = await this.#start(request, { watch: false });
    const body = await readAll(opened.stream);
    if (this.#metrics !== undefined) {
      const labels = { verb: request.method, host: this.#host };
      this.#metrics.duration.observe(labels, (performance.now() - started) / 1000);
      this.#metrics.responseSize.observe(labels, body.length);
    }
    return { status: opened.status, headers: opened.headers, body };
  }

  /** Ends the session and whatever still runs on it (watches end quietly); later calls open a new one. */
  close(): void {
    this.#closed = true;
    this.#drop();
  }

  // ---- plumbing ----

  #path(ref: ResourceRef, namespace: string | undefined, name?: string, subresource?: string): string {
    const parts = [this.#basePath, ref.group === "" ? `api/${ref.version}` : `apis/${ref.group}/${ref.version}`];
    if (ref.namespaced && namespace !== undefined && namespace !== "") parts.push("namespaces", encodeURIComponent(namespace));
    parts.push(encodeURIComponent(ref.resource));
    if (name !== undefined) parts.push(encodeURIComponent(name));
    if (subresource !== undefined) parts.push(encodeURIComponent(subresource));
    return parts.join("/");
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

  /** Sends a request and waits for the response headers; retries once on a dead reused session for GETs. */
  async #start(request: RawRequest, mode: { watch: boolean }): Promise<{ status: number; headers: IncomingHttpHeaders; stream: ClientHttp2Stream }> {
    for (let attempt = 0; ; attempt++) {
      const fresh = this.#session === undefined;
      try {
        return await this.#send(request, mode);
      } catch (err) {
        const code = (err as { code?: string }).code;
        const retry = attempt === 0 && !fresh && request.method === "GET" && code !== undefined && RETRYABLE_CODES.has(code) && !request.signal?.aborted;
        if (!retry) throw err;
        this.#drop();
      }
    }
  }

  #send(request: RawRequest, mode: { watch: boolean }): Promise<{ status: number; headers: IncomingHttpHeaders; stream: ClientHttp2Stream }> {
    const session = this.#currentSession();
    const query = request.query?.toString();
    const headers: Record<string, string> = {
      ":method": request.method,
      ":path": query ? `${request.path}?${query}` : request.path,
      "user-agent": this.#options.userAgent ?? "orch-client",
      ...request.headers,
    };
    if (this.config.token) headers["authorization"] = `Bearer ${this.config.token}`;
    const signals: AbortSignal[] = [];
    if (request.signal) signals.push(request.signal);
    const timeout = mode.watch ? undefined : AbortSignal.timeout(this.#options.requestTimeoutMs);
    if (timeout) signals.push(timeout);
    const abort = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
    const body = request.body === undefined ? undefined : Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body);
    if (body !== undefined) headers["content-length"] = String(body.length);

    return new Promise((resolve, reject) => {
      let stream: ClientHttp2Stream;
      try {
        stream = session.request(headers, { endStream: body === undefined, ...(abort ? { signal: abort } : {}) });
      } catch (err) {
        reject(err);
        return;
      }
      this.#track(stream);
      // Errors after the response reach whoever reads the body; this keeps one that nobody reads (an abort
      // between the answer and the first read) from becoming an uncaught exception.
      stream.on("error", () => {});
      const describe = `${request.method} ${request.path}`;
      const fail = (err: Error) => {
        if (timeout?.aborted && !request.signal?.aborted) reject(new Error(`${describe}: no answer within ${this.#options.requestTimeoutMs} ms`, { cause: err }));
        else reject(err);
      };
      stream.once("error", fail);
      // A session destroyed by close() ends its streams without an error: the caller must still hear of it.
      stream.once("close", () => fail(new Error(`${describe}: the connection closed before an answer`)));
      stream.once("response", (h) => {
        stream.off("error", fail);
        // Later stream errors surface to whoever reads the body.
        const warnings = h["warning"];
        if (warnings !== undefined && this.#options.onWarning) for (const w of ([] as string[]).concat(warnings)) this.#options.onWarning(w);
        const status = Number(h[":status"]);
        this.#metrics?.requests.inc({ code: String(status), host: this.#host, method: request.method });
        resolve({ status, headers: h, stream });
      });
      if (body !== undefined) stream.end(body);
    });
  }

  #currentSession(): ClientHttp2Session {
    const current = this.#session;
    if (current !== undefined && !current.closed && !current.destroyed) return current;
    this.#closed = false;
    const session = connect(this.#origin, {
      ...(this.config.ca !== undefined ? { ca: this.config.ca } : {}),
      ...(this.config.cert !== undefined ? { cert: this.config.cert, key: this.config.key } : {}),
      ...(this.config.tlsServerName !== undefined ? { servername: this.config.tlsServerName } : {}),
      rejectUnauthorized: !this.config.insecureSkipTlsVerify,
    });
    // Session errors also reach the open streams; the next call opens a new session.
    session.on("error", () => {});
    const forget = () => {
      if (this.#session === session) this.#session = undefined;
    };
    session.on("goaway", forget);
    session.on("close", forget);
    const health = setInterval(() => this.#healthCheck(session), this.#options.healthCheckIntervalMs);
    health.unref();
    session.on("close", () => clearInterval(health));
    if (this.#open === 0) session.unref();
    this.#session = session;
    return session;
  }

  /** A connection can die silently (a NAT drop, a paused VM): PING it while streams depend on it. */
  #healthCheck(session: ClientHttp2Session): void {
    if (this.#open === 0 || session.closed || session.destroyed) return;
    const limit = setTimeout(() => session.destroy(new Error("the API server did not answer a PING; reconnecting")), this.#options.healthCheckIntervalMs / 2);
    limit.unref();
    try {
      session.ping((err) => {
        clearTimeout(limit);
        if (err && !session.destroyed) session.destroy(err);
      });
    } catch {
      clearTimeout(limit);
    }
  }

  /** Open streams keep the process alive; an idle session does not. */
  #track(stream: ClientHttp2Stream): void {
    if (this.#open++ === 0) this.#session?.ref();
    stream.once("close", () => {
      if (--this.#open === 0 && !this.#closed) this.#session?.unref();
    });
  }

  #drop(): void {
    const s = this.#session;
    this.#session = undefined;
    if (s !== undefined && !s.destroyed) s.destroy();
  }
}

interface RawApiResource {
  name: string;
  singularName?: string;
  namespaced: boolean;
  kind: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
}

/** Newline-delimited watch events from one HTTP/2 stream. */
class EventStream<T extends ApiObject> implements Watch<T> {
  readonly #stream: ClientHttp2Stream;
  readonly #signal: AbortSignal | undefined;
  #closed = false;

  constructor(stream: ClientHttp2Stream, signal: AbortSignal | undefined) {
    this.#stream = stream;
    this.#signal = signal;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stream.close(constants.NGHTTP2_CANCEL);
    this.#stream.destroy();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    let buffer = "";
    const decoder = new TextDecoder();
    const parse = (line: string): WatchEvent<T> => {
      let event: { type?: string; object?: unknown };
      try {
        event = JSON.parse(line) as typeof event;
      } catch (err) {
        throw new Error(`watch: an event that is not JSON: ${line.slice(0, 200)}`, { cause: err });
      }
      if (event.type === "ERROR") {
        throw isStatusObject(event.object) ? new ApiError(event.object) : new ApiError(buildStatus({ code: 500, reason: "InternalError", message: JSON.stringify(event.object) }));
      }
      if (event.type !== "ADDED" && event.type !== "MODIFIED" && event.type !== "DELETED" && event.type !== "BOOKMARK") {
        throw new Error(`watch: unknown event type ${JSON.stringify(event.type)}`);
      }
      return { type: event.type, object: event.object as T };
    };
    try {
      for await (const chunk of this.#stream) {
        buffer += decoder.decode(chunk as Buffer, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line !== "") yield parse(line);
        }
      }
      ensureComplete(this.#stream);
      const rest = (buffer + decoder.decode()).trim();
      if (rest !== "") yield parse(rest);
    } catch (err) {
      // Closing or aborting our own watch is not an error.
      if (this.#closed || this.#signal?.aborted) return;
      throw err;
    } finally {
      this.close();
    }
  }
}

const PROTOBUF_ACCEPT = `${PROTOBUF_MEDIA_TYPES[1]}, ${JSON_TYPE}`;

function isProtobufResponse(headers: IncomingHttpHeaders): boolean {
  const type = (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  return PROTOBUF_MEDIA_TYPES.includes(type);
}

/**
 * A Protobuf body: rejected without the 4-byte magic prefix, as the seed
 * requires of clients ("Protobuf envelope"), then decoded with the schemas.
 */
export function decodeProtobufResponse(body: Buffer, decoding: ProtobufDecoding | undefined, what: string): unknown {
  if (!hasProtobufMagic(body)) {
    throw new Error(`${what}: the server answered with a Protobuf content type but the body lacks the prefix 6b 38 73 00: ${preview(body)}`);
  }
  if (decoding === undefined) throw new Error(`${what}: the server answered in Protobuf, which this client did not ask for`);
  return decodeEnvelope(body, decoding.schemas, decoding.lookupType);
}

/** The server's Status, unchanged; a Status built from the code when the body is not one. */
export function errorFromResponse(code: number, body: Buffer, protobuf?: ProtobufDecoding): ApiError {
  if (protobuf !== undefined && hasProtobufMagic(body)) {
    try {
      const status = decodeEnvelope(body, protobuf.schemas, protobuf.lookupType);
      if (isStatusObject(status)) return new ApiError(status);
    } catch {
      // not a Status: described below
    }
  }
  const text = body.toString("utf8");
  try {
    const parsed: unknown = JSON.parse(text);
    if (isStatusObject(parsed)) return new ApiError(parsed);
  } catch {
    // not JSON: described below
  }
  const message = text.trim() !== "" ? text.trim() : `the server responded with status code ${code} but did not return more information`;
  return new ApiError(buildStatus({ code, reason: reasonForCode(code), message }));
}

/** upstream client-go's mapping from an HTTP status without a Status body to a reason. */
function reasonForCode(code: number): StatusReason {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return "";
  }
}

async function readAll(stream: ClientHttp2Stream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  ensureComplete(stream);
  return Buffer.concat(chunks);
}

/**
 * A stream cut by a lost connection ends its iteration as quietly as one the
 * server finished; only the missing end of stream tells them apart.
 */
function ensureComplete(stream: ClientHttp2Stream): void {
  if (stream.readableEnded && (stream.rstCode === undefined || stream.rstCode === constants.NGHTTP2_NO_ERROR)) return;
  const err = new Error(`the connection to the API server was lost mid-response (HTTP/2 stream reset, code ${stream.rstCode ?? "none"})`);
  (err as Error & { code: string }).code = "ECONNRESET";
  throw err;
}

function required(ref: ResourceRef, namespace: string | undefined): string | undefined {
  if (ref.namespaced && (namespace === undefined || namespace === "")) {
    throw new Error(`${ref.resource} is namespaced: this call needs a namespace`);
  }
  return ref.namespaced ? namespace : undefined;
}

function set(query: URLSearchParams, name: string, value: string | undefined): void {
  if (value !== undefined) query.set(name, value);
}

function selector(input: LabelSelectorInput | undefined): string | undefined {
  if (input === undefined) return undefined;
  if (typeof input === "string") return input === "" ? undefined : input;
  const s = Object.entries(input).map(([k, v]) => `${k}=${v}`).join(",");
  return s === "" ? undefined : s;
}

function selectors(query: URLSearchParams, options: { labelSelector?: LabelSelectorInput; fieldSelector?: LabelSelectorInput }): void {
  set(query, "labelSelector", selector(options.labelSelector));
  set(query, "fieldSelector", selector(options.fieldSelector));
}

function writeQuery(options: WriteOptions): URLSearchParams {
  const query = new URLSearchParams();
  if (options.dryRun) query.set("dryRun", "All");
  set(query, "fieldValidation", options.fieldValidation);
  set(query, "fieldManager", options.fieldManager);
  return query;
}

function deleteBody(options: DeleteOptions | DeleteCollectionOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { kind: "DeleteOptions", apiVersion: "v1" };
  if (options.propagationPolicy !== undefined) body["propagationPolicy"] = options.propagationPolicy;
  if (options.gracePeriodSeconds !== undefined) body["gracePeriodSeconds"] = options.gracePeriodSeconds;
  if ("preconditions" in options && options.preconditions !== undefined) body["preconditions"] = options.preconditions;
  if (options.dryRun) body["dryRun"] = ["All"];
  return body;
}

function signal(options: CallOptions): { signal?: AbortSignal } {
  return options.signal ? { signal: options.signal } : {};
}

function preview(body: Buffer): string {
  const text = body.toString("utf8");
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
