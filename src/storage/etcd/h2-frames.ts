// etcd's unary calls over HTTP/2 framed by us, on one socket per endpoint.
// Why: with node:http2 each call is a ClientHttp2Stream (a Duplex, an
// AsyncResource.bind and two deprecation wrappers per request, header
// validation, five listeners), and those were 11 % of the API server's
// thread while creating pods on etcd, more than the create's own JSON work.
// A unary gRPC call needs little of HTTP/2: one HEADERS frame (built once per
// method, only grpc-timeout varies), the message in DATA frames, and back
// response headers, DATA and trailers. Here a call is an entry in a map and
// its frames are a few bytes written with the others of the same tick.
//
// What is implemented of RFC 9113: the preface and SETTINGS (acknowledged;
// the peer's INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE and MAX_CONCURRENT_STREAMS
// honoured), flow control both ways (our windows are large and refilled as
// answers are read; our DATA waits for the peer's WINDOW_UPDATEs), PING (both
// ways: keepalive), RST_STREAM, GOAWAY (calls the peer did not take fail as
// not sent, so they are retried; the rest finish), padding and priority
// fields, CONTINUATION, HPACK with its dynamic table (hpack.ts). Push is
// refused in our SETTINGS. Streaming calls (Watch, Snapshot) stay on
// node:http2 (h2-channel.ts): they are few and long-lived.

import * as net from "node:net";
import * as tls from "node:tls";
import type { Method } from "./rpc.js";
import { wireCodec } from "./wire.js";
import { H2Channel, afterDeadline, callError, Code, connectedBy, settleUnary, tlsConnectOptions, type CallError, type CallStream, type ChannelTls } from "./h2-channel.js";
import { callOutcome, grpcFrame, GrpcCode } from "../../machinery/grpc-outcome.js";
import { encodeLiteralHeaders, HpackDecoder, type HeaderList } from "./hpack.js";

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

const enum FrameType {
  DATA = 0x0,
  HEADERS = 0x1,
  PRIORITY = 0x2,
  RST_STREAM = 0x3,
  SETTINGS = 0x4,
  PUSH_PROMISE = 0x5,
  PING = 0x6,
  GOAWAY = 0x7,
  WINDOW_UPDATE = 0x8,
  CONTINUATION = 0x9,
}

const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY_FLAG = 0x20;

const SETTINGS_HEADER_TABLE_SIZE = 0x1;
const SETTINGS_ENABLE_PUSH = 0x2;
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
const SETTINGS_MAX_FRAME_SIZE = 0x5;

const PROTOCOL_ERROR = 0x1;
const FLOW_CONTROL_ERROR = 0x3;
const FRAME_SIZE_ERROR = 0x6;
const CANCEL = 0x8;
const COMPRESSION_ERROR = 0x9;

// Our receive windows, as node:http2's channel had them (h2-channel.ts): a
// LIST of thousands of objects should not wait for WINDOW_UPDATEs.
const STREAM_WINDOW = 4 * 1024 * 1024;
const SESSION_WINDOW = 64 * 1024 * 1024;
/** The default before the peer's SETTINGS say otherwise (RFC 9113 6.5.2). */
const DEFAULT_WINDOW = 65_535;
const DEFAULT_MAX_FRAME = 16_384;
/** Stream ids are 31 bits; a connection that used them up is replaced. */
const LAST_STREAM_ID = 2 ** 31 - 1;
const KEEPALIVE_MS = 10_000;
const KEEPALIVE_TIMEOUT_MS = 5_000;

/** How often an idle-or-not connection is pinged, and how long an answer may take (tests shorten them). */
export interface Keepalive {
  intervalMs: number;
  timeoutMs: number;
}

/** One unary call in flight. */
interface Call {
  readonly id: number;
  /** The request's DATA not yet sent (flow control), from `sent`. */
  readonly body: Buffer;
  sent: number;
  sendWindow: number;
  /** The answer's bytes so far (gRPC framed), and how many we have not yet given back as window. */
  chunks: Buffer[];
  received: number;
  unacked: number;
  headers: Record<string, string> | undefined;
  trailers: Record<string, string> | undefined;
  settle(err: CallError | undefined, answer: Buffer | undefined): void;
}

