// Interactive attach on a CRI runtime with a streaming server (containerd):
// the runtime's `Attach` answers a URL on its streaming server (upstream's
// remotecommand protocols), and the agent carries the client's session to it,
// whatever transport the client came in on (WebSocket or SPDY, ./channel-transport.ts).
// Towards the runtime the agent is a SPDY/3.1 client speaking
// v4.channel.k8s.io (../exec/spdy/connection.ts in client mode): of the
// protocols containerd 1.6's server speaks, only SPDY can half-close stdin
// (its WebSocket protocols end at v4, which has no close of one stream), and
// a half-closed stdin is what makes the runtime end a `stdinOnce`
// container's input, as upstream's kubelet's proxy does.
//
// Client → runtime: stdin (its end as a FIN), terminal sizes (the resize
// stream, one JSON document per line). Input waits until the runtime has
// accepted every stream and a moment more (STDIN_SETTLE_MS): containerd starts
// copying an attach's stdin before it subscribes the attach to the
// container's output, so an answer to input that was already waiting could
// be broadcast before the attach hears it (the embedded runtime's path waits
// for the output in the same way, container-attach.ts). Runtime → client: stdout and stderr as
// they come (the runtime's socket paused while the client has more than
// HIGH_WATER queued), and the runtime's status from its error stream at the
// end (empty: Success). Either side going away ends the other.

import { connect as connectTcp, type Socket } from "node:net";
import { Channel, internalErrorStatus } from "./channel-protocol.js";
import type { ChannelTransport } from "./channel-transport.js";
import { SpdyConnection, type SpdyStream } from "./spdy/connection.js";
import { HIGH_WATER, SPDY_CHANNEL_PROTOCOLS, type StreamOptions } from "./stream-request.js";

/** Why the runtime's streaming server could not be reached (before the client's upgrade is answered). */
export class StreamingServerError extends Error {}

/** After the runtime's status, how long its output streams may take to end before the answer goes anyway. */
const OUTPUT_GRACE_MS = 2000;

/** An upgraded SPDY session to a streaming URL, with the protocol it settled on. */
export interface StreamingSession {
  readonly session: SpdyConnection;
  readonly socket: Socket;
  readonly protocol: string;
}

const UPGRADE_TIMEOUT_MS = 10_000;
/** How long input waits after the runtime accepted the streams (see above). */
export const STDIN_SETTLE_MS = 100;

/**
 * Connects to `url` (http only: containerd serves its streaming server
 * without TLS unless told otherwise) and asks for a SPDY/3.1 upgrade offering
 * upstream's channel protocols; resolves with the session once the server
 * switched protocols.
 */
export function dialStreamingServer(url: string): Promise<StreamingSession> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.reject(new StreamingServerError(`the runtime's streaming URL ${JSON.stringify(url)} does not parse`));
  }
  if (target.protocol !== "http:") return Promise.reject(new StreamingServerError(`the runtime's streaming URL ${url} is not http (a TLS streaming server is not supported)`));
  const socket = connectTcp({ host: target.hostname.replace(/^\[|\]$/g, ""), port: Number(target.port || 80) });
  const head = [
    `POST ${target.pathname}${target.search} HTTP/1.1`,
    `Host: ${target.host}`,
    "Connection: Upgrade",
    "Upgrade: SPDY/3.1",
    ...SPDY_CHANNEL_PROTOCOLS.map((p) => `X-Stream-Protocol-Version: ${p}`),
    "Content-Length: 0",
    "",
    "",
  ].join("\r\n");
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const fail = (why: string) => {
      socket.destroy();
      reject(new StreamingServerError(`error attaching through the runtime's streaming server: ${why}`));
    };
    const timer = setTimeout(() => fail("no answer to the upgrade"), UPGRADE_TIMEOUT_MS);
    socket.once("error", (err) => {
      clearTimeout(timer);
      fail(err.message);
    });
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) {
        if (buf.length > 64 * 1024) fail("an answer head larger than 64 KiB");
        return;
      }
      clearTimeout(timer);
      socket.off("data", onData);
      const lines = buf.subarray(0, end).toString("latin1").split("\r\n");
      const status = lines[0] ?? "";
      if (!/^HTTP\/1\.[01] 101 /.test(status)) {
        const body = buf.subarray(end + 4).toString("utf8").trim();
        return fail(`${status.replace(/^HTTP\/1\.[01] /, "")}${body !== "" ? `: ${body}` : ""}`);
      }
      const protocol = lines.find((l) => /^x-stream-protocol-version:/i.test(l))?.replace(/^[^:]*:\s*/, "") ?? "";
      socket.removeAllListeners("error");
      const session = new SpdyConnection(socket, { client: true });
      const rest = buf.subarray(end + 4);
      if (rest.length > 0) session.feed(rest);
      resolve({ session, socket, protocol });
    };
    socket.on("data", onData);
    socket.write(head);
  });
}

