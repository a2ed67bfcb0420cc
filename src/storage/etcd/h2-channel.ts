// gRPC over one node:http2 session per etcd endpoint, without @grpc/grpc-js:
// every call is a stream of that session (POST, content-type
// application/grpc, te: trailers, grpc-timeout for the deadline), messages
// are 5-byte-prefixed frames, and the outcome is the grpc-status/grpc-message
// trailers. Failures come out as ServiceError-shaped errors with the codes and
// messages grpc-js gives for the same failure, so connection.ts's classify()
// sorts both transports' errors alike ("No connection established" = the call
// was never sent).

import * as http2 from "node:http2";
import { EventEmitter } from "node:events";
import { isIP } from "node:net";
import { checkServerIdentity, type PeerCertificate } from "node:tls";
import type { Method } from "./rpc.js";
import { wireCodec, type WireCodec } from "./wire.js";
import { GrpcCode, callOutcome, grpcFrame, streamFailure, type GrpcStatus } from "../../machinery/grpc-outcome.js";
import { widenSessionWindow, windowOptions } from "../../machinery/h2-windows.js";

/** grpc status codes (shared with the CRI client: machinery/grpc-outcome.ts). */
export const Code = GrpcCode;

/** Shaped as grpc-js's ServiceError: isServiceError() and classify() read code and details. */
export interface CallError extends Error {
  code: number;
  details: string;
  metadata: undefined;
}

export function callError(code: number, details: string): CallError {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: undefined });
}

/** TLS material for https:// endpoints (PEM). */
export interface ChannelTls {
  ca?: string;
  cert?: string;
  key?: string;
}

/**
 * TLS settings for a connection to `host` (both transports, h2-frames.ts
 * too). An IP address may not be sent as the TLS server name (RFC 6066): a
 * fixed name goes as SNI instead, and the certificate is still checked
 * against the address.
 */
export function tlsConnectOptions(host: string, t: ChannelTls): { ca?: string; cert?: string; key?: string; servername?: string; checkServerIdentity?: (name: string, cert: PeerCertificate) => Error | undefined } {
  if ((t.cert === undefined) !== (t.key === undefined)) throw new Error("etcd: a client certificate needs both its certificate and its key");
  return {
    ...(t.ca === undefined ? {} : { ca: t.ca }),
    ...(t.cert === undefined ? {} : { cert: t.cert, key: t.key! }),
    ...(isIP(host) !== 0 ? { servername: "etcd", checkServerIdentity: (_name: string, cert: PeerCertificate) => checkServerIdentity(host, cert) } : { servername: host }),
  };
}

/**
 * Runs `expired` once `ms` have passed, unless cancelled first; returns the
 * cancel. The verdict waits for the event loop's next read of the sockets:
 * timers run before it, so in a busy process (a turn that took seconds) an
 * answer etcd sent in time (a call's, a keepalive ping's), already waiting in
 * the socket, would otherwise lose to its own deadline, and a working member
 * be taken for a slow or dead one. `unref`: the wait keeps no process alive.
 */
export function afterDeadline(ms: number, expired: () => void, unref = false): () => void {
  let immediate: NodeJS.Immediate | undefined;
  const timer = setTimeout(() => (immediate = setImmediate(expired)), ms);
  if (unref) timer.unref();
  return () => {
    clearTimeout(timer);
    clearImmediate(immediate);
  };
}

/** Resolves when `connecting` settles (it never rejects); rejects UNAVAILABLE once `deadline` passes first. */
export function connectedBy(connecting: Promise<void>, deadline: number, url: string): Promise<void> {
  const late = () => callError(Code.UNAVAILABLE, `No connection established within the dial timeout to ${url}`);
  const wait = deadline - Date.now();
  if (wait <= 0) return Promise.reject(late());
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(late()), wait);
    connecting.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A unary call's end: its error, or its one message decoded (both transports, h2-frames.ts too). */
export function settleUnary<Res>(
  decode: (bytes: Buffer) => Res,
  err: CallError | undefined,
  answer: Buffer | undefined,
  resolve: (value: Res) => void,
  reject: (err: CallError) => void,
): void {
  if (err !== undefined) reject(err);
  else if (answer === undefined) reject(callError(Code.INTERNAL, "No message received"));
  else {
    try {
      resolve(decode(answer));
    } catch (e) {
      reject(callError(Code.INTERNAL, `Response message parsing error: ${message(e)}`));
    }
  }
}

