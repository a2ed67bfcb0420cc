// The node agent's `/portForward/{namespace}/{pod}` on its port (upstream
// kubelet's path; seed 001, "Streams"): `kubectl port-forward` through the
// API server. The connection becomes a SPDY/3.1 session speaking
// `portforward.k8s.io`, either upgraded directly (X-Stream-Protocol-Version,
// kubectl ≤ 1.30 and the fallback of later ones) or tunnelled in the binary
// messages of a WebSocket whose subprotocol is `SPDY/3.1+portforward.k8s.io`
// (kubectl 1.31+, PortForwardWebsockets).
//
// For each local connection kubectl opens two streams with the same
// `requestID` header: `streamType: error` and `streamType: data`, both with
// the `port`. Once a request has both, the agent connects to localhost:PORT
// inside the pod's network namespace, as upstream's runtimes do (containerd:
// 127.0.0.1, then ::1), so a server listening only on the pod's loopback is
// reached too: the namespace comes from the runtime's verbose
// PodSandboxStatus (the embedded runtime's `netns`, containerd's runtime spec
// or sandbox pid), and a helper process inside it makes the connection and
// hands over the socket (./netns-dialer.ts); a hostNetwork pod is dialled on
// the host's loopback. The data stream and that connection are spliced both
// ways, half-closes passed on (a FIN from kubectl ends our writing half, the
// pod's end ends the stream's). A failure is written on the error stream in
// upstream's words (`error forwarding port P to pod SANDBOX, uid : failed to
// execute portforward in network namespace …`, as containerd's streaming
// server says it), then both streams end. A stream with a missing or bad
// `port` or `streamType` is reset, as upstream refuses it.

import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { createWebSocketStream, WebSocketServer } from "ws";
import type { Pod, PodStatus } from "../../api/core/types.js";
import type { CriClient } from "../cri/index.js";
import { dialLoopback, loopbackFailureText } from "./loopback-dial.js";
import { NetnsDialer, NetnsDialError } from "./netns-dialer.js";
import { SpdyConnection, type SpdyStream } from "./spdy/connection.js";
import { acceptSpdy, isSpdyUpgrade, negotiateStreamProtocol, refuseHandshake, SpdyHandshakeError } from "./spdy/upgrade.js";
import { HIGH_WATER, Refusal, refuse } from "./stream-request.js";

export const PORT_FORWARD_PATH = "/portForward/";
export const PORT_FORWARD_PROTOCOL = "portforward.k8s.io";
/** The WebSocket subprotocol kubectl 1.31+ tunnels the SPDY session in. */
export const PORT_FORWARD_TUNNEL_PROTOCOL = `SPDY/3.1+${PORT_FORWARD_PROTOCOL}`;
/** How long the second stream of a request may take (upstream's streamCreationTimeout default). */
const STREAM_CREATION_TIMEOUT_MS = 30_000;

/** Why a stream is refused (upstream's httpStreamReceived), or undefined when its headers are good. */
export function streamHeaderError(stream: Pick<SpdyStream, "header">): string | undefined {
  const port = stream.header("port");
  if (port === undefined || port === "") return `"port" header is required`;
  if (!/^\d+$/.test(port) || Number(port) > 65535) return `unable to parse "${port}" as a port: strconv.ParseUint: parsing "${port}": ${/^\d+$/.test(port) ? "value out of range" : "invalid syntax"}`;
  if (Number(port) < 1) return `port "${port}" must be > 0`;
  const type = stream.header("streamType");
  if (type === undefined || type === "") return `"streamType" header is required`;
  if (type !== "error" && type !== "data") return `invalid stream type "${type}"`;
  return undefined;
}

export interface StreamPair {
  readonly requestId: string;
  error?: SpdyStream;
  data?: SpdyStream;
}

/**
 * Joins each request's error and data streams (upstream's httpStreamHandler):
 * by the `requestID` header, or for clients without it by the stream ids
 * (error N, data N+2). A complete pair goes to `forward`; a request whose
 * second stream does not come in time is told so on what it has.
 */
export class StreamPairs {
  readonly #pairs = new Map<string, { pair: StreamPair; timer: NodeJS.Timeout }>();

  constructor(private readonly forward: (pair: Required<StreamPair>) => void, private readonly timeoutMs = STREAM_CREATION_TIMEOUT_MS) {}

  get waiting(): number {
    return this.#pairs.size;
  }

  /** Takes a stream whose headers passed streamHeaderError. */
  add(stream: SpdyStream): void {
    const type = stream.header("streamType") as "error" | "data";
    let id = stream.header("requestID") ?? "";
    if (id === "") id = String(type === "error" ? stream.id : stream.id - 2);
    let entry = this.#pairs.get(id);
    if (entry === undefined) {
      const pair: StreamPair = { requestId: id };
      const timer = setTimeout(() => {
        this.#pairs.delete(id);
        printError(pair, `(conn=${stream.session.constructor.name}, request=${id}) timed out waiting for streams`);
        pair.error?.end();
        pair.data?.end();
      }, this.timeoutMs);
      timer.unref();
      entry = { pair, timer };
      this.#pairs.set(id, entry);
    }
    const { pair, timer } = entry;
    if (pair[type] !== undefined) {
      printError(pair, `error processing stream for request ${id}: ${type} stream already assigned`);
      stream.reset();
      return;
    }
    pair[type] = stream;
    if (pair.error !== undefined && pair.data !== undefined) {
      clearTimeout(timer);
      this.#pairs.delete(id);
      this.forward(pair as Required<StreamPair>);
    }
  }

