// The gRPC side of the etcd backend: one channel per endpoint, fail-over
// between endpoints, retries with backoff, deadlines, and a health state that
// is logged once per change. Callers get etcd's answer or a ServiceError that
// etcd itself produced; connection trouble becomes StorageUnavailableError.
// Three transports carry the calls: by default unary calls in HTTP/2 frames
// of our own and streams over node:http2 (h2-frames.ts), with the
// hand-written codec (wire.ts); every call over node:http2 (h2-channel.ts,
// ORCH_ETCD_CLIENT=h2); and @grpc/grpc-js with protobufjs
// (ORCH_ETCD_CLIENT=grpc-js). The older two stay selectable for a release.

import * as grpc from "@grpc/grpc-js";
import { isIP } from "node:net";
import { checkServerIdentity, type PeerCertificate } from "node:tls";
import { StorageUnavailableError } from "../errors.js";
import { etcdMethods, type Method, type StatusResponse } from "./rpc.js";
import { H2Channel, type CallStream } from "./h2-channel.js";
import { FramedChannel } from "./h2-frames.js";
import { sleep } from "../../machinery/until.js";

/** One line per event; pino's logger fits, so does the console-backed default. */
export interface EtcdLogger {
  info(message: string): void;
  warn(message: string): void;
}

export const consoleLogger: EtcdLogger = {
  info: (message) => console.error(message),
  warn: (message) => console.error(message),
};

export interface ConnectionOptions {
  /** http://host:port URLs of etcd members. */
  endpoints: string[];
  /** How long to wait for a connection to one endpoint before trying the next. */
  dialTimeoutMs: number;
  /** How long one operation may take, retries included, before StorageUnavailableError. */
  requestTimeoutMs: number;
  logger: EtcdLogger;
  /** For https:// endpoints: the CA that signed etcd's serving certificates, and our client certificate (PEM). */
  tls?: EtcdTls;
  /** Which gRPC transport (default: $ORCH_ETCD_CLIENT, else "h2"). */
  client?: EtcdClientKind;
}

/**
 * "frames": unary calls in HTTP/2 frames of our own, streams over node:http2
 * (h2-frames.ts; the default); "h2": every call over node:http2
 * (h2-channel.ts), the client before it; "grpc-js": @grpc/grpc-js, the one
 * before that. The older two stay selectable for a release.
 */
export type EtcdClientKind = "frames" | "h2" | "grpc-js";

/** The transport chosen by ORCH_ETCD_CLIENT ("frames", "h2" or "grpc-js"; unset: "frames"). */
export function defaultClientKind(): EtcdClientKind {
  const value = process.env.ORCH_ETCD_CLIENT;
  if (value === undefined || value === "" || value === "frames") return "frames";
  if (value === "h2" || value === "grpc-js") return value;
  throw new Error(`ORCH_ETCD_CLIENT=${value}: expected "frames", "h2" or "grpc-js"`);
}

/** What EtcdConnection needs of one endpoint's transport. */
interface Transport {
  readonly url: string;
  connect(deadline: number): Promise<void>;
  unary<Req, Res>(method: Method<Req, Res>, request: Req, deadline: number): Promise<Res>;
  openStream<Req, Res>(method: Method<Req, Res>): CallStream<Req, Res>;
  openServerStream<Req, Res>(method: Method<Req, Res>, request: Req): CallStream<Req, Res> & AsyncIterable<Res>;
  close(): void;
}

