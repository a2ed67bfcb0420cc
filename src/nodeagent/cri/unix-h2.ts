// Unary gRPC calls to a CRI runtime over node:http2 on its UNIX socket, in
// place of grpc-js (whose per-call objects, interceptor and retry layers were
// a large share of the agent's CPU while pods start). One HTTP/2 session per
// socket, opened on the first call and again after it closes (the runtime
// restarted); each call is one stream: POST /runtime.v1.Service/Method,
// content-type application/grpc, grpc-timeout for the deadline, the request
// as one 5-byte-prefixed message, the answer's bytes collected whole and the
// outcome read from grpc-status/grpc-message. Only unary calls: the agent
// streams exec, attach and port-forward through the runtime's own streaming
// server, not gRPC streams.

import * as http2 from "node:http2";
import { connect as netConnect } from "node:net";
import { GrpcCode, callOutcome, grpcFrame, streamFailure, type GrpcStatus } from "../../machinery/grpc-outcome.js";

const { CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE } = GrpcCode;

/** A failed call: the gRPC status code and the message as the peer (or this transport) gave it. */
export interface UnaryFailure {
  code: number;
  details: string;
}

export class UnaryError extends Error implements UnaryFailure {
  readonly code: number;
  readonly details: string;
  constructor(code: number, details: string) {
    super(details);
    this.code = code;
    this.details = details;
  }
}

export interface UnaryCall {
  deadline: number;
  signal?: AbortSignal | undefined;
  /** Largest answer accepted, in bytes. */
  maxReceive: number;
}

const { NGHTTP2_CANCEL } = http2.constants;

/** One runtime socket and the session on it. */
export class UnixH2Channel {
  readonly #path: string;
  #session: http2.ClientHttp2Session | undefined;
  #closed = false;

  constructor(socketPath: string) {
    this.#path = socketPath;
  }

  /** Resolves once a session to the socket is connected; retries until the deadline. */
  async waitForReady(deadline: number): Promise<void> {
    let last = "not connected";
    for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
      const session = this.#open();
      const outcome = await new Promise<string | undefined>((resolve) => {
        if (!session.connecting && !session.destroyed) return resolve(undefined);
        const timer = setTimeout(() => resolve("timed out"), Math.max(1, deadline - Date.now()));
        const settle = (why: string | undefined) => {
          clearTimeout(timer);
          session.off("connect", onConnect);
          session.off("close", onClose);
          resolve(why);
        };
        const onConnect = () => settle(undefined);
        const onClose = () => settle("connection closed");
        session.once("connect", onConnect);
        session.once("close", onClose);
        session.once("error", (err: Error) => (last = err.message));
      });
      if (outcome === undefined) return;
      if (outcome !== "connection closed") last = outcome;
      if (Date.now() + pause >= deadline) throw new UnaryError(UNAVAILABLE, `failed to connect to ${this.#path}: ${last}`);
      await new Promise((r) => setTimeout(r, pause));
    }
  }

  /** One request message, one answer message (both encoded by the caller). */
  unary(path: string, request: Uint8Array, call: UnaryCall): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      if (call.signal?.aborted) return reject(new UnaryError(CANCELLED, "Cancelled on client"));
      const timeoutMs = Math.max(1, call.deadline - Date.now());
      let stream: http2.ClientHttp2Stream;
      try {
        stream = this.#open().request(
          { ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", "grpc-timeout": `${Math.ceil(timeoutMs)}m` },
          { endStream: false },
        );
      } catch (err) {
        return reject(new UnaryError(UNAVAILABLE, `No connection established: ${(err as Error).message}`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let headers: http2.IncomingHttpHeaders | undefined;
      let trailers: http2.IncomingHttpHeaders | undefined;
      let failure: UnaryError | undefined;
      const fail = (err: UnaryError) => {
        failure ??= err;
        if (!stream.destroyed) stream.close(NGHTTP2_CANCEL);
      };
      const timer = setTimeout(() => fail(new UnaryError(DEADLINE_EXCEEDED, "Deadline exceeded")), timeoutMs);
      const onAbort = () => fail(new UnaryError(CANCELLED, "Cancelled on client"));
      call.signal?.addEventListener("abort", onAbort, { once: true });
      stream.on("response", (h) => (headers = h));
      stream.on("trailers", (t) => (trailers = t));
      stream.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > call.maxReceive + 5) fail(new UnaryError(RESOURCE_EXHAUSTED, `Received message larger than max (${size - 5} vs. ${call.maxReceive})`));
        else chunks.push(chunk);
      });
      stream.on("error", (err: Error) => {
        failure ??= unaryError(streamFailure(err, stream.rstCode));
      });
      stream.on("close", () => {
        clearTimeout(timer);
        call.signal?.removeEventListener("abort", onAbort);
        const status = failure ?? callOutcome(headers, trailers, stream.rstCode);
        if (status !== undefined) return reject(unaryError(status));
        const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
        const message = firstMessage(body);
        if (message instanceof UnaryError) reject(message);
        else resolve(message);
      });
      stream.end(grpcFrame(request));
    });
  }

  close(): void {
    this.#closed = true;
    this.#session?.close();
    this.#session = undefined;
  }

  /** The session in use, or a new one when there is none or it is going away (the runtime restarted). */
  #open(): http2.ClientHttp2Session {
    const current = this.#session;
    if (current !== undefined && !current.destroyed && !current.closed) return current;
    if (this.#closed) throw new Error("the client is closed");
    const session = http2.connect("http://localhost", {
      createConnection: () => netConnect(this.#path),
      settings: { enablePush: false },
    });
    const forget = () => {
      if (this.#session === session) this.#session = undefined;
    };
    // Errors reach the calls on the session as their streams' errors; a new call opens a new session.
    session.on("error", forget);
    session.on("goaway", forget);
    session.on("close", forget);
    // As grpc-js's channels, the session does not keep the process alive on its own.
    session.unref();
    this.#session = session;
    return session;
  }
}

/** The single message of a unary answer, without its 5-byte prefix. */
function firstMessage(body: Buffer): Buffer | UnaryError {
  if (body.length < 5) return new UnaryError(UNIMPLEMENTED, "No message received");
  if (body[0] !== 0) return new UnaryError(INTERNAL, "Received a compressed message, which was not asked for");
  const length = body.readUInt32BE(1);
  if (body.length < 5 + length) return new UnaryError(INTERNAL, "Received a truncated message");
  return body.subarray(5, 5 + length);
}

function unaryError(status: GrpcStatus): UnaryError {
  return status instanceof UnaryError ? status : new UnaryError(status.code, status.details);
}