  /** The session ended: nothing is waited for any more. */
  clear(): void {
    for (const { timer } of this.#pairs.values()) clearTimeout(timer);
    this.#pairs.clear();
  }
}

function printError(pair: StreamPair, message: string): void {
  pair.error?.write(Buffer.from(message));
}

export interface PortForwardOptions {
  /** The pods the agent runs, with their latest status. */
  readonly pods: () => readonly { pod: Pod; status: PodStatus }[];
  readonly runtime: Pick<CriClient, "listPodSandbox" | "podSandboxStatus">;
  readonly log?: (line: string) => void;
  /** Makes the connections inside pods' network namespaces (one is made when not given). */
  readonly dialer?: NetnsDialer;
}

/** A pod's sandbox as port-forward needs it: its id (upstream's message names the pod so) and its network namespace's path. */
interface SandboxTarget {
  readonly id: string;
  /** "host" for a hostNetwork pod; undefined when the runtime names none (no ready sandbox). */
  readonly netns: string | undefined;
}

export class PortForward {
  readonly #o: PortForwardOptions;
  // The subprotocol has a "/", which `ws` refuses as a token: the agent checks it (#target) and names it in the answer itself.
  readonly #wss = new WebSocketServer({ noServer: true, perMessageDeflate: false }).on("headers", (headers) => headers.push(`Sec-WebSocket-Protocol: ${PORT_FORWARD_TUNNEL_PROTOCOL}`));
  readonly #sessions = new Set<SpdyConnection>();
  readonly #dialer: NetnsDialer;

  constructor(options: PortForwardOptions) {
    this.#o = options;
    this.#dialer = options.dialer ?? new NetnsDialer();
  }

