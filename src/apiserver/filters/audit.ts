// Audit (upstream's WithAudit and WithFailedAuthenticationAudit): with a
// policy (`--audit-policy-file`) and a log (`--audit-log-path`), each request
// gets an audit ID (the Audit-ID request header's, or a new UUID; answered in
// the Audit-ID response header) and, at the level the policy's first matching
// rule gives it, one event per stage: RequestReceived when it arrives,
// ResponseStarted when a long-running one (watch, log, exec, attach,
// port-forward, proxy) sends its headers, ResponseComplete when it has been
// answered, Panic for an internal error. Its place is right after
// authentication (the event's user is the authenticated one; an
// impersonated one is read back from the context once the chain has run);
// requests that fail authentication are recorded by the filter before it.
// Bodies cost nothing below the levels that record them: the request body is
// handed over by http/body.ts#readBody only when the level is Request or
// RequestResponse, the response body captured only at RequestResponse.

import { randomUUID } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { isApiError, statusFromError, type Status } from "../../machinery/index.js";
import { parseJsonBody, parseYamlBody } from "../../machinery/decode/index.js";
import { eventUser, microTime, withoutManagedFields, type AuditEvent, type ResponseStatus } from "../audit/event.js";
import type { AuditSink } from "../audit/log-writer.js";
import { evaluatePolicy, type AuditDecision, type Policy, type Stage } from "../audit/policy.js";
import { auditAnnotationsOf } from "../audit/annotations.js";
import { bodyObservers } from "../http/body.js";
import type { Encoding, Incoming, Outgoing } from "../http/respond.js";
import { decodeEnvelope } from "../../machinery/codec/protobuf/index.js";
import { PROTOBUF_MEDIA_TYPES } from "../../machinery/naming.js";
import type { Filter, RequestContext, UserInfo } from "./context.js";

export interface AuditOptions {
  readonly policy: Policy;
  readonly sink: AuditSink;
  /** The events' apiVersion: audit.k8s.io/v1, or the naming table's group (audit.orch.io/v1). */
  readonly apiVersion: string;
}

export interface AuditFilterOptions extends AuditOptions {
  /** The schemas that decode a Protobuf response for its event. */
  readonly encoding: Encoding;
}

const LONG_RUNNING_SUBRESOURCES = new Set(["exec", "attach", "log", "portforward", "proxy"]);
const NO_USER: UserInfo = Object.freeze({ name: "", groups: Object.freeze([]) });

/** The filter after authentication: one event per stage at the policy's level. */
export function auditFilter(options: AuditFilterOptions): Filter {
  return async (ctx, next) => {
    const user = ctx.user ?? NO_USER;
    const decision = evaluatePolicy(options.policy, user, ctx.attributes);
    const id = auditId(ctx);
    if (decision.level === "None") return next();
    const record = new Recorder(options, decision, ctx, id, user);
    record.emit("RequestReceived");
    const x = ctx.exchange;
    const a = ctx.attributes;
    if (decision.level === "Request" || decision.level === "RequestResponse") {
      bodyObservers.set(ctx.req, { bytes: (body) => record.requestBody(body), object: (value) => record.requestObjectDecoded(value) });
    }
    const longRunning = a.verb === "watch" || LONG_RUNNING_SUBRESOURCES.has(a.subresource);
    let responseBody: (() => Written) | undefined;
    if (x.kind === "response") {
      if (longRunning) onHeaders(x.res, () => record.started(x.res.statusCode));
      else if (decision.level === "RequestResponse") responseBody = captureBody(x.res);
    }
    try {
      await next();
    } catch (err) {
      record.failed(err, ctx.user);
      throw err;
    }
    record.impersonated(ctx.user);
    if (x.kind === "upgrade") {
      // Carried to the node agent (101): started now, complete when the connection closes.
      if (x.statusCode === 101) record.started(101);
      if (x.socket.destroyed) record.completed(x.statusCode);
      else x.socket.once("close", () => record.completed(x.statusCode));
      return;
    }
    if (responseBody !== undefined) record.responseBody(responseBody(), options.encoding);
    record.completed(x.res.statusCode);
  };
}

/**
 * The filter before authentication (upstream's WithFailedAuthenticationAudit):
 * a request answered 401 there is recorded once, at stage ResponseStarted,
 * with no user, if the policy records such requests.
 */
export function failedAuthenticationAuditFilter(options: AuditOptions): Filter {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (ctx.user === undefined && isApiError(err) && err.status.code === 401) {
        const decision = evaluatePolicy(options.policy, NO_USER, ctx.attributes);
        if (decision.level !== "None") {
          const record = new Recorder(options, decision, ctx, auditId(ctx), NO_USER);
          record.status = { metadata: {}, code: 401, message: "Authentication failed, attempted: bearer" };
          record.emit("ResponseStarted");
        }
      }
      throw err;
    }
  };
}