/**
 * Carries the client's session `t` to the runtime's streaming session `s` as
 * the streams `o` asks for, until either ends.
 */
export function relayAttach(t: ChannelTransport, s: StreamingSession, o: StreamOptions): void {
  const { session, socket } = s;
  const resizable = s.protocol === "v4.channel.k8s.io" || s.protocol === "v3.channel.k8s.io";
  const open = (type: string): SpdyStream => session.open([["streamtype", type]]);
  // The error stream first, as client-go opens them.
  const error = open("error");
  const stdin = o.stdin ? open("stdin") : undefined;
  const stdout = o.stdout ? open("stdout") : undefined;
  const stderr = o.stderr && !o.tty ? open("stderr") : undefined;
  const resize = o.tty && resizable ? open("resize") : undefined;

  if (stdin !== undefined) {
    // Held (in order, the end too) until the runtime has taken every stream, then STDIN_SETTLE_MS.
    let held: (Buffer | null)[] | undefined = [];
    const put = (data: Buffer | null) => (data === null ? stdin.end() : stdin.write(data));
    t.on("stdin", (data) => (held !== undefined ? held.push(data) : put(data)));
    t.on("stdinEnd", () => (held !== undefined ? held.push(null) : put(null)));
    const opened = [error, stdin, stdout, stderr, resize].filter((x) => x !== undefined);
    let waiting = opened.length;
    const release = () => {
      const queue = held ?? [];
      held = undefined;
      for (const d of queue) put(d);
    };
    for (const st of opened) st.once("reply", () => {
      if (--waiting === 0) setTimeout(release, STDIN_SETTLE_MS).unref();
    });
    // A runtime that never replies gets the input anyway.
    setTimeout(release, 20 * STDIN_SETTLE_MS).unref();
  }
  if (resize !== undefined) t.on("resize", (size) => resize.write(Buffer.from(`${JSON.stringify({ Width: size.width, Height: size.height })}\n`)));

  // Output, with the runtime's socket as the brake while the client lags.
  const forward = (channel: Channel.Stdout | Channel.Stderr) => (chunk: Buffer) => {
    t.send(channel, chunk, () => {
      if (t.buffered < HIGH_WATER && socket.isPaused()) socket.resume();
    });
    if (t.buffered >= HIGH_WATER) socket.pause();
  };
  stdout?.on("data", forward(Channel.Stdout));
  stderr?.on("data", forward(Channel.Stderr));

  const statusChunks: Buffer[] = [];
  error.on("data", (d) => statusChunks.push(d));
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    const text = Buffer.concat(statusChunks).toString("utf8").trim();
    t.end(runtimeStatus(text, s.protocol));
    session.goAway();
    socket.end();
  };
  // The status is whole once the error stream ends; the output streams may still carry the container's last
  // words (the runtime ends each from its own copier), so the answer waits for them too, as client-go waits for
  // its output copies before reading the status. A stream that never ends is given OUTPUT_GRACE_MS.
  const ending = [error, stdout, stderr].filter((x) => x !== undefined);
  let unended = ending.length;
  for (const st of ending) st.once("end", () => --unended === 0 && finish());
  error.once("end", () => setTimeout(finish, OUTPUT_GRACE_MS).unref());
  session.once("close", finish);
  t.on("close", () => {
    finished = true;
    session.goAway();
    socket.destroy();
  });
}

/** The runtime's status as the client is to get it: v4's JSON as is; older protocols' text as a failure's message; nothing is Success. */
export function runtimeStatus(text: string, protocol: string): object {
  if (text === "") return { metadata: {}, status: "Success" };
  if (protocol === "v4.channel.k8s.io") {
    try {
      const v = JSON.parse(text) as { status?: unknown };
      if (typeof v === "object" && v !== null && typeof v.status === "string") return v;
    } catch {
      // a text, below
    }
  }
  return internalErrorStatus(`error attaching to container: ${text}`);
}