  /** Answers one upgrade request under PORT_FORWARD_PATH. */
  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    let target: { pod: Pod; status: PodStatus };
    try {
      target = this.#target(url, req);
    } catch (err) {
      return refuse(socket, err);
    }
    const sandbox = await this.#sandbox(target.pod);
    // Its first connection need not wait for the namespace helper to start.
    if (sandbox.netns !== undefined && sandbox.netns !== "host") this.#dialer.warm(sandbox.netns);
    const onStream = (stream: SpdyStream) => this.#stream(stream, pairs);
    const pairs = new StreamPairs((pair) => this.#forward(pair, sandbox));
    let session: SpdyConnection;
    if (isSpdyUpgrade(req)) {
      try {
        negotiateStreamProtocol(req, [PORT_FORWARD_PROTOCOL]);
      } catch (err) {
        if (!(err instanceof SpdyHandshakeError)) throw err;
        return refuseHandshake(socket, err);
      }
      session = acceptSpdy(socket, head, PORT_FORWARD_PROTOCOL, { onStream, log: this.#o.log });
    } else {
      delete req.headers["sec-websocket-protocol"];
      const ws = await new Promise<import("ws").WebSocket>((resolve) => this.#wss.handleUpgrade(req, socket, head, resolve));
      const bytes = createWebSocketStream(ws);
      bytes.on("error", () => bytes.destroy());
      session = new SpdyConnection(bytes, { onStream, log: this.#o.log });
    }
    this.#sessions.add(session);
    session.once("close", () => {
      this.#sessions.delete(session);
      pairs.clear();
    });
  }

  /** Ends every session (the agent stops). */
  close(): void {
    for (const s of this.#sessions) s.goAway();
    this.#wss.close();
    if (this.#o.dialer === undefined) this.#dialer.close();
  }

  #target(url: URL, req: IncomingMessage): { pod: Pod; status: PodStatus } {
    const [namespace = "", name = ""] = url.pathname.slice(PORT_FORWARD_PATH.length).split("/").map(decodeURIComponent);
    const entry = this.#o.pods().find((p) => p.pod.metadata.namespace === namespace && p.pod.metadata.name === name);
    if (entry === undefined) throw new Refusal(404, "pod does not exist");
    const websocket = String(req.headers.upgrade ?? "").toLowerCase() === "websocket";
    if (websocket) {
      const offered = String(req.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim());
      if (!offered.includes(PORT_FORWARD_TUNNEL_PROTOCOL)) {
        throw new Refusal(400, `unable to upgrade: the WebSocket subprotocol ${PORT_FORWARD_TUNNEL_PROTOCOL} is required (offered: ${offered.filter((p) => p !== "").join(", ") || "none"})`);
      }
    } else if (!isSpdyUpgrade(req)) {
      throw new Refusal(400, "unable to upgrade: missing upgrade headers in request (Connection: Upgrade with Upgrade: SPDY/3.1 or websocket)");
    }
    return entry;
  }

  /** The pod's ready sandbox and its network namespace, from the runtime; the pod's name as id when there is none. */
  async #sandbox(pod: Pod): Promise<SandboxTarget> {
    const host = pod.spec?.hostNetwork === true;
    try {
      const { items } = await this.#o.runtime.listPodSandbox({ filter: { state: { state: "SANDBOX_READY" } } });
      const found = items.find((s) => s.metadata?.uid === pod.metadata.uid);
      if (found !== undefined) {
        if (host) return { id: found.id, netns: "host" };
        const status = await this.#o.runtime.podSandboxStatus({ podSandboxId: found.id, verbose: true });
        return { id: found.id, netns: sandboxNetns(status.info?.info) };
      }
    } catch {
      // named below
    }
    return { id: `${pod.metadata.namespace}/${pod.metadata.name}`, netns: host ? "host" : undefined };
  }

  #stream(stream: SpdyStream, pairs: StreamPairs): void {
    const problem = streamHeaderError(stream);
    if (problem !== undefined) {
      this.#o.log?.(`nodeagent: port-forward stream rejected: ${problem}`);
      stream.reset();
      return;
    }
    stream.reply();
    pairs.add(stream);
  }

  #forward({ error, data }: Required<StreamPair>, sandbox: SandboxTarget): void {
    const port = Number(data.header("port"));
    const fail = (reason: string) => {
      error.write(Buffer.from(`error forwarding port ${port} to pod ${sandbox.id}, uid : ${reason}`));
      error.end();
      data.end();
    };
    const netns = sandbox.netns;
    if (netns === undefined) return fail(`network namespace for sandbox ${JSON.stringify(sandbox.id)} is closed`);
    // What kubectl sends before the connection is up waits here.
    const early: Buffer[] = [];
    let clientEnded = false;
    const onEarly = (chunk: Buffer) => early.push(chunk);
    const onEarlyEnd = () => (clientEnded = true);
    data.on("data", onEarly);
    data.once("end", onEarlyEnd);
    const connected = (tcp: Socket) => {
      data.off("data", onEarly);
      data.off("end", onEarlyEnd);
      if (data.closed) return void tcp.destroy();
      tcp.setNoDelay(true);
      tcp.on("error", () => tcp.destroy());
      splice(data, tcp, early, clientEnded);
      // The forward is over once the pod's connection is: the error stream ends empty (success).
      tcp.once("close", () => {
        error.end();
        data.end();
      });
    };
    const failed = (err: unknown) => {
      data.off("data", onEarly);
      const f = err instanceof NetnsDialError ? err.failure : undefined;
      fail(f !== undefined ? loopbackFailureText(netns, sandbox.id, port, f) : `failed to execute portforward in network namespace ${JSON.stringify(netns)}: ${(err as Error).message}`);
    };
    const dial = netns === "host" ? dialLoopback(port).then((r) => ("v4" in r ? Promise.reject(new NetnsDialError("nothing listens", r)) : r)) : this.#dialer.dial(netns, port);
    dial.then(connected, failed);
  }
}

/**
 * The network namespace a verbose PodSandboxStatus's info names: the embedded
 * runtime's `netns` ("" for the host's), containerd's runtime spec's network
 * namespace path, else its sandbox process's `/proc/PID/ns/net`.
 */
export function sandboxNetns(info: string | undefined): string | undefined {
  if (info === undefined) return undefined;
  let v: { netns?: unknown; pid?: unknown; runtimeSpec?: { linux?: { namespaces?: { type?: string; path?: string }[] } } };
  try {
    v = JSON.parse(info) as typeof v;
  } catch {
    return undefined;
  }
  if (typeof v.netns === "string") return v.netns === "" ? "host" : v.netns;
  const namespaces = v.runtimeSpec?.linux?.namespaces;
  const net = namespaces?.find((n) => n.type === "network");
  if (net?.path) return net.path;
  if (namespaces !== undefined && net === undefined) return "host";
  if (typeof v.pid === "number" && v.pid > 0) return `/proc/${v.pid}/ns/net`;
  return undefined;
}

/** Joins a data stream and the pod's connection both ways, with half-closes; `early` were read before the connection was up. */
function splice(data: SpdyStream, tcp: Socket, early: Buffer[], clientEnded: boolean): void {
  // Client → pod: a full socket buffer is the pod's to drain (the peer keeps no send window: connection.ts).
  for (const chunk of early) tcp.write(chunk);
  data.on("data", (chunk) => tcp.write(chunk));
  if (clientEnded) tcp.end();
  else data.once("end", () => tcp.end());
  // Pod → client: paused while the session has more than HIGH_WATER queued.
  tcp.on("data", (chunk: Buffer) => {
    data.write(chunk, () => {
      if (data.session.buffered < HIGH_WATER) tcp.resume();
    });
    if (data.session.buffered >= HIGH_WATER) tcp.pause();
  });
  tcp.once("end", () => data.end());
  // A reset stream or a lost session: the pod's connection goes.
  data.once("close", () => tcp.destroy());
  tcp.resume();
}
