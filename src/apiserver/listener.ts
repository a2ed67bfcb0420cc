// The API server's listener: HTTPS only, HTTP/2 (ALPN) and HTTP/1.1 on one
// port, serving the credentials' certificate. Each request, and each HTTP/1.1
// Upgrade (pods/exec), becomes a request context and goes to its handler
// chain (filters/index.ts); close() ends the connections still open.

import { constants, createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from "node:http2";
import type { IncomingMessage, ServerResponse } from "node:http";
import { readFileSync } from "node:fs";
import { requestBodyTimeouts } from "./http/body.js";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { requestContext, type Handler, type RequestContext, type ResponseExchange, type UpgradeExchange } from "./filters/index.js";
import type { Credentials } from "../component/pki.js";

export interface ListenOptions {
  readonly credentials: Credentials;
  readonly bindAddress: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly serve: Handler<RequestContext<ResponseExchange>>;
  readonly upgrade: Handler<RequestContext<UpgradeExchange>>;
  /** Upstream's constants when unset (tests shorten them). */
  readonly timeouts?: ConnectionTimeouts;
  /** The HTTP/2 rapid-reset limit (RESET_LIMIT when unset; tests lower it). */
  readonly resets?: ResetLimit;
  /** --max-connections: open connections served in full (0 or unset: defaultMaxConnections()). */
  readonly maxConnections?: number;
}

/**
 * Connections past --max-connections: the next HEALTH_HEADROOM are accepted
 * (a probe must still get through a flood) and serve only the health paths,
 * answering anything else 429 and closing; beyond those a new connection
 * closes the oldest one still in its TLS handshake, or itself when there is
 * none (before TLS costs anything). docs/reliability.md, "Connections".
 */
export const HEALTH_HEADROOM = 64;
const HEALTH_PATHS = /^\/(healthz|livez|readyz)(\/|\?|$)/;

/** Four fifths of the open-files limit (the store, clients and logs need the rest), or 10,000 when it cannot be read. */
export function defaultMaxConnections(): number {
  try {
    const limits = readFileSync("/proc/self/limits", "utf8");
    const soft = Number(/^Max open files\s+(\d+)/m.exec(limits)?.[1]);
    if (Number.isFinite(soft) && soft > 0) return Math.max(100, Math.floor(soft * 0.8) - HEALTH_HEADROOM);
  } catch {
    // not Linux: the fallback
  }
  return 10_000;
}

/**
 * How long a connection may sit without a request. Upstream has no flags for
 * these: its secure server sets ReadHeaderTimeout 32 s ("just shy of the
 * request timeout's upper bound", which also bounds the TLS handshake) and
 * IdleTimeout 90 s (HTTP/1.1 keep-alive and HTTP/2 alike); so do we.
 */
export interface ConnectionTimeouts {
  /** The TLS handshake, and an HTTP/1.1 connection's first request line and headers. */
  readonly headerMs: number;
  /** A connection with no request in progress (HTTP/1.1 between requests, HTTP/2 with no open stream). */
  readonly idleMs: number;
  /** A request body, from the handler's first read to its end (--request-body-timeout; 60 s when unset): 408, then the connection closes. */
  readonly bodyMs?: number;
}

export const CONNECTION_TIMEOUTS: ConnectionTimeouts = { headerMs: 32_000, idleMs: 90_000 };

export async function listen(o: ListenOptions): Promise<{ port: number; connections(): number; close(): Promise<void> }> {
  const { credentials } = o;
  const timeouts = o.timeouts ?? CONNECTION_TIMEOUTS;
  const server: Http2SecureServer = createSecureServer(
    // The CA goes in the chain: a joining node pins it by digest (a join token) before trusting it.
    // Client certificates are asked for, not required: the TLS stack verifies one against the cluster CA
    // (`authorized`), and the request goes on either way for the authenticators to judge (filters/client-certificates.ts).
    {
      cert: credentials.serverCertPem + credentials.caCertPem, key: credentials.serverKeyPem, allowHTTP1: true, settings: { maxConcurrentStreams: 1000 },
      ca: credentials.caCertPem, requestCert: true, rejectUnauthorized: false,
      handshakeTimeout: timeouts.headerMs,
      // HTTP/2 abuse (CVE-2023-44487 and kin): refused streams and malformed frames end the session early.
      maxSessionRejectedStreams: 100, maxSessionInvalidFrames: 100,
    },
    (req, res) => {
      if (req.httpVersionMajor === 1) idle.get(req.socket as Socket)?.busy(res);
      const overCap = req.httpVersionMajor === 1 ? overCapSockets.has(req.socket) : overCapSessions.has(req.stream.session ?? {});
      if (overCap && !HEALTH_PATHS.test(req.url ?? "")) return tooManyConnections(req, res);
      requestBodyTimeouts.set(req, timeouts.bodyMs ?? DEFAULT_BODY_MS);
      void o.serve(requestContext({ kind: "response", req, res }));
    },
  );
  // The connection cap: counted on raw TCP, judged again once TLS is up (the count may have dropped meanwhile).
  const maxConnections = o.maxConnections || defaultMaxConnections();
  let open = 0;
  const overCapSockets = new WeakSet<object>();
  const overCapSessions = new WeakSet<object>();
  // Connections still in the TLS handshake, oldest first: past the cap the oldest of them makes room, so a flood
  // of connections that never handshake cannot lock out a probe (a real client's handshake takes milliseconds).
  const handshaking = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    open++;
    handshaking.add(socket);
    socket.once("close", () => {
      open--;
      handshaking.delete(socket);
    });
    if (open <= maxConnections + HEALTH_HEADROOM) return;
    const oldest = handshaking.values().next().value;
    (oldest !== undefined && oldest !== socket ? oldest : socket).destroy();
  });
  server.on("secureConnection", (socket: Socket & { _parent?: Socket; disableRenegotiation?: () => void }) => {
    if (socket._parent !== undefined) handshaking.delete(socket._parent);
    // No TLS renegotiation (Go's server has none): a connection's client certificate is fixed, so its user is read once.
    socket.disableRenegotiation?.();
    if (open > maxConnections) overCapSockets.add(socket);
  });
  // Idle connections: an HTTP/1.1 socket (timer per socket) or an HTTP/2 session (timer per session).
  const idle = new WeakMap<Socket, IdleTimer>();
  server.on("session", (session: ServerHttp2Session) => {
    if (open > maxConnections) overCapSessions.add(session);
    const timer = new IdleTimer(timeouts.idleMs, () => session.close());
    timer.arm();
    session.on("stream", (stream) => timer.busy(stream));
    session.once("close", () => timer.stop());
    limitResets(session, o.resets ?? RESET_LIMIT);
  });
  server.on("sessionError", () => {});
  // Connect sub-resources (pods/exec) arrive as HTTP/1.1 Upgrade requests; close() ends the ones still open.
  const upgraded = new Set<Duplex>();
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => {});
    // An upgraded connection is long-running: no idle limit.
    idle.get(socket as Socket)?.stop();
    upgraded.add(socket);
    socket.once("close", () => upgraded.delete(socket));
    void o.upgrade(requestContext({ kind: "upgrade", req, socket, head, statusCode: 101 }));
  });
  // Watch events are small writes that must leave at once: no Nagle delay.
  server.on("secureConnection", (socket: Socket & { alpnProtocol?: string | false }) => {
    socket.setNoDelay(true);
    if (socket.alpnProtocol === "h2") return;
    // HTTP/1.1: the first request's headers within headerMs, later ones within idleMs of the last answer.
    const timer = new IdleTimer(timeouts.idleMs, () => socket.destroy());
    idle.set(socket, timer);
    timer.arm(timeouts.headerMs);
    socket.once("close", () => timer.stop());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.bindAddress, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => open,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Watches and exec sessions hold connections open; end them so close() completes.
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      for (const s of upgraded) s.destroy();
      setTimeout(resolve, 2000).unref();
    }),
  };
}