/** The one-per-endpoint transport of connection.ts: unary calls framed here, streams on node:http2. */
export class FramedChannel {
  readonly url: string;
  readonly #host: string;
  readonly #port: number;
  readonly #authority: string;
  /** TLS settings for https:// endpoints; undefined for http://. */
  readonly #tls: tls.ConnectionOptions | undefined;
  readonly #extraHeaders: [string, string][];
  /** Watch and Snapshot streams. */
  readonly #streams: H2Channel;
  #conn: Connection | undefined;
  #connecting: Promise<void> | undefined;
  #lastError = "";
  /** The HEADERS block per method path, all but grpc-timeout. */
  readonly #blocks = new Map<string, Buffer>();

  readonly #keepalive: Keepalive;

  constructor(url: string, tlsOptions: ChannelTls | undefined, headers: Record<string, string>, keepalive: Keepalive = { intervalMs: KEEPALIVE_MS, timeoutMs: KEEPALIVE_TIMEOUT_MS }) {
    this.#keepalive = keepalive;
    this.url = url;
    const parsed = new URL(url);
    this.#host = parsed.hostname.replace(/^\[|\]$/g, "");
    this.#port = Number(parsed.port || 2379);
    this.#authority = parsed.host;
    this.#tls = parsed.protocol === "https:" ? tlsConnectOptions(this.#host, tlsOptions ?? {}) : undefined;
    this.#extraHeaders = Object.entries(headers);
    this.#streams = new H2Channel(url, tlsOptions, headers);
  }

