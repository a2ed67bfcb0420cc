// The two ways a client reaches exec's and attach's streams, behind one
// interface so the command's side (container-exec.ts, container-attach.ts) is
// written once: a WebSocket speaking channel.k8s.io (a channel byte in front
// of every message; kubectl 1.30+) or a SPDY/3.1 session (kubectl ≤ 1.29,
// client-go's SPDY executor, upstream's e2e.test) where each channel is a
// stream the client opens with a `streamtype` header (error, stdin, stdout,
// stderr, resize) and the status goes on the error stream.

import { EventEmitter } from "node:events";
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";
import { Channel, endStream, frame, parseResize } from "./channel-protocol.js";
import type { SpdyConnection, SpdyStream } from "./spdy/connection.js";
import { RstStatus } from "./spdy/frames.js";
import { acceptSpdy } from "./spdy/upgrade.js";

export interface TerminalSize {
  width: number;
  height: number;
}

export interface ChannelTransportEvents {
  stdin: [Buffer];
  /** The client closed its stdin. */
  stdinEnd: [];
  resize: [TerminalSize];
  /** The client went away (or the transport ended). */
  close: [];
}

export abstract class ChannelTransport extends EventEmitter<ChannelTransportEvents> {
  /** The negotiated stream protocol (v5.channel.k8s.io … channel.k8s.io). */
  abstract readonly protocol: string;
  /** Bytes queued towards the client. */
  abstract readonly buffered: number;
  /** Whether the client is still there. */
  abstract readonly open: boolean;
  /** Output on stdout or stderr; `sent` once it has left. */
  abstract send(channel: Channel.Stdout | Channel.Stderr, data: Buffer, sent?: () => void): void;
  /** The end: the status (v4 and later as JSON, older ones only a failure's message), then the close. */
  abstract end(status: object): void;
}

/** channel.k8s.io over a WebSocket. Upstream announces the streams with an empty message on `first`. */
export class WebSocketTransport extends ChannelTransport {
  readonly #ws: WebSocket;
  readonly protocol: string;

  constructor(ws: WebSocket, first: Channel) {
    super();
    this.#ws = ws;
    this.protocol = ws.protocol;
    const v5 = this.protocol === "v5.channel.k8s.io";
    ws.send(frame(first));
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (!isBinary || data.length === 0) return;
      const payload = data.subarray(1);
      switch (data[0]) {
        case Channel.Stdin:
          this.emit("stdin", payload);
          break;
        case Channel.Resize: {
          const size = parseResize(payload);
          if (size !== undefined) this.emit("resize", size);
          break;
        }
        case Channel.Close:
          if (v5 && payload[0] === Channel.Stdin) this.emit("stdinEnd");
          break;
      }
    });
    ws.on("close", () => this.emit("close"));
    ws.on("error", () => {});
  }

  get buffered(): number {
    return this.#ws.bufferedAmount;
  }

  get open(): boolean {
    return this.#ws.readyState === this.#ws.OPEN;
  }

  send(channel: Channel.Stdout | Channel.Stderr, data: Buffer, sent?: () => void): void {
    this.#ws.send(frame(channel, data), () => sent?.());
  }

  end(status: object): void {
    endStream(this.#ws, this.protocol, status);
  }

  terminate(): void {
    this.#ws.terminate();
  }
}

/** How long a SPDY client has to open the streams it asked for (upstream's streamCreationTimeout default). */
export const STREAM_CREATION_TIMEOUT_MS = 30_000;

const STREAM_TYPES = ["error", "stdin", "stdout", "stderr", "resize"] as const;
type StreamType = (typeof STREAM_TYPES)[number];

/** channel.k8s.io's streams over a SPDY session. */
export class SpdyTransport extends ChannelTransport {
  readonly #session: SpdyConnection;
  readonly #streams: Partial<Record<StreamType, SpdyStream>>;
  readonly protocol: string;

  private constructor(session: SpdyConnection, protocol: string, streams: Partial<Record<StreamType, SpdyStream>>) {
    super();
    this.#session = session;
    this.protocol = protocol;
    this.#streams = streams;
    streams.stdin?.on("data", (d) => this.emit("stdin", d));
    streams.stdin?.on("end", () => this.emit("stdinEnd"));
    const resize = streams.resize;
    if (resize !== undefined) {
      // A JSON document per size, one after another (client-go's json.Encoder: newline-terminated).
      let pending = "";
      resize.on("data", (d) => {
        pending += d.toString("utf8");
        if (pending.length > 64 * 1024) return resize.reset(RstStatus.FlowControlError);
        let nl: number;
        while ((nl = pending.indexOf("\n")) >= 0) {
          const size = parseResize(Buffer.from(pending.slice(0, nl)));
          pending = pending.slice(nl + 1);
          if (size !== undefined) this.emit("resize", size);
        }
      });
    }
    session.on("close", () => this.emit("close"));
  }

  /**
   * Waits for the streams `options` call for (error, and stdin, stdout, stderr
   * as asked, resize with a TTY on v3 and later), replying to each as it
   * comes; undefined (the session closed) when they do not all come in time.
   */
  static accept(socket: Duplex, head: Buffer, protocol: string, options: { stdin: boolean; stdout: boolean; stderr: boolean; tty: boolean }, timeoutMs = STREAM_CREATION_TIMEOUT_MS): Promise<SpdyTransport | undefined> {
    const resizable = protocol === "v4.channel.k8s.io" || protocol === "v3.channel.k8s.io";
    const expected = 1 + Number(options.stdin) + Number(options.stdout) + Number(options.stderr) + Number(options.tty && resizable);
    const streams: Partial<Record<StreamType, SpdyStream>> = {};
    return new Promise((resolve) => {
      let received = 0;
      let done = false;
      let timer: NodeJS.Timeout | undefined;
      const session = acceptSpdy(socket, head, protocol, {
        onStream: (stream) => {
          const type = stream.header("streamtype") as StreamType | undefined;
          if (done || type === undefined || !STREAM_TYPES.includes(type) || streams[type] !== undefined) return stream.reset(RstStatus.RefusedStream);
          stream.reply();
          streams[type] = stream;
          if (++received === expected) {
            done = true;
            clearTimeout(timer);
            resolve(new SpdyTransport(session, protocol, streams));
          }
        },
      });
      if (!done) timer = setTimeout(() => session.goAway(), timeoutMs);
      session.once("close", () => {
        clearTimeout(timer);
        if (!done) resolve(undefined);
        done = true;
      });
    });
  }

  get buffered(): number {
    return this.#session.buffered;
  }

  get open(): boolean {
    return !this.#session.closed;
  }

  send(channel: Channel.Stdout | Channel.Stderr, data: Buffer, sent?: () => void): void {
    const stream = channel === Channel.Stdout ? this.#streams.stdout : this.#streams.stderr;
    if (stream === undefined) return sent?.();
    stream.write(data, sent);
  }

  end(status: object): void {
    if (this.#session.closed) return;
    const error = this.#streams.error;
    const failed = (status as { status?: string }).status !== "Success";
    if (error !== undefined) {
      if (this.protocol === "v4.channel.k8s.io") error.write(Buffer.from(JSON.stringify(status)));
      else if (failed) error.write(Buffer.from((status as { message?: string }).message ?? "error"));
    }
    for (const s of Object.values(this.#streams)) s.end();
    this.#session.goAway();
  }
}