/** A bidirectional or server-streaming call, with the subset of grpc-js's stream API orch uses. */
export interface CallStream<Req, Res> {
  write(request: Req): unknown;
  on(event: "data", listener: (response: Res) => void): this;
  on(event: "error", listener: (err: Error) => void): this;
  on(event: "end", listener: () => void): this;
  pause(): unknown;
  resume(): unknown;
  cancel(): void;
  removeAllListeners(event?: string): unknown;
}

// Detect dead peers on half-open connections (etcd allows a ping every 5 s or slower).
const KEEPALIVE_MS = 10_000;
const KEEPALIVE_TIMEOUT_MS = 5_000;

const { NGHTTP2_CANCEL } = http2.constants;

/** One etcd endpoint: a lazily (re)opened HTTP/2 session and the calls on it. */
export class H2Channel {
  readonly url: string;
  readonly #origin: string;
  readonly #connectOptions: http2.SecureClientSessionOptions;
  readonly #headers: Record<string, string>;
  #session: http2.ClientHttp2Session | undefined;
  /** The session is usable: connected, not closing, not told to go away. */
  #ready = false;
  #connecting: Promise<void> | undefined;
  #lastError = "";
  #keepalive: NodeJS.Timeout | undefined;

  constructor(url: string, tls: ChannelTls | undefined, headers: Record<string, string>) {
    this.url = url;
    const parsed = new URL(url);
    this.#origin = `${parsed.protocol}//${parsed.host}`;
    this.#headers = headers;
    const host = parsed.hostname.replace(/^\[|\]$/g, "");
    // Wide windows: a LIST of thousands of objects or a burst of watch events should not wait for WINDOW_UPDATEs.
    this.#connectOptions = { ...windowOptions };
    if (parsed.protocol === "https:") Object.assign(this.#connectOptions, tlsConnectOptions(host, tls ?? {}));
  }

  /**
   * Resolve once a session is connected, or connecting failed (the next call
   * then fails at once as not sent); reject when connecting outlasts the deadline.
   */
  connect(deadline: number): Promise<void> {
    if (this.#ready) return Promise.resolve();
    return connectedBy(this.#connecting ?? this.#open(), deadline, this.url);
  }

  /** One request, one answer. */
  unary<Req, Res>(method: Method<Req, Res>, request: Req, deadline: number): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      const session = this.#session;
      if (!this.#ready || session === undefined) {
        reject(this.#notConnected(`No connection established. Last error: ${this.#lastError || "not connected"}`));
        return;
      }
      const timeoutMs = Math.max(1, deadline - Date.now());
      let stream: http2.ClientHttp2Stream;
      try {
        stream = session.request(this.#requestHeaders(method.path, timeoutMs), { endStream: false });
      } catch (err) {
        reject(this.#notConnected(`No connection established. Last error: ${message(err)}`));
        return;
      }
      const codec = wireCodec<Req, Res>(method.path);
      let answer: Buffer | undefined;
      const call = readCall(
        stream,
        (bytes) => (answer = bytes),
        (err) => {
          cancelDeadline();
          settleUnary(codec !== undefined ? codec.decode : method.deserialize, err, answer, resolve, reject);
        },
      );
      const cancelDeadline = afterDeadline(timeoutMs, () => call.fail(callError(Code.DEADLINE_EXCEEDED, "Deadline exceeded")));
      stream.end(codec !== undefined ? codec.encode(request) : grpcFrame(method.serialize(request)));
    });
  }

  /** A bidirectional stream (Watch); opens a session if there is none (the call waits for it). */
  openStream<Req, Res>(method: Method<Req, Res>): CallStream<Req, Res> {
    return new H2CallStream(method, this.#startStream(method.path));
  }

  /** A server-streaming call (Snapshot): the request is sent and the sending side closed. */
  openServerStream<Req, Res>(method: Method<Req, Res>, request: Req): CallStream<Req, Res> & AsyncIterable<Res> {
    const call = new H2CallStream(method, this.#startStream(method.path));
    call.write(request);
    call.endWrites();
    return call;
  }

  close(): void {
    this.#drop(undefined);
  }

  #startStream(path: string): http2.ClientHttp2Stream | CallError {
    if (this.#session === undefined || this.#session.destroyed) void this.#open();
    const session = this.#session;
    if (session === undefined) return this.#notConnected(`No connection established. Last error: ${this.#lastError || "not connected"}`);
    try {
      return session.request(this.#requestHeaders(path, 0), { endStream: false });
    } catch (err) {
      return this.#notConnected(`No connection established. Last error: ${message(err)}`);
    }
  }

  #requestHeaders(path: string, timeoutMs: number): http2.OutgoingHttpHeaders {
    const headers: http2.OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      ...this.#headers,
    };
    if (timeoutMs > 0) headers["grpc-timeout"] = `${Math.ceil(timeoutMs)}m`;
    return headers;
  }

  /** Start a session (this.#connecting until it connected or failed; it never rejects). */
  #open(): Promise<void> {
    this.#drop(undefined);
    let session: http2.ClientHttp2Session;
    try {
      session = http2.connect(this.#origin, this.#connectOptions);
    } catch (err) {
      this.#lastError = message(err);
      return Promise.resolve();
    }
    this.#session = session;
    const connecting = new Promise<void>((resolve) => {
      const settle = () => {
        if (this.#connecting === connecting) this.#connecting = undefined;
        resolve();
      };
      session.once("connect", () => {
        if (this.#session === session) {
          this.#ready = true;
          this.#lastError = "";
          widenSessionWindow(session);
          this.#startKeepalive(session);
        }
        settle();
      });
      session.on("error", (err: Error) => {
        if (this.#session === session) {
          this.#lastError = message(err);
          this.#drop(err);
        }
        settle();
      });
      session.on("goaway", () => {
        // Calls in flight finish; new ones go on a new session.
        if (this.#session === session) this.#drop(undefined, false);
      });
      session.on("close", () => {
        if (this.#session === session) {
          this.#lastError ||= "connection closed";
          this.#drop(undefined);
        }
        settle();
      });
    });
    this.#connecting = connecting;
    // The session must not keep the process alive on its own (grpc-js's channels do not either).
    session.unref();
    return connecting;
  }

  #startKeepalive(session: http2.ClientHttp2Session): void {
    clearInterval(this.#keepalive);
    this.#keepalive = setInterval(() => {
      if (session.destroyed) return;
      const cancel = afterDeadline(KEEPALIVE_TIMEOUT_MS, () => session.destroy(new Error("keepalive ping not answered")), true);
      const sent = session.ping((err) => {
        cancel();
        if (err !== null && !session.destroyed) session.destroy(err);
      });
      if (!sent) cancel();
    }, KEEPALIVE_MS);
    this.#keepalive.unref();
  }

  /** Forget the current session; destroy it (failing its calls) unless it may finish them. */
  #drop(err: Error | undefined, destroy = true): void {
    const session = this.#session;
    this.#session = undefined;
    this.#ready = false;
    this.#connecting = undefined;
    clearInterval(this.#keepalive);
    this.#keepalive = undefined;
    if (session === undefined) return;
    if (destroy && !session.destroyed) session.destroy(err);
    else if (!destroy) session.close();
  }

  #notConnected(details: string): CallError {
    return callError(Code.UNAVAILABLE, details);
  }
}

/** A streaming call over one HTTP/2 stream: decoded messages come as "data", failures as "error". */
class H2CallStream<Req, Res> extends EventEmitter implements CallStream<Req, Res>, AsyncIterable<Res> {
  readonly #method: Method<Req, Res>;
  readonly #stream: http2.ClientHttp2Stream | undefined;
  #codec: WireCodec<Req, Res> | undefined;
  #done = false;

  constructor(method: Method<Req, Res>, stream: http2.ClientHttp2Stream | CallError) {
    super();
    this.#method = method;
    if (!(stream instanceof Error)) {
      this.#stream = stream;
    } else {
      const err = stream;
      process.nextTick(() => this.#finish(err));
      return;
    }
    const codec = wireCodec<Req, Res>(method.path);
    this.#codec = codec;
    const decode = codec !== undefined ? codec.decode : method.deserialize;
    const call = readCall(
      stream,
      (bytes) => {
        if (this.#done) return;
        let message: Res;
        try {
          message = decode(bytes);
        } catch (e) {
          call.fail(callError(Code.INTERNAL, `Response message parsing error: ${messageOf(e)}`));
          return;
        }
        this.emit("data", message);
      },
      (err) => this.#finish(err),
    );
  }

  write(request: Req): boolean {
    const stream = this.#stream;
    if (stream === undefined || this.#done || stream.destroyed) return false;
    const codec = this.#codec;
    return stream.write(codec !== undefined ? codec.encode(request) : grpcFrame(this.#method.serialize(request)));
  }

  /** Close our sending side (a server-streaming call's request is complete). */
  endWrites(): void {
    this.#stream?.end();
  }

  pause(): void {
    this.#stream?.pause();
  }

  resume(): void {
    this.#stream?.resume();
  }

  /** End the call from our side; nothing more is emitted (grpc-js would emit CANCELLED: no caller wants it). */
  cancel(): void {
    if (this.#done) return;
    this.#done = true;
    const stream = this.#stream;
    if (stream !== undefined && !stream.destroyed) stream.close(NGHTTP2_CANCEL);
  }

  #finish(err: CallError | undefined): void {
    if (this.#done) return;
    this.#done = true;
    if (err === undefined) this.emit("end");
    else if (this.listenerCount("error") > 0) this.emit("error", err);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Res> {
    const queue: Res[] = [];
    let error: Error | undefined;
    let ended = false;
    let wake: (() => void) | undefined;
    const notify = () => {
      wake?.();
      wake = undefined;
    };
    this.on("data", (m: Res) => {
      queue.push(m);
      if (queue.length >= 16) this.pause();
      notify();
    });
    this.on("error", (e: Error) => {
      error = e;
      notify();
    });
    this.on("end", () => {
      ended = true;
      notify();
    });
    try {
      for (;;) {
        const next = queue.shift();
        if (next !== undefined) {
          if (queue.length < 4) this.resume();
          yield next;
          continue;
        }
        if (error !== undefined) throw error;
        if (ended) return;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      this.cancel();
    }
  }
}

/**
 * Follows one call's HTTP/2 stream: each whole message goes to onMessage, then
 * the outcome (undefined for OK) to onClose, once, when the stream closes.
 * fail() ends the call from our side with the given error as its outcome.
 */
function readCall(
  stream: http2.ClientHttp2Stream,
  onMessage: (bytes: Buffer) => void,
  onClose: (err: CallError | undefined) => void,
): { fail(err: CallError): void } {
  let failure: CallError | undefined;
  let headers: http2.IncomingHttpHeaders | undefined;
  let trailers: http2.IncomingHttpHeaders | undefined;
  const fail = (err: CallError) => {
    failure ??= err;
    stream.close(NGHTTP2_CANCEL);
  };
  const reader = new FrameReader();
  reader.onMessage = onMessage;
  reader.onError = fail;
  stream.on("response", (h) => (headers = h));
  stream.on("trailers", (t) => (trailers = t));
  stream.on("data", (chunk: Buffer) => reader.push(chunk));
  stream.on("error", (err: Error) => {
    failure ??= streamError(err, stream);
  });
  stream.on("close", () => onClose(failure ?? outcome(headers, trailers, stream)));
  return { fail };
}

/**
 * Splits a stream's bytes into gRPC messages. Chunks are kept in a list until
 * a whole message is there and joined once, so a large answer costs one copy.
 */
class FrameReader {
  onMessage: (bytes: Buffer) => void = () => {};
  onError: (err: CallError) => void = () => {};
  #chunks: Buffer[] = [];
  #have = 0;
  /** The whole frame's length once its prefix is read, else -1. */
  #need = -1;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#have += chunk.length;
    for (;;) {
      if (this.#need < 0) {
        if (this.#have < 5) return;
        let first = this.#chunks[0]!;
        if (first.length < 5) {
          first = Buffer.concat(this.#chunks, this.#have);
          this.#chunks = [first];
        }
        if (first[0] !== 0) {
          this.onError(callError(Code.INTERNAL, "Received a compressed message, which was not asked for"));
          this.#chunks = [];
          this.#have = 0;
          return;
        }
        this.#need = 5 + first.readUInt32BE(1);
      }
      if (this.#have < this.#need) return;
      const all = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#have);
      const need = this.#need;
      const rest = all.length > need ? all.subarray(need) : undefined;
      this.#chunks = rest === undefined ? [] : [rest];
      this.#have = rest === undefined ? 0 : rest.length;
      this.#need = -1;
      this.onMessage(all.subarray(5, need));
    }
  }
}

/** The call's outcome from its headers and trailers: undefined for OK. */
function outcome(headers: http2.IncomingHttpHeaders | undefined, trailers: http2.IncomingHttpHeaders | undefined, stream: http2.ClientHttp2Stream): CallError | undefined {
  return asCallError(callOutcome(headers, trailers, stream.rstCode));
}

/** The stream failed locally (its session died, a reset): grpc-js's codes for the same. */
function streamError(err: Error, stream: http2.ClientHttp2Stream): CallError {
  return asCallError(streamFailure(err, stream.rstCode));
}

function asCallError(status: GrpcStatus): CallError;
function asCallError(status: GrpcStatus | undefined): CallError | undefined;
function asCallError(status: GrpcStatus | undefined): CallError | undefined {
  return status === undefined ? undefined : callError(status.code, status.details);
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
const messageOf = message;