  /** As H2Channel.connect: resolve once connected or failed; reject past the deadline. */
  connect(deadline: number): Promise<void> {
    if (this.#conn?.usable === true) return Promise.resolve();
    return connectedBy(this.#connecting ?? this.#open(), deadline, this.url);
  }

  unary<Req, Res>(method: Method<Req, Res>, request: Req, deadline: number): Promise<Res> {
    const conn = this.#conn;
    if (conn === undefined || !conn.usable) {
      return Promise.reject(callError(Code.UNAVAILABLE, `No connection established. Last error: ${this.#lastError || "not connected"}`));
    }
    const codec = wireCodec<Req, Res>(method.path);
    const body = codec !== undefined ? codec.encode(request) : grpcFrame(method.serialize(request));
    const decode = codec !== undefined ? codec.decode : method.deserialize;
    const timeoutMs = Math.max(1, Math.ceil(deadline - Date.now()));
    return new Promise<Res>((resolve, reject) => {
      conn.call(this.#block(method.path), timeoutMs, body, (err, answer) => settleUnary(decode, err, answer, resolve, reject));
      // The connection ran out of stream ids: the next call opens a new one.
      if (!conn.usable && this.#conn === conn) this.#conn = undefined;
    });
  }

  openStream<Req, Res>(method: Method<Req, Res>): CallStream<Req, Res> {
    return this.#streams.openStream(method);
  }

  openServerStream<Req, Res>(method: Method<Req, Res>, request: Req): CallStream<Req, Res> & AsyncIterable<Res> {
    return this.#streams.openServerStream(method, request);
  }

  close(): void {
    this.#conn?.destroy(undefined);
    this.#conn = undefined;
    this.#connecting = undefined;
    this.#streams.close();
  }

  #block(path: string): Buffer {
    let block = this.#blocks.get(path);
    if (block === undefined) {
      block = encodeLiteralHeaders([
        [":method", "POST"],
        [":scheme", this.#tls === undefined ? "http" : "https"],
        [":path", path],
        [":authority", this.#authority],
        ["content-type", "application/grpc"],
        ["te", "trailers"],
        ...this.#extraHeaders,
      ]);
      this.#blocks.set(path, block);
    }
    return block;
  }

  /** Open a connection (this.#connecting until it is up or failed; never rejects). */
  #open(): Promise<void> {
    this.#conn?.destroy(undefined);
    this.#conn = undefined;
    const connecting = new Promise<void>((resolve) => {
      let socket: net.Socket;
      try {
        socket = this.#tls === undefined ? net.connect({ host: this.#host, port: this.#port }) : tls.connect({ host: this.#host, port: this.#port, ALPNProtocols: ["h2"], ...this.#tls });
      } catch (err) {
        this.#lastError = err instanceof Error ? err.message : String(err);
        resolve();
        return;
      }
      const conn = new Connection(socket, this.#keepalive, (err) => {
        if (err !== undefined) this.#lastError = err.message;
        if (this.#conn === conn) this.#conn = undefined;
        if (this.#connecting === connecting) this.#connecting = undefined;
        resolve();
      });
      this.#conn = conn;
      socket.once(this.#tls === undefined ? "connect" : "secureConnect", () => {
        if (this.#tls !== undefined && (socket as tls.TLSSocket).alpnProtocol !== "h2") {
          conn.destroy(new Error(`etcd at ${this.url} did not agree to HTTP/2 (ALPN)`));
          return;
        }
        if (this.#conn === conn) {
          conn.start();
          this.#lastError = "";
        }
        if (this.#connecting === connecting) this.#connecting = undefined;
        resolve();
      });
    });
    this.#connecting = connecting;
    return connecting;
  }
}

/**
 * One HTTP/2 connection: calls go out as HEADERS + DATA, answers come back
 * to each call's settle(). `onClosed` is told once, when it is gone.
 */
class Connection {
  readonly #socket: net.Socket;
  readonly #onClosed: (err: Error | undefined) => void;
  readonly #decoder = new HpackDecoder();
  readonly #calls = new Map<number, Call>();
  /** Calls waiting for the peer's MAX_CONCURRENT_STREAMS, or for send window. */
  readonly #waiting: (() => void)[] = [];
  readonly #blocked = new Set<Call>();
  #nextId = 1;
  #started = false;
  #closed = false;
  /** GOAWAY received (or ids used up): no new calls; the connection ends when the last one does. */
  #draining = false;
  #peerMaxFrame = DEFAULT_MAX_FRAME;
  #peerInitialWindow = DEFAULT_WINDOW;
  #peerMaxStreams = Infinity;
  #sendWindow = DEFAULT_WINDOW;
  /** Connection-level bytes received and not yet given back. */
  #unacked = 0;
  /** Read buffer: unparsed bytes. */
  #pending: Buffer | undefined;
  /** A header block split over CONTINUATION frames. */
  #continuation: { streamId: number; endStream: boolean; parts: Buffer[] } | undefined;
  /** Frames of this turn of the event loop, written together. */
  #out: Buffer[] = [];
  #flushScheduled = false;
  #keepalive: NodeJS.Timeout | undefined;
  /** Cancels the unanswered keepalive ping's deadline; undefined when none is out. */
  #pingDeadline: (() => void) | undefined;
  readonly #timing: Keepalive;

  constructor(socket: net.Socket, timing: Keepalive, onClosed: (err: Error | undefined) => void) {
    this.#socket = socket;
    this.#timing = timing;
    this.#onClosed = onClosed;
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.#read(chunk));
    socket.on("error", (err) => this.destroy(err));
    socket.on("close", () => this.destroy(new Error("connection closed")));
    // As node:http2's session and grpc-js's channels: the connection alone does not keep the process alive.
    socket.unref();
  }

  /** Connected and taking new calls. */
  get usable(): boolean {
    return this.#started && !this.#closed && !this.#draining;
  }

  /** Send the preface and our settings (the socket is connected). */
  start(): void {
    this.#started = true;
    const settings = Buffer.alloc(18);
    settings.writeUInt16BE(SETTINGS_ENABLE_PUSH, 0);
    settings.writeUInt32BE(0, 2);
    settings.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, 6);
    settings.writeUInt32BE(STREAM_WINDOW, 8);
    settings.writeUInt16BE(SETTINGS_HEADER_TABLE_SIZE, 12);
    settings.writeUInt32BE(4096, 14);
    const windowUpdate = Buffer.alloc(4);
    windowUpdate.writeUInt32BE(SESSION_WINDOW - DEFAULT_WINDOW, 0);
    this.#write(PREFACE);
    this.#frame(FrameType.SETTINGS, 0, 0, settings);
    this.#frame(FrameType.WINDOW_UPDATE, 0, 0, windowUpdate);
    this.#keepalive = setInterval(() => this.#ping(), this.#timing.intervalMs);
    this.#keepalive.unref();
  }

  /** One unary call: `block` is the request's header block without grpc-timeout, `body` the gRPC-framed message. */
  call(block: Buffer, timeoutMs: number, body: Buffer, done: (err: CallError | undefined, answer: Buffer | undefined) => void): void {
    if (this.#calls.size >= this.#peerMaxStreams) {
      this.#waiting.push(() => this.call(block, timeoutMs, body, done));
      return;
    }
    const id = this.#nextId;
    this.#nextId += 2;
    if (this.#nextId > LAST_STREAM_ID) this.#draining = true;
    let cancelDeadline: (() => void) | undefined;
    const call: Call = {
      id,
      body,
      sent: 0,
      sendWindow: this.#peerInitialWindow,
      chunks: [],
      received: 0,
      unacked: 0,
      headers: undefined,
      trailers: undefined,
      settle: (err, answer) => {
        cancelDeadline?.();
        done(err, answer);
      },
    };
    this.#calls.set(id, call);
    cancelDeadline = afterDeadline(timeoutMs, () => {
      if (this.#calls.get(id) !== call) return;
      this.#reset(call, CANCEL);
      this.#finish(call, callError(Code.DEADLINE_EXCEEDED, "Deadline exceeded"));
    });
    this.#headers(id, Buffer.concat([block, timeoutHeader(timeoutMs)]));
    this.#sendData(call);
  }

  /** End the connection: every call still in flight fails (as with a dropped session: the outcome is unknown). */
  destroy(err: Error | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#keepalive);
    this.#cancelPing();
    this.#socket.destroy();
    const failure = callError(Code.UNAVAILABLE, `Connection dropped${err === undefined ? "" : `: ${err.message}`}`);
    for (const call of [...this.#calls.values()]) this.#finish(call, failure);
    for (const retry of this.#waiting.splice(0)) retry();
    this.#onClosed(err);
  }

  // ---- sending ----

  #write(bytes: Buffer): void {
    this.#out.push(bytes);
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      // Once per turn of the event loop, as nghttp2 does for node:http2: every call the turn's
      // callbacks made goes out in one write. Flushed per tick instead, a write (a system call
      // that on loopback also does the receiver's part) per call was 8 % of the thread.
      setImmediate(() => this.#flush());
    }
  }

  #flush(): void {
    this.#flushScheduled = false;
    const out = this.#out;
    this.#out = [];
    if (this.#closed || out.length === 0) return;
    this.#socket.write(out.length === 1 ? out[0]! : Buffer.concat(out));
  }

  /** A frame of `payload` (and `more`, appended) on `streamId`. */
  #frame(type: FrameType, flags: number, streamId: number, payload: Buffer): void {
    const head = Buffer.allocUnsafe(9);
    head.writeUIntBE(payload.length, 0, 3);
    head[3] = type;
    head[4] = flags;
    head.writeUInt32BE(streamId, 5);
    this.#write(head);
    if (payload.length > 0) this.#write(payload);
  }

  /** A request's header block: one HEADERS frame, CONTINUATIONs when it exceeds the peer's frame size. */
  #headers(id: number, block: Buffer): void {
    const max = this.#peerMaxFrame;
    if (block.length <= max) {
      this.#frame(FrameType.HEADERS, END_HEADERS, id, block);
      return;
    }
    this.#frame(FrameType.HEADERS, 0, id, block.subarray(0, max));
    for (let at = max; at < block.length; at += max) {
      const end = Math.min(block.length, at + max);
      this.#frame(FrameType.CONTINUATION, end === block.length ? END_HEADERS : 0, id, block.subarray(at, end));
    }
  }

  /** As much of the call's body as the windows allow; the last frame ends the stream. */
  #sendData(call: Call): void {
    while (call.sent < call.body.length) {
      const room = Math.min(this.#sendWindow, call.sendWindow, this.#peerMaxFrame, call.body.length - call.sent);
      if (room <= 0) {
        this.#blocked.add(call);
        return;
      }
      const end = call.sent + room;
      this.#frame(FrameType.DATA, end === call.body.length ? END_STREAM : 0, call.id, call.body.subarray(call.sent, end));
      call.sent = end;
      this.#sendWindow -= room;
      call.sendWindow -= room;
    }
    this.#blocked.delete(call);
  }

  #unblock(): void {
    for (const call of [...this.#blocked]) {
      if (this.#sendWindow <= 0) return;
      this.#sendData(call);
    }
  }

  #reset(call: Call, code: number): void {
    const payload = Buffer.alloc(4);
    payload.writeUInt32BE(code, 0);
    this.#frame(FrameType.RST_STREAM, 0, call.id, payload);
  }

  #ping(): void {
    if (this.#closed || this.#pingDeadline !== undefined) return;
    this.#pingDeadline = afterDeadline(this.#timing.timeoutMs, () => this.destroy(new Error("keepalive ping not answered")), true);
    this.#frame(FrameType.PING, 0, 0, Buffer.alloc(8));
  }

  /** The ping's deadline is off: the peer answered (any frame counts), or the connection ends. */
  #cancelPing(): void {
    this.#pingDeadline?.();
    this.#pingDeadline = undefined;
  }

  // ---- receiving ----

  #read(chunk: Buffer): void {
    // Anything from the peer shows it alive, as gRPC's keepalive counts any frame read: a ping
    // answered late behind a busy turn or a long answer must not drop a connection that works.
    this.#cancelPing();
    const buf = this.#pending === undefined ? chunk : Buffer.concat([this.#pending, chunk]);
    this.#pending = undefined;
    let pos = 0;
    while (!this.#closed && buf.length - pos >= 9) {
      const length = buf.readUIntBE(pos, 3);
      // We announce no SETTINGS_MAX_FRAME_SIZE: the default bounds what the peer may send.
      if (length > DEFAULT_MAX_FRAME) {
        this.#connectionError(FRAME_SIZE_ERROR, `a frame of ${length} bytes`);
        return;
      }
      if (buf.length - pos < 9 + length) break;
      const type = buf[pos + 3]!;
      const flags = buf[pos + 4]!;
      const streamId = buf.readUInt32BE(pos + 5) & 0x7fffffff;
      const payload = buf.subarray(pos + 9, pos + 9 + length);
      pos += 9 + length;
      this.#onFrame(type, flags, streamId, payload);
    }
    if (pos < buf.length && !this.#closed) this.#pending = pos === 0 ? buf : buf.subarray(pos);
  }

  #onFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (this.#continuation !== undefined && type !== FrameType.CONTINUATION) {
      this.#connectionError(PROTOCOL_ERROR, "a header block was interrupted");
      return;
    }
    switch (type) {
      case FrameType.DATA:
        this.#onData(flags, streamId, payload);
        return;
      case FrameType.HEADERS: {
        let block = payload;
        if (flags & PADDED) block = unpad(block);
        if (flags & PRIORITY_FLAG) block = block.subarray(5);
        if (flags & END_HEADERS) this.#onHeaders(streamId, (flags & END_STREAM) !== 0, block);
        else this.#continuation = { streamId, endStream: (flags & END_STREAM) !== 0, parts: [Buffer.from(block)] };
        return;
      }
      case FrameType.CONTINUATION: {
        const c = this.#continuation;
        if (c === undefined || c.streamId !== streamId) {
          this.#connectionError(PROTOCOL_ERROR, "an unexpected CONTINUATION");
          return;
        }
        c.parts.push(Buffer.from(payload));
        if (flags & END_HEADERS) {
          this.#continuation = undefined;
          this.#onHeaders(streamId, c.endStream, Buffer.concat(c.parts));
        }
        return;
      }
      case FrameType.RST_STREAM: {
        const call = this.#calls.get(streamId);
        if (call !== undefined) this.#finish(call, asCallError(callOutcome(undefined, undefined, payload.readUInt32BE(0))));
        return;
      }
      case FrameType.SETTINGS:
        if ((flags & ACK) === 0) this.#onSettings(payload);
        return;
      case FrameType.PING:
        if (flags & ACK) this.#cancelPing();
        else this.#frame(FrameType.PING, ACK, 0, Buffer.from(payload));
        return;
      case FrameType.GOAWAY:
        this.#onGoaway(payload.readUInt32BE(0) & 0x7fffffff, payload.readUInt32BE(4));
        return;
      case FrameType.WINDOW_UPDATE: {
        const increment = payload.readUInt32BE(0) & 0x7fffffff;
        if (streamId === 0) this.#sendWindow += increment;
        else {
          const call = this.#calls.get(streamId);
          if (call !== undefined) call.sendWindow += increment;
        }
        this.#unblock();
        return;
      }
      case FrameType.PUSH_PROMISE:
        this.#connectionError(PROTOCOL_ERROR, "PUSH_PROMISE, which our settings disabled");
        return;
      default:
        // PRIORITY and unknown frame types are ignored (RFC 9113 4.1, 5.5).
        return;
    }
  }

  #onData(flags: number, streamId: number, payload: Buffer): void {
    // Flow control counts the whole payload, padding included.
    this.#unacked += payload.length;
    if (this.#unacked >= SESSION_WINDOW / 4) {
      this.#windowUpdate(0, this.#unacked);
      this.#unacked = 0;
    }
    const call = this.#calls.get(streamId);
    if (call === undefined) return;
    const data = flags & PADDED ? unpad(payload) : payload;
    if (data.length > 0) {
      // A view of the read buffer: the socket does not reuse it.
      call.chunks.push(data);
      call.received += data.length;
    }
    if (flags & END_STREAM) {
      this.#complete(call);
      return;
    }
    call.unacked += payload.length;
    if (call.unacked >= STREAM_WINDOW / 4) {
      this.#windowUpdate(streamId, call.unacked);
      call.unacked = 0;
    }
  }

  #onHeaders(streamId: number, endStream: boolean, block: Buffer): void {
    let fields: HeaderList;
    try {
      // Decoded even for a stream we no longer follow: the table is shared by the whole connection.
      fields = this.#decoder.decode(block);
    } catch (err) {
      this.#connectionError(COMPRESSION_ERROR, err instanceof Error ? err.message : String(err));
      return;
    }
    const call = this.#calls.get(streamId);
    if (call === undefined) return;
    const headers: Record<string, string> = {};
    for (const [name, value] of fields) headers[name] = value;
    if (call.headers === undefined) call.headers = headers;
    else call.trailers = headers;
    if (endStream) this.#complete(call);
  }

  #onSettings(payload: Buffer): void {
    for (let i = 0; i + 6 <= payload.length; i += 6) {
      const id = payload.readUInt16BE(i);
      const value = payload.readUInt32BE(i + 2);
      if (id === SETTINGS_INITIAL_WINDOW_SIZE) {
        if (value > 2 ** 31 - 1) {
          this.#connectionError(FLOW_CONTROL_ERROR, "INITIAL_WINDOW_SIZE over 2^31-1");
          return;
        }
        // Every open stream's window moves by the change (RFC 9113 6.9.2).
        const delta = value - this.#peerInitialWindow;
        this.#peerInitialWindow = value;
        for (const call of this.#calls.values()) call.sendWindow += delta;
      } else if (id === SETTINGS_MAX_FRAME_SIZE) this.#peerMaxFrame = value;
      else if (id === SETTINGS_MAX_CONCURRENT_STREAMS) this.#peerMaxStreams = value;
      // HEADER_TABLE_SIZE bounds the peer's decoder: our encoder never adds to its table.
    }
    this.#frame(FrameType.SETTINGS, ACK, 0, Buffer.alloc(0));
    this.#unblock();
    while (this.#waiting.length > 0 && this.#calls.size < this.#peerMaxStreams) this.#waiting.shift()!();
  }

  #onGoaway(lastStreamId: number, code: number): void {
    this.#draining = true;
    // Calls the peer never took were not processed: safe to send again, elsewhere or on a new connection.
    const refused = callError(Code.UNAVAILABLE, `No connection established. Last error: the server is going away (GOAWAY code ${code}); the call was not processed`);
    for (const call of [...this.#calls.values()]) if (call.id > lastStreamId) this.#finish(call, refused);
    for (const retry of this.#waiting.splice(0)) retry();
    if (this.#calls.size === 0) this.destroy(undefined);
    // Tell our owner now: new calls go to a new connection while these finish.
    else this.#onClosed(new Error(`the server is going away (GOAWAY code ${code})`));
  }

  #complete(call: Call): void {
    const status = callOutcome(call.headers, call.trailers, undefined);
    if (status !== undefined) {
      this.#finish(call, asCallError(status));
      return;
    }
    if (call.headers === undefined) {
      this.#finish(call, callError(Code.INTERNAL, "The stream ended without a response"));
      return;
    }
    // The answer: one gRPC message, its 5-byte prefix first.
    const all = call.chunks.length === 1 ? call.chunks[0]! : Buffer.concat(call.chunks, call.received);
    if (all.length === 0) {
      this.#finish(call, undefined, undefined);
      return;
    }
    if (all.length < 5 || all[0] !== 0) {
      this.#finish(call, callError(Code.INTERNAL, all[0] !== 0 ? "Received a compressed message, which was not asked for" : "A truncated message"));
      return;
    }
    const size = all.readUInt32BE(1);
    if (all.length !== 5 + size) {
      this.#finish(call, callError(Code.INTERNAL, `Expected one message of ${size} bytes, received ${all.length - 5}`));
      return;
    }
    this.#finish(call, undefined, all.subarray(5));
  }

  #finish(call: Call, err: CallError | undefined, answer?: Buffer): void {
    if (this.#calls.get(call.id) !== call) return;
    this.#calls.delete(call.id);
    this.#blocked.delete(call);
    // Each caller goes on in a callback of its own, its promise reactions run before the next
    // one's, as with a stream per call: one read of the socket often completes many calls, and
    // callers racing for one key (etcd-storage.ts update()) keep their order better this way.
    setImmediate(call.settle, err, answer);
    if (this.#waiting.length > 0 && this.#calls.size < this.#peerMaxStreams) this.#waiting.shift()!();
    if (this.#draining && this.#calls.size === 0 && !this.#closed) {
      // The last call of a connection that takes no more: close it after the frames of this turn.
      process.nextTick(() => this.destroy(undefined));
    }
  }

  #windowUpdate(streamId: number, increment: number): void {
    const payload = Buffer.allocUnsafe(4);
    payload.writeUInt32BE(increment, 0);
    this.#frame(FrameType.WINDOW_UPDATE, 0, streamId, payload);
  }

  #connectionError(code: number, why: string): void {
    const payload = Buffer.alloc(8 + Buffer.byteLength(why));
    payload.writeUInt32BE(this.#nextId > 1 ? this.#nextId - 2 : 0, 0);
    payload.writeUInt32BE(code, 4);
    payload.write(why, 8);
    this.#frame(FrameType.GOAWAY, 0, 0, payload);
    this.#flush();
    this.destroy(new Error(`HTTP/2 protocol error: ${why}`));
  }
}

/** grpc-timeout's name as a literal field without indexing (it changes per call); the value follows. */
const TIMEOUT_NAME = encodeLiteralHeaders([["grpc-timeout", ""]]).subarray(0, -1);

/** grpc-timeout in milliseconds (at most 8 digits, gRPC's limit: 27 hours) as a literal field. */
function timeoutHeader(ms: number): Buffer {
  const value = `${Math.min(ms, 99_999_999)}m`;
  const out = Buffer.allocUnsafe(TIMEOUT_NAME.length + 1 + value.length);
  TIMEOUT_NAME.copy(out, 0);
  out[TIMEOUT_NAME.length] = value.length;
  out.write(value, TIMEOUT_NAME.length + 1, "latin1");
  return out;
}

/** A padded frame's content: its first byte is the pad length. */
function unpad(payload: Buffer): Buffer {
  const pad = payload[0] ?? 0;
  return payload.subarray(1, Math.max(1, payload.length - pad));
}

function asCallError(status: { code: number; details: string } | undefined): CallError {
  return status === undefined ? callError(GrpcCode.UNKNOWN, "no status") : callError(status.code, status.details);
}