/** TLS material for https:// etcd endpoints (upstream's --etcd-cafile, --etcd-certfile, --etcd-keyfile). */
export interface EtcdTls {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface CallOptions {
  /**
   * A mutation is retried only when etcd certainly did not receive it (no
   * connection, no leader): after an ambiguous failure a retried
   * compare-and-swap could fail against its own first attempt and report a
   * conflict that never happened.
   */
  mutation: boolean;
}

type Verdict = "not-sent" | "ambiguous" | "answer";

// etcd asks for its "require leader" behaviour with this metadata: a member
// that lost its leader then fails calls at once ("no leader") and cancels our
// watch streams instead of leaving them silent, so we move to another member.
const REQUIRE_LEADER = "hasleader";

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // grpc-js backs off up to 120 s between reconnects by default; a restarted
  // etcd member must be picked up within half a second. A refused connect costs next to nothing.
  "grpc.initial_reconnect_backoff_ms": 100,
  "grpc.max_reconnect_backoff_ms": 500,
  // Lists of large objects exceed the 4 MiB default; etcd bounds its own answers.
  "grpc.max_receive_message_length": -1,
  "grpc.max_send_message_length": -1,
  // Detect dead peers on half-open connections; etcd allows pings every 5 s or slower.
  "grpc.keepalive_time_ms": 10_000,
  "grpc.keepalive_timeout_ms": 5_000,
  "grpc.keepalive_permit_without_calls": 1,
};

class GrpcJsEndpoint implements Transport {
  readonly url: string;
  readonly address: string;
  readonly #credentials: grpc.ChannelCredentials;
  readonly #channelOptions: grpc.ChannelOptions;
  readonly #metadata: grpc.Metadata;
  #client: grpc.Client | undefined;

  constructor(url: string, tls: EtcdTls | undefined) {
    this.#metadata = new grpc.Metadata();
    this.#metadata.set(REQUIRE_LEADER, "true");
    this.url = url;
    const { address, secure } = parseEndpoint(url);
    this.address = address;
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    // An IP address may not be sent as the TLS server name (RFC 6066; Node warns): a fixed name goes
    // as SNI instead, and the certificate is still checked against the address.
    const ip = secure && isIP(host) !== 0;
    this.#credentials = !secure ? grpc.credentials.createInsecure() : channelCredentials(tls ?? {}, ip ? host : undefined);
    this.#channelOptions = ip ? { ...CHANNEL_OPTIONS, "grpc.ssl_target_name_override": "etcd" } : CHANNEL_OPTIONS;
  }

  get client(): grpc.Client {
    this.#client ??= new grpc.Client(this.address, this.#credentials, this.#channelOptions);
    return this.#client;
  }

