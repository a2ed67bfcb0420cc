// The HTTP/2 connection under the REST client: one session to the API server,
// reopened when it closes, PINGed while streams depend on it, and referenced
// only while streams are open. A GET that fails on a dead reused session is
// retried once on a new one; every other failure reaches the caller.

import { connect, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from "node:http2";
import type { ClientConfig } from "../kubeconfig.js";
import { tokenSource } from "../in-cluster.js";
import type { RestClientMetrics } from "../metrics.js";
import type { RawRequest } from "./types.js";
import { widenSessionWindow, windowOptions } from "../../machinery/h2-windows.js";

export interface TransportOptions {
  userAgent?: string;
  /** Limit on every request but watches. */
  requestTimeoutMs: number;
  /** While streams are open, PING the server this often and drop a session that does not answer. */
  healthCheckIntervalMs: number;
  /** Server `Warning` headers (unknown fields and the like). */
  onWarning?: ((warning: string) => void) | undefined;
  /** rest_client_requests_total, counted per answer. */
  metrics?: RestClientMetrics | undefined;
}

/** A response whose headers have arrived; its body is still to be read from `stream`. */
export interface OpenedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  stream: ClientHttp2Stream;
}

/** Session-level failures after which an idempotent request may be retried once on a new session. */
const RETRYABLE_CODES = new Set(["ERR_HTTP2_GOAWAY_SESSION", "ERR_HTTP2_INVALID_SESSION", "ERR_HTTP2_STREAM_CANCEL", "ECONNRESET", "ERR_HTTP2_SESSION_ERROR"]);

export class Http2Transport {
  readonly #config: ClientConfig;
  readonly #options: TransportOptions;
  readonly #origin: string;
  /** host:port, the `host` label of the metrics. */
  readonly host: string;
  #session: ClientHttp2Session | undefined;
  readonly #token: () => string | undefined;
  #open = 0;
  #closed = false;

  constructor(config: ClientConfig, server: URL, options: TransportOptions) {
    this.#config = config;
    this.#token = tokenSource(config);
    this.#options = options;
    this.#origin = server.origin;
    this.host = server.host;
  }

  /**
   * Sends a request and waits for the response headers; retries once on a dead reused session for GETs.
   * A watch has no time limit: its caller's signal ends it.
   */
  async start(request: RawRequest, mode: { watch: boolean }): Promise<OpenedResponse> {
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

  /** Drops the session (its streams end); the next request opens a new one with the config as it is then (rotated client certificates). */
  reconnect(): void {
    this.#drop();
  }

  /** Ends the session and whatever still runs on it; later requests open a new one. */
  close(): void {
    this.#closed = true;
    this.#drop();
  }

  #send(request: RawRequest, mode: { watch: boolean }): Promise<OpenedResponse> {
    const session = this.#currentSession();
    const query = request.query?.toString();
    const headers: Record<string, string> = {
      ":method": request.method,
      ":path": query ? `${request.path}?${query}` : request.path,
      "user-agent": this.#options.userAgent ?? "orch-client",
      ...request.headers,
    };
    const token = this.#token();
    if (token) headers["authorization"] = `Bearer ${token}`;
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
        this.#options.metrics?.requests.inc({ code: String(status), host: this.host, method: request.method });
        resolve({ status, headers: h, stream });
      });
      if (body !== undefined) stream.end(body);
    });
  }

  #currentSession(): ClientHttp2Session {
    const current = this.#session;
    if (current !== undefined && !current.closed && !current.destroyed) return current;
    this.#closed = false;
    // Wide receive windows, as client-go's: a watch must not wait a round trip for every 64 KiB.
    const session = connect(this.#origin, {
      ...windowOptions,
      ...(this.#config.ca !== undefined ? { ca: this.#config.ca } : {}),
      ...(this.#config.cert !== undefined ? { cert: this.#config.cert, key: this.#config.key } : {}),
      ...(this.#config.tlsServerName !== undefined ? { servername: this.#config.tlsServerName } : {}),
      rejectUnauthorized: !this.#config.insecureSkipTlsVerify,
    });
    // Session errors also reach the open streams; the next call opens a new session.
    session.on("error", () => {});
    session.once("connect", () => widenSessionWindow(session));
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
