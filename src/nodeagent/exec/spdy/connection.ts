// A SPDY/3.1 session over a byte stream (an upgraded HTTP/1.1 connection, or
// bytes tunnelled in WebSocket messages): the peer opens streams with
// SYN_STREAM, each answered with SYN_REPLY, carrying DATA until either side
// sends FIN (half-close) or RST_STREAM. PINGs are echoed, SETTINGS read (the
// initial window), GOAWAY ends the session. Anything malformed ends it with
// GOAWAY PROTOCOL_ERROR and the socket closes; the process is unaffected.
//
// Flow control: received data is acknowledged with WINDOW_UPDATE (stream and
// connection) as it is handed on. The send windows (64 KiB) are held once the
// peer shows it keeps them (its first WINDOW_UPDATE or SETTINGS
// INITIAL_WINDOW_SIZE): the Go library every Kubernetes client uses
// (spdystream) neither sends nor reads WINDOW_UPDATE, so against it the
// socket's own buffer is the only brake.

import { EventEmitter } from "node:events";
import type { Duplex } from "node:stream";
import {
  dataFrame,
  FLAG_FIN,
  FrameReader,
  GoAwayStatus,
  goAwayFrame,
  HeaderCompressor,
  HeaderDecompressor,
  INITIAL_WINDOW,
  pingFrame,
  RstStatus,
  rstStreamFrame,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SpdyProtocolError,
  synReplyFrame,
  synStreamFrame,
  windowUpdateFrame,
  type Frame,
  type HeaderList,
} from "./frames.js";

/** The largest DATA frame this side sends. */
const MAX_SEND_FRAME = 32 * 1024;

export interface SpdyStreamEvents {
  data: [Buffer];
  /** The peer half-closed (FIN). */
  end: [];
  /** The peer accepted a stream this end opened (SYN_REPLY). */
  reply: [];
  /** Both halves closed, or reset, or the session ended. */
  close: [];
}

export class SpdyStream extends EventEmitter<SpdyStreamEvents> {
  /** Header names are lower case. */
  readonly headers: ReadonlyMap<string, string>;
  #remoteEnded = false;
  #localEnded = false;
  #closed = false;
  /** The send window (may go negative after a SETTINGS shrinks it). */
  sendWindow: number;
  /** Data waiting for window. */
  readonly pending: { data: Buffer; fin: boolean; sent?: () => void }[] = [];

  constructor(readonly session: SpdyConnection, readonly id: number, headers: HeaderList, initialWindow: number) {
    super();
    this.headers = new Map(headers);
    this.sendWindow = initialWindow;
  }

  header(name: string): string | undefined {
    return this.headers.get(name.toLowerCase());
  }

  get closed(): boolean {
    return this.#closed;
  }

  get localEnded(): boolean {
    return this.#localEnded;
  }

  /** SYN_REPLY (the server's acceptance of a stream the peer opened). */
  reply(headers: HeaderList = []): void {
    this.session.send(() => synReplyFrame(this.session.compressor, this.id, headers));
  }