/** The Audit-ID request header's value, or a new UUID; answered in the Audit-ID response header (upstream's WithAuditInit). */
function auditId(ctx: RequestContext): string {
  const given = ctx.req.headers["audit-id"];
  const id = typeof given === "string" && given.trim() !== "" ? given.trim() : randomUUID();
  const x = ctx.exchange;
  if (x.kind === "response" && !x.res.headersSent) x.res.setHeader("Audit-ID", id);
  return id;
}

/** One request's event, written once per stage it reaches (minus the policy's omitted stages). */
class Recorder {
  readonly #sink: AuditSink;
  readonly #decision: AuditDecision;
  readonly #event: AuditEvent;
  readonly #authenticated: UserInfo;
  readonly #req: object;
  #startedDone = false;
  #completeDone = false;
  status: ResponseStatus | undefined;
  requestObject: unknown;
  responseObject: unknown;

  constructor(options: AuditOptions, decision: AuditDecision, ctx: RequestContext, id: string, user: UserInfo) {
    this.#sink = options.sink;
    this.#decision = decision;
    this.#authenticated = user;
    this.#req = ctx.req;
    const a = ctx.attributes;
    const userAgent = ctx.req.headers["user-agent"];
    this.#event = {
      kind: "Event",
      apiVersion: options.apiVersion,
      level: decision.level,
      auditID: id,
      stage: "RequestReceived",
      requestURI: ctx.req.url ?? "/",
      verb: a.verb,
      user: eventUser(user),
      sourceIPs: sourceIPs(ctx.req),
      ...(typeof userAgent === "string" && userAgent !== "" ? { userAgent } : {}),
      ...(a.resourceRequest ? {
        objectRef: {
          ...(a.resource !== "" ? { resource: a.resource } : {}),
          ...(a.namespace !== "" ? { namespace: a.namespace } : {}),
          ...(a.name !== "" ? { name: a.name } : {}),
          ...(a.apiGroup !== "" ? { apiGroup: a.apiGroup } : {}),
          ...(a.apiVersion !== "" ? { apiVersion: a.apiVersion } : {}),
          ...(a.subresource !== "" ? { subresource: a.subresource } : {}),
        },
      } : {}),
      requestReceivedTimestamp: microTime(),
      stageTimestamp: "",
    };
  }

  emit(stage: Stage): void {
    if (this.#decision.omitStages.includes(stage)) return;
    const e = this.#event;
    const out: AuditEvent = {
      ...e,
      stage,
      ...(this.status !== undefined ? { responseStatus: this.status } : {}),
      ...(this.requestObject !== undefined ? { requestObject: this.requestObject } : {}),
      ...(this.responseObject !== undefined && stage !== "ResponseStarted" ? { responseObject: this.responseObject } : {}),
    };
    // Field order as upstream writes them: the timestamps after the bodies.
    const { requestReceivedTimestamp, stageTimestamp: _s, annotations: own, ...rest } = out;
    const added = auditAnnotationsOf(this.#req);
    const annotations = added !== undefined ? { ...own, ...added } : own;
    this.#sink.write(JSON.stringify({ ...rest, requestReceivedTimestamp, stageTimestamp: microTime(), ...(annotations ? { annotations } : {}) }) + "\n");
  }

  /** The raw body: JSON or YAML (patches); an object body's decoded form (any encoding) replaces it, see requestObjectDecoded. */
  requestBody(body: Buffer): void {
    this.#setRequestObject(decodeBody(body));
  }

  /** An object body as the handler decoded it (Protobuf and CBOR included), copied before the handler changes it. */
  requestObjectDecoded(value: unknown): void {
    this.#setRequestObject(structuredClone(value));
  }

  #setRequestObject(value: unknown): void {
    if (value === undefined) return;
    this.requestObject = this.#decision.omitManagedFields ? withoutManagedFields(value) : value;
    // A create names its object in the body (upstream's LogRequestObject fills the reference from it).
    const meta = (value as { metadata?: { name?: unknown; namespace?: unknown } }).metadata;
    const ref = this.#event.objectRef;
    if (ref !== undefined && meta !== null && typeof meta === "object") {
      if (ref.name === undefined && typeof meta.name === "string" && meta.name !== "") ref.name = meta.name;
      if (ref.namespace === undefined && typeof meta.namespace === "string" && meta.namespace !== "") ref.namespace = meta.namespace;
    }
  }

  /** The response body as JSON: JSON as sent, Protobuf decoded (the object, as upstream logs it whatever the encoding). */
  responseBody({ body, contentType: type, contentEncoding }: Written, encoding: Encoding): void {
    if (type === undefined) return;
    const json = type.startsWith("application/json");
    if (!json && !PROTOBUF_MEDIA_TYPES.some((t) => type.startsWith(t))) return;
    let bytes = body;
    try {
      if (contentEncoding === "gzip") bytes = gunzipSync(body);
      const value = json ? (JSON.parse(bytes.toString("utf8")) as unknown) : decodeEnvelope(bytes, encoding.schemas, encoding.lookupType);
      this.responseObject = this.#decision.omitManagedFields ? withoutManagedFields(value) : value;
    } catch {
      // Not JSON after all: the event goes without it.
    }
  }

  impersonated(current: UserInfo | undefined): void {
    if (current !== undefined && current !== this.#authenticated) this.#event.impersonatedUser = eventUser(current);
  }

  started(code: number): void {
    if (this.#startedDone) return;
    this.#startedDone = true;
    this.status = { metadata: {}, code };
    this.emit("ResponseStarted");
  }

  completed(code: number): void {
    if (this.#completeDone) return;
    this.#completeDone = true;
    this.status = { ...this.status, metadata: {}, code };
    this.emit("ResponseComplete");
  }

  /** A thrown error: an API error completes the request with its Status, anything else is upstream's Panic stage. */
  failed(err: unknown, current: UserInfo | undefined): void {
    this.impersonated(current);
    // Upstream's wording of a panic; the client gets the errors filter's 500.
    const status: Status = isApiError(err) ? statusFromError(err) : { ...statusFromError(err), reason: "InternalError", message: `APIServer panic'd: ${(err as Error)?.message ?? String(err)}` };
    this.status = {
      metadata: {},
      code: status.code,
      status: status.status,
      ...(status.reason ? { reason: status.reason } : {}),
      ...(status.message ? { message: status.message } : {}),
    };
    if (this.#decision.level === "RequestResponse") this.responseObject = status;
    this.#completeDone = true;
    this.emit(isApiError(err) ? "ResponseComplete" : "Panic");
  }
}

/** The request body as JSON, or YAML (apply patches); undefined for binary encodings (Protobuf, CBOR). */
function decodeBody(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  let value: unknown;
  try {
    value = parseJsonBody(body).value;
  } catch {
    try {
      value = parseYamlBody(body).value;
    } catch {
      return undefined;
    }
  }
  return value !== null && typeof value === "object" ? value : undefined;
}

/** Calls `f` once, when the response's headers go out (writeHead, or the first write). */
function onHeaders(res: Outgoing, f: () => void): void {
  const out = res as unknown as Record<"writeHead" | "write" | "end" | "flushHeaders", (...a: unknown[]) => unknown>;
  let done = false;
  for (const method of ["writeHead", "write", "end", "flushHeaders"] as const) {
    const original = out[method];
    if (typeof original !== "function") continue;
    out[method] = function (this: unknown, ...args: unknown[]) {
      const result = original.apply(this, args);
      if (!done) {
        done = true;
        f();
      }
      return result;
    };
  }
}

/** What a response wrote, for its event: the body and the headers that say how to read it. */
interface Written {
  readonly body: Buffer;
  readonly contentType: string | undefined;
  readonly contentEncoding: string | undefined;
}

/**
 * Keeps a copy of what the response writes (RequestResponse only); call the
 * result once it has ended. Headers given to writeHead are read there: HTTP/2's
 * compatibility response does not keep them for getHeader.
 */
function captureBody(res: Outgoing): () => Written {
  const chunks: Buffer[] = [];
  const given: Record<string, unknown> = {};
  const keep = (chunk: unknown, encoding: unknown) => {
    if (typeof chunk === "string") chunks.push(Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8"));
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
  };
  const out = res as unknown as Record<"write" | "end" | "writeHead", (...a: unknown[]) => unknown>;
  const { write, end, writeHead } = out;
  out.writeHead = function (this: unknown, ...args: unknown[]) {
    const headers = args.find((a, i) => i > 0 && a !== null && typeof a === "object" && !Array.isArray(a)) as Record<string, unknown> | undefined;
    if (headers !== undefined) for (const [k, v] of Object.entries(headers)) given[k.toLowerCase()] = v;
    return writeHead!.apply(this, args);
  };
  // HTTP/2's compatibility end(chunk) writes the chunk through write(): kept once, by end.
  let ending = false;
  out.write = function (this: unknown, ...args: unknown[]) {
    if (!ending) keep(args[0], args[1]);
    return write!.apply(this, args);
  };
  out.end = function (this: unknown, ...args: unknown[]) {
    if (typeof args[0] !== "function") keep(args[0], args[1]);
    ending = true;
    try {
      return end!.apply(this, args);
    } finally {
      ending = false;
    }
  };
  const header = (name: string) => {
    const v = given[name] ?? res.getHeader(name);
    return typeof v === "string" ? v : undefined;
  };
  return () => ({ body: Buffer.concat(chunks), contentType: header("content-type"), contentEncoding: header("content-encoding") });
}

/** upstream's SourceIPs: X-Forwarded-For's addresses, X-Real-Ip, then the peer's address, each once. */
function sourceIPs(req: Incoming): string[] {
  const ips: string[] = [];
  const add = (ip: string | undefined) => {
    const v = ip?.trim().replace(/^::ffff:/, "");
    if (v && !ips.includes(v)) ips.push(v);
  };
  const xff = req.headers["x-forwarded-for"];
  if (typeof xff === "string") for (const ip of xff.split(",")) add(ip);
  const real = req.headers["x-real-ip"];
  if (typeof real === "string") add(real);
  add(req.socket?.remoteAddress);
  return ips;
}