  /**
   * Wait while the channel is idle or connecting. Resolves once it is ready,
   * or has failed (the call made next then fails at once, with grpc's reason
   * "No connection established. Last error: ..."). Rejects when connecting
   * outlasts the deadline, with an error classify() deems not sent.
   */
  connect(deadline: number): Promise<void> {
    const channel = this.client.getChannel();
    const { READY, TRANSIENT_FAILURE, SHUTDOWN } = grpc.connectivityState;
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        const state = channel.getConnectivityState(true);
        if (state === READY || state === TRANSIENT_FAILURE || state === SHUTDOWN) {
          resolve();
          return;
        }
        if (Date.now() >= deadline) {
          reject(notConnected(`No connection established within the dial timeout to ${this.url}`));
          return;
        }
        channel.watchConnectivityState(state, deadline, () => check());
      };
      check();
    });
  }

  unary<Req, Res>(method: Method<Req, Res>, request: Req, deadline: number): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      this.client.makeUnaryRequest(
        method.path,
        method.serialize,
        method.deserialize,
        request,
        this.#metadata.clone(),
        { deadline },
        (err, value) => {
          if (err !== null || value === undefined) reject(err ?? new Error("etcd: empty answer"));
          else resolve(value);
        },
      );
    });
  }

  openStream<Req, Res>(method: Method<Req, Res>): CallStream<Req, Res> {
    return this.client.makeBidiStreamRequest(method.path, method.serialize, method.deserialize, this.#metadata.clone());
  }

  openServerStream<Req, Res>(method: Method<Req, Res>, request: Req): CallStream<Req, Res> & AsyncIterable<Res> {
    return this.client.makeServerStreamRequest(method.path, method.serialize, method.deserialize, request, this.#metadata.clone()) as unknown as CallStream<Req, Res> &
      AsyncIterable<Res>;
  }

  close(): void {
    this.#client?.close();
    this.#client = undefined;
  }
}

export class EtcdConnection {
  readonly #endpoints: Transport[];
  readonly #options: ConnectionOptions;
  #current = 0;
  #healthy = false;
  /** Set once the first answer or the first failure decided the state, so the first line logged says which. */
  #stateKnown = false;
  #closed = false;
  #probeTimer: NodeJS.Timeout | undefined;
  #probeDelayMs = 250;
  #serverVersion = "";
  #newestRevision = 0;
  #checking = false;

  constructor(options: ConnectionOptions) {
    if (options.endpoints.length === 0) throw new Error("etcd: at least one endpoint is required");
    this.#options = options;
    const kind = options.client ?? defaultClientKind();
    this.#endpoints = options.endpoints.map((url) => {
      if (kind === "grpc-js") return new GrpcJsEndpoint(url, options.tls);
      parseEndpoint(url);
      if (kind === "h2") return new H2Channel(url, options.tls, { [REQUIRE_LEADER]: "true" });
      return new FramedChannel(url, options.tls, { [REQUIRE_LEADER]: "true" });
    });
  }

  /** Whether the last contact with etcd succeeded. */
  healthy(): boolean {
    return this.#healthy;
  }

  /** The newest revision any answer carried: every write this client makes from now on is after it. */
  get newestRevision(): number {
    return this.#newestRevision;
  }

  /** etcd's version as reported by the last Status answer ("" before one). */
  get serverVersion(): string {
    return this.#serverVersion;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * One unary call with fail-over and retries until requestTimeoutMs (or the
   * given deadline). Resolves with etcd's answer; rejects with the
   * grpc.ServiceError etcd answered, or StorageUnavailableError.
   */
  async call<Req, Res>(method: Method<Req, Res>, request: Req, options: CallOptions, deadline?: number): Promise<Res> {
    const start = Date.now();
    const end = deadline ?? start + this.#options.requestTimeoutMs;
    let backoffMs = 50;
    let attempts = 0;
    let lastError: unknown;
    for (;;) {
      if (this.#closed) throw new StorageUnavailableError("etcd storage is closed");
      const index = this.#current;
      const endpoint = this.#endpoints[index]!;
      try {
        // Connecting may take dialTimeoutMs, so a dead member costs little.
        await endpoint.connect(Math.min(end, Date.now() + this.#options.dialTimeoutMs));
        // A write gets the whole remaining time: cutting it short would only turn
        // a slow success into an "outcome unknown". A read gets half, so that a
        // member stuck behind a dead leader leaves time to ask another one.
        const now = Date.now();
        const attemptEnd = options.mutation ? end : Math.min(end, now + Math.max(this.#options.dialTimeoutMs, (end - now) / 2));
        const result = await endpoint.unary(method, request, attemptEnd);
        if (method.path === etcdMethods().status.path) this.#serverVersion = (result as StatusResponse).version;
        const seen = (result as { header?: { revision?: number } | null }).header?.revision ?? 0;
        if (seen > this.#newestRevision) this.#newestRevision = seen;
        this.#markHealthy(endpoint);
        return result;
      } catch (err) {
        const verdict = classify(err);
        if (verdict === "answer") {
          this.#markHealthy(endpoint);
          throw err;
        }
        lastError = err;
        if (this.#closed) throw new StorageUnavailableError("etcd storage is closed", err);
        if (verdict === "ambiguous" && options.mutation) {
          this.#noteFailure(index, err);
          this.#suspect();
          throw new StorageUnavailableError(
            `etcd: the write may or may not have been applied: ${describe(err)}`,
            err,
          );
        }
        this.#noteFailure(index, err);
      }
      attempts++;
      const remaining = end - Date.now();
      if (remaining <= 0) break;
      // Go round the endpoints once without waiting; back off after each full round.
      if (attempts % this.#endpoints.length === 0) {
        await sleep(Math.min(backoffMs * (0.5 + Math.random()), remaining));
        backoffMs = Math.min(backoffMs * 2, 1000);
      }
    }
    this.#markUnhealthy(lastError);
    throw new StorageUnavailableError(
      `etcd unavailable at ${this.#options.endpoints.join(",")} (gave up after ${Date.now() - start} ms): ${describe(lastError)}`,
      lastError,
    );
  }

  /**
   * Open a bidirectional stream on the current endpoint. The caller owns the
   * stream; it reports failures with streamFailed() so the next one goes elsewhere.
   */
  openStream<Req, Res>(method: Method<Req, Res>): { stream: CallStream<Req, Res>; endpoint: number } {
    if (this.#closed) throw new StorageUnavailableError("etcd storage is closed");
    const index = this.#current;
    return { stream: this.#endpoints[index]!.openStream(method), endpoint: index };
  }

  /** Open a server-streaming call (Maintenance.Snapshot) on the current endpoint; the caller owns the stream. */
  openServerStream<Req, Res>(method: Method<Req, Res>, request: Req): CallStream<Req, Res> & AsyncIterable<Res> {
    if (this.#closed) throw new StorageUnavailableError("etcd storage is closed");
    return this.#endpoints[this.#current]!.openServerStream(method, request);
  }

  /** A stream opened on `endpoint` delivered something: etcd is reachable there. */
  streamAlive(endpoint: number): void {
    this.#markHealthy(this.#endpoints[endpoint]!);
  }

  /** A stream opened on `endpoint` broke for a reason other than our own cancel. */
  streamFailed(endpoint: number, err: unknown): void {
    this.#noteFailure(endpoint, err);
    this.#suspect();
  }

  /** Ask the current endpoint for its status (the prober's and stats()' call). */
  async status(deadline?: number): Promise<StatusResponse> {
    return this.call(etcdMethods().status, {}, { mutation: false }, deadline);
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#probeTimer);
    for (const endpoint of this.#endpoints) endpoint.close();
  }

  /** Move off a failed endpoint (unless someone already did). */
  #noteFailure(index: number, err: unknown): void {
    if (this.#endpoints.length > 1 && this.#current === index) {
      this.#current = (index + 1) % this.#endpoints.length;
      // Failing over while otherwise healthy is worth a line; during an outage it would repeat every retry.
      if (this.#healthy) {
        this.#options.logger.warn(
          `etcd: ${this.#endpoints[index]!.url} failed (${describe(err)}); switching to ${this.#endpoints[this.#current]!.url}`,
        );
      }
    }
  }

  #markHealthy(endpoint: Transport): void {
    if (this.#healthy) return;
    const recovered = this.#stateKnown;
    this.#healthy = true;
    this.#stateKnown = true;
    clearTimeout(this.#probeTimer);
    this.#probeTimer = undefined;
    this.#probeDelayMs = 250;
    const version = this.#serverVersion === "" ? "" : ` (etcd ${this.#serverVersion})`;
    this.#options.logger.info(`etcd: ${recovered ? "reachable again" : "connected"} at ${endpoint.url}${version}`);
  }

  #markUnhealthy(err: unknown): void {
    if (this.#closed) return;
    if (this.#healthy || !this.#stateKnown) {
      this.#healthy = false;
      this.#stateKnown = true;
      this.#options.logger.warn(
        `etcd: unavailable at ${this.#options.endpoints.join(",")}: ${describe(err)}; retrying in the background`,
      );
    }
    this.#scheduleProbe();
  }

  /**
   * A call failed in a way that says nothing certain about etcd (a dropped
   * connection, a leader change): check now rather than flip the health state
   * on one failure; the check fails over and marks us unhealthy only if no
   * member answers within dialTimeoutMs.
   */
  #suspect(): void {
    if (!this.#healthy || this.#checking || this.#closed) return;
    this.#checking = true;
    this.status(Date.now() + this.#options.dialTimeoutMs)
      .catch(() => {})
      .finally(() => (this.#checking = false));
  }

  /** While unhealthy, keep knocking (with backoff) so healthy() recovers without traffic. */
  #scheduleProbe(): void {
    if (this.#probeTimer !== undefined || this.#closed) return;
    this.#probeTimer = setTimeout(() => {
      this.#probeTimer = undefined;
      if (this.#healthy || this.#closed) return;
      this.#probeDelayMs = Math.min(this.#probeDelayMs * 2, 5000);
      // status() marks us healthy on success, or unhealthy (which reschedules) on failure.
      this.status(Date.now() + this.#options.dialTimeoutMs).catch(() => {});
    }, this.#probeDelayMs);
    this.#probeTimer.unref();
  }
}

function notConnected(message: string): grpc.ServiceError {
  return Object.assign(new Error(message), { code: grpc.status.UNAVAILABLE, details: message, metadata: new grpc.Metadata() });
}

/** Sort a failed call: etcd's own answer, safe to retry, or outcome unknown. */
function classify(err: unknown): Verdict {
  if (!isServiceError(err)) return "ambiguous";
  const details = err.details ?? "";
  switch (err.code) {
    case grpc.status.UNAVAILABLE:
      // grpc-js never sent the call: the channel had no connection to pick.
      if (details.startsWith("No connection established")) return "not-sent";
      // etcd refused before proposing anything.
      if (details.includes("etcdserver: no leader") || details.includes("etcdserver: not capable")) return "not-sent";
      return "ambiguous";
    case grpc.status.DEADLINE_EXCEEDED:
      return details.includes("Waiting for LB pick") ? "not-sent" : "ambiguous";
    case grpc.status.RESOURCE_EXHAUSTED:
      return details.includes("too many requests") ? "not-sent" : "answer";
    case grpc.status.CANCELLED:
    case grpc.status.INTERNAL:
    case grpc.status.UNKNOWN:
      // Stream resets and "server stopped"-like failures of a member going away.
      return "ambiguous";
    default:
      return "answer";
  }
}

export function isServiceError(err: unknown): err is grpc.ServiceError {
  return err instanceof Error && typeof (err as Partial<grpc.ServiceError>).code === "number" && "details" in err;
}

/** The server's message, without grpc-js's "14 UNAVAILABLE:" prefix. */
export function describe(err: unknown): string {
  if (isServiceError(err)) return err.details || err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** host:port of an http:// or https:// endpoint, and whether it speaks TLS. */
export function parseEndpoint(url: string): { address: string; secure: boolean } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`etcd: endpoint ${JSON.stringify(url)} is not a URL like http://127.0.0.1:2379`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new Error(`etcd: endpoint ${url}: the scheme must be http:// or https://`);
  }
  return { address: `${parsed.hostname}:${parsed.port || "2379"}`, secure: parsed.protocol === "https:" };
}

/** TLS credentials for a channel: the given CA (else the system's roots), and a client certificate when both halves are given. */
export function channelCredentials(tls: EtcdTls, checkAddress?: string): grpc.ChannelCredentials {
  if ((tls.cert === undefined) !== (tls.key === undefined)) throw new Error("etcd: a client certificate needs both its certificate and its key");
  const buf = (pem: string | undefined) => (pem === undefined ? null : Buffer.from(pem));
  const verify = checkAddress === undefined ? {} : { checkServerIdentity: (_name: string, cert: PeerCertificate) => checkServerIdentity(checkAddress, cert) };
  return grpc.credentials.createSsl(buf(tls.ca), buf(tls.key), buf(tls.cert), verify);
}