  /** Queues `data` in DATA frames; `sent` runs once it is handed to the socket. */
  write(data: Buffer, sent?: () => void): void {
    if (this.#localEnded || this.#closed) return sent?.();
    this.pending.push({ data, fin: false, ...(sent ? { sent } : {}) });
    this.session.flush(this);
  }

  /** Half-closes this side (a DATA frame with FIN after what is queued). */
  end(): void {
    if (this.#localEnded || this.#closed) return;
    this.#localEnded = true;
    this.pending.push({ data: Buffer.alloc(0), fin: true });
    this.session.flush(this);
  }

  /** RST_STREAM: both halves end now. */
  reset(status: number = RstStatus.Cancel): void {
    if (this.#closed) return;
    this.session.send(rstStreamFrame(this.id, status));
    this.closeNow();
  }

  /** Called by the session. */
  remoteEnd(): void {
    if (this.#remoteEnded) return;
    this.#remoteEnded = true;
    this.emit("end");
    this.#maybeClose();
  }

  /** Called by the session once the FIN frame left. */
  finSent(): void {
    this.#maybeClose();
  }

  closeNow(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const p of this.pending.splice(0)) p.sent?.();
    if (!this.#remoteEnded) {
      this.#remoteEnded = true;
      this.emit("end");
    }
    this.session.forget(this);
    this.emit("close");
  }

  #maybeClose(): void {
    if (this.#remoteEnded && this.#localEnded && this.pending.length === 0) this.closeNow();
  }
}

export interface SpdyConnectionOptions {
  /** A stream the peer opened; the handler replies (stream.reply()) or resets it. */
  onStream?: (stream: SpdyStream) => void;
  /** Whether this end is the client (opens odd streams; the peer's are even). */
  client?: boolean;
  log?: (line: string) => void;
}

export interface SpdyConnectionEvents {
  /** The session ended (GOAWAY either way, or the socket closed). */
  close: [];
}

export class SpdyConnection extends EventEmitter<SpdyConnectionEvents> {
  readonly compressor = new HeaderCompressor();
  readonly #decompressor = new HeaderDecompressor();
  readonly #reader = new FrameReader();
  /** Frames in, and frames out, each handled in order (header blocks are inflated and deflated asynchronously). */
  #inbound: Promise<void> = Promise.resolve();
  #outbound: Promise<void> = Promise.resolve();
  readonly #streams = new Map<number, SpdyStream>();
  readonly #socket: Duplex;
  readonly #o: SpdyConnectionOptions;
  /** The last stream id the peer opened (GOAWAY's last-good id). */
  #lastPeerId = 0;
  #nextOwnId: number;
  #peerFlowControl = false;
  #initialWindow = INITIAL_WINDOW;
  #connectionWindow = INITIAL_WINDOW;
  #goneAway = false;
  #closed = false;

  constructor(socket: Duplex, options: SpdyConnectionOptions = {}) {
    super();
    this.#socket = socket;
    this.#o = options;
    this.#nextOwnId = options.client ? 1 : 2;
    socket.on("data", (chunk: Buffer) => this.feed(chunk));
    socket.on("error", () => this.#end());
    socket.on("close", () => this.#end());
    socket.on("end", () => this.#end());
    socket.on("drain", () => this.#flushAll());
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Bytes written and not yet taken by the peer's socket, plus those held for window. */
  get buffered(): number {
    let held = 0;
    for (const s of this.#streams.values()) for (const p of s.pending) held += p.data.length;
    return this.#socket.writableLength + held;
  }

  /** Opens a stream from this end (SYN_STREAM); the peer's SYN_REPLY is not awaited. */
  open(headers: HeaderList, fin = false): SpdyStream {
    const id = this.#nextOwnId;
    this.#nextOwnId += 2;
    const stream = new SpdyStream(this, id, headers, this.#initialWindow);
    this.#streams.set(id, stream);
    this.send(() => synStreamFrame(this.compressor, id, headers, fin ? FLAG_FIN : 0));
    if (fin) stream.end();
    return stream;
  }

  /** Writes a frame after those sent before it (a function: one whose header block is still to be compressed). */
  send(frame: Buffer | (() => Promise<Buffer>), sent?: () => void): void {
    if (this.#closed) return sent?.();
    const write = (bytes: Buffer) => {
      if (this.#socket.destroyed || this.#socket.writableEnded) return sent?.();
      this.#socket.write(bytes, () => sent?.());
    };
    if (typeof frame !== "function") {
      this.#outbound = this.#outbound.then(() => write(frame));
      return;
    }
    this.#outbound = this.#outbound.then(async () => {
      write(await frame());
    }).catch(() => this.#end());
  }

  /** GOAWAY with `status`, then the socket ends once what is queued has left. */
  goAway(status: number = GoAwayStatus.Ok): void {
    if (!this.#goneAway) {
      this.#goneAway = true;
      this.send(goAwayFrame(this.#lastPeerId, status));
    }
    this.#end(true);
  }

  /** Writes what a stream may send now. */
  flush(stream: SpdyStream): void {
    while (stream.pending.length > 0 && !this.#closed) {
      const next = stream.pending[0]!;
      let room = next.data.length;
      if (this.#peerFlowControl) room = Math.min(room, stream.sendWindow, this.#connectionWindow);
      if (next.data.length > 0 && room <= 0) return; // wait for WINDOW_UPDATE
      const n = Math.min(room, MAX_SEND_FRAME);
      const chunk = next.data.subarray(0, n);
      const last = n === next.data.length;
      stream.sendWindow -= n;
      this.#connectionWindow -= n;
      if (last) stream.pending.shift();
      else next.data = next.data.subarray(n);
      const fin = last && next.fin;
      this.send(dataFrame(stream.id, chunk, fin), last ? next.sent : undefined);
      if (fin) stream.finSent();
    }
  }

  forget(stream: SpdyStream): void {
    this.#streams.delete(stream.id);
  }

  #flushAll(): void {
    for (const s of [...this.#streams.values()]) this.flush(s);
  }

  /** Bytes from the peer (the socket's are fed in; a caller adds those read before the session began). */
  feed(chunk: Buffer): void {
    if (this.#closed) return;
    let frames: Frame[];
    try {
      frames = this.#reader.push(chunk);
    } catch (err) {
      if (!(err instanceof SpdyProtocolError)) throw err;
      this.#o.log?.(`spdy: ${err.message}; closing the connection`);
      return this.goAway(GoAwayStatus.ProtocolError);
    }
    for (const f of frames) {
      this.#inbound = this.#inbound.then(async () => {
        if (this.#closed) return;
        try {
          await this.#frame(f);
        } catch (err) {
          if (!(err instanceof SpdyProtocolError)) throw err;
          this.#o.log?.(`spdy: ${err.message}; closing the connection`);
          this.goAway(GoAwayStatus.ProtocolError);
        }
      }).catch(() => this.#end());
    }
  }

  async #frame(f: Frame): Promise<void> {
    switch (f.type) {
      case "syn_stream": {
        const headers = await this.#decompressor.decompress(f.block);
        const peerOdd = !this.#o.client;
        if (f.streamId === 0 || (f.streamId % 2 === 1) !== peerOdd || f.streamId <= this.#lastPeerId) {
          this.send(rstStreamFrame(f.streamId, RstStatus.ProtocolError));
          return;
        }
        this.#lastPeerId = f.streamId;
        if (this.#goneAway) return this.send(rstStreamFrame(f.streamId, RstStatus.RefusedStream));
        const stream = new SpdyStream(this, f.streamId, headers, this.#initialWindow);
        this.#streams.set(f.streamId, stream);
        if (this.#o.onStream === undefined) stream.reset(RstStatus.RefusedStream);
        else this.#o.onStream(stream);
        if ((f.flags & FLAG_FIN) !== 0) stream.remoteEnd();
        return;
      }
      case "syn_reply":
      case "headers": {
        await this.#decompressor.decompress(f.block);
        const stream = this.#streams.get(f.streamId);
        if (stream !== undefined && f.type === "syn_reply") stream.emit("reply");
        if (stream !== undefined && (f.flags & FLAG_FIN) !== 0) stream.remoteEnd();
        return;
      }
      case "data": {
        if (f.streamId === 0) return this.goAway(GoAwayStatus.ProtocolError);
        const stream = this.#streams.get(f.streamId);
        if (stream === undefined) return this.send(rstStreamFrame(f.streamId, RstStatus.InvalidStream));
        if (f.data.length > 0) {
          stream.emit("data", f.data);
          // Handed on: the peer may send as much again (connection and stream).
          this.send(windowUpdateFrame(0, f.data.length));
          if ((f.flags & FLAG_FIN) === 0) this.send(windowUpdateFrame(f.streamId, f.data.length));
        }
        if ((f.flags & FLAG_FIN) !== 0) stream.remoteEnd();
        return;
      }
      case "rst_stream":
        this.#streams.get(f.streamId)?.closeNow();
        return;
      case "settings":
        for (const e of f.entries) {
          if (e.id !== SETTINGS_INITIAL_WINDOW_SIZE) continue;
          const change = e.value - this.#initialWindow;
          this.#initialWindow = e.value;
          this.#peerFlowControl = true;
          for (const s of this.#streams.values()) s.sendWindow += change;
        }
        this.#flushAll();
        return;
      case "ping":
        // Ours are odd from a client, even from a server: echo only the peer's.
        if ((f.id % 2 === 1) !== !!this.#o.client) this.send(pingFrame(f.id));
        return;
      case "goaway":
        this.#goneAway = true;
        this.#end(true);
        return;
      case "window_update": {
        if (f.delta === 0) return this.goAway(GoAwayStatus.ProtocolError);
        this.#peerFlowControl = true;
        if (f.streamId === 0) {
          this.#connectionWindow += f.delta;
          this.#flushAll();
        } else {
          const stream = this.#streams.get(f.streamId);
          if (stream === undefined) return;
          stream.sendWindow += f.delta;
          this.flush(stream);
        }
        return;
      }
    }
  }

  /** The session is over: every stream closes; `graceful` lets queued bytes leave before the socket ends. */
  #end(graceful = false): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const s of [...this.#streams.values()]) s.closeNow();
    if (graceful) void this.#outbound.then(() => this.#socket.end());
    else this.#socket.destroy();
    void this.#outbound.then(() => {
      this.compressor.close();
      this.#decompressor.close();
    });
    this.emit("close");
  }
}