/**
 * HTTP/2 rapid reset (CVE-2023-44487): a client that opens streams and resets
 * them at once makes the server start work for each while its concurrent-stream
 * limit never binds. Each session holds a token bucket of client resets: `burst`
 * at first, refilled at `perSecond`; a reset that finds it empty ends the session
 * with GOAWAY ENHANCE_YOUR_CALM. A normal client (kubectl cancelling a watch now
 * and then) never comes near it.
 */
export interface ResetLimit {
  readonly burst: number;
  readonly perSecond: number;
}

export const RESET_LIMIT: ResetLimit = { burst: 200, perSecond: 50 };

function limitResets(session: ServerHttp2Session, limit: ResetLimit): void {
  let tokens = limit.burst;
  let last = Date.now();
  session.on("stream", (stream) => {
    stream.once("close", () => {
      // A stream reset before it completed (a client's CANCEL, mostly); a stream the server ends normally has NO_ERROR.
      if (stream.rstCode === undefined || stream.rstCode === constants.NGHTTP2_NO_ERROR) return;
      const now = Date.now();
      tokens = Math.min(limit.burst, tokens + ((now - last) / 1000) * limit.perSecond);
      last = now;
      if (--tokens >= 0 || session.closed || session.destroyed) return;
      // close() first: the GOAWAY it sends is followed by ours with the reason, and the client ends the
      // session (a destroy() alone left a flooding client writing into a session it still thought open).
      session.close();
      session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM);
      setTimeout(() => session.destroy(), 1000).unref();
    });
  });
}

/** Ends a connection that has had nothing in progress for `ms`; each request or stream in progress holds it off until it closes. */
class IdleTimer {
  #active = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(readonly ms: number, readonly onIdle: () => void) {}

  arm(ms = this.ms): void {
    clearTimeout(this.#timer);
    if (this.#stopped || this.#active > 0) return;
    this.#timer = setTimeout(this.onIdle, ms);
    this.#timer.unref();
  }

  /** Something is in progress until `until` closes. */
  busy(until: { once(event: "close", f: () => void): unknown }): void {
    this.#active++;
    clearTimeout(this.#timer);
    until.once("close", () => {
      this.#active--;
      this.arm();
    });
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }
}

const DEFAULT_BODY_MS = 60_000;

/** 429 on a connection past the cap, and the connection closes (HTTP/1.1) or ends (HTTP/2 GOAWAY). */
function tooManyConnections(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): void {
  const body = JSON.stringify({
    kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure",
    message: "too many open connections, please try again later", reason: "TooManyRequests", details: { retryAfterSeconds: 1 }, code: 429,
  });
  req.resume();
  if (req.httpVersionMajor === 1) {
    (res as ServerResponse).writeHead(429, { "content-type": "application/json", "retry-after": "1", connection: "close" });
    (res as ServerResponse).end(body);
    return;
  }
  (res as Http2ServerResponse).writeHead(429, { "content-type": "application/json", "retry-after": "1" });
  (res as Http2ServerResponse).end(body);
  (req as Http2ServerRequest).stream.session?.close();
}
