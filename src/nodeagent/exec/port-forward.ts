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
// the `port`. Once a request has both, the agent connects over TCP to the pod
// and splices the data stream with that connection both ways, half-closes
// passed on (a FIN from kubectl ends our writing half, the pod's end ends the
// stream's). A failure is written on the error stream in upstream's words
// (`error forwarding port P to pod SANDBOX, uid : REASON`, as containerd's
// streaming server names the pod), then both streams end. A stream with a
// missing or bad `port` or `streamType` is reset, as upstream refuses it.
//
// Where the bytes go: the pod's IP from the host (127.0.0.1 for a
// hostNetwork pod), on either runtime alike. Upstream enters the pod's
// network namespace and dials localhost there, so a server listening only on
// 127.0.0.1 inside the pod is reachable with upstream and not with orch
// (docs/nodeagent.md, "Port forwarding").

import type { IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { createWebSocketStream, WebSocketServer } from "ws";
import type { Pod, PodStatus } from "../../api/core/types.js";
import type { CriClient } from "../cri/index.js";
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

/** A Node socket error in the words of Go's net package, as upstream's message carries it. */
export function dialErrorText(address: string, port: number, err: NodeJS.ErrnoException): string {
  const reasons: Record<string, string> = {
    ECONNREFUSED: "connect: connection refused",
    EHOSTUNREACH: "connect: no route to host",
    ENETUNREACH: "connect: network is unreachable",
    ETIMEDOUT: "i/o timeout",
    ECONNRESET: "read: connection reset by peer",
  };
  const host = address.includes(":") ? `[${address}]` : address;
  return `dial tcp ${host}:${port}: ${reasons[err.code ?? ""] ?? err.message}`;
}

export interface PortForwardOptions {
  /** The pods the agent runs, with their latest status. */
  readonly pods: () => readonly { pod: Pod; status: PodStatus }[];
  readonly runtime: Pick<CriClient, "listPodSandbox">;
  readonly log?: (line: string) => void;
  /** How long a connection to the pod may take. */
  readonly dialTimeoutMs?: number;
}

export class PortForward {
  readonly #o: PortForwardOptions;
  // The subprotocol has a "/", which `ws` refuses as a token: the agent checks it (#target) and names it in the answer itself.
  readonly #wss = new WebSocketServer({ noServer: true, perMessageDeflate: false }).on("headers", (headers) => headers.push(`Sec-WebSocket-Protocol: ${PORT_FORWARD_TUNNEL_PROTOCOL}`));
  readonly #sessions = new Set<SpdyConnection>();

  constructor(options: PortForwardOptions) {
    this.#o = options;
  }

  /** Answers one upgrade request under PORT_FORWARD_PATH. */
  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    let target: { pod: Pod; status: PodStatus };
    try {
      target = this.#target(url, req);
    } catch (err) {
      return refuse(socket, err);
    }
    const sandbox = await this.#sandboxId(target.pod);
    const onStream = (stream: SpdyStream) => this.#stream(stream, pairs);
    const pairs = new StreamPairs((pair) => this.#forward(pair, target, sandbox));
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

  /** The pod's sandbox id as its runtime names it (upstream's message names the pod so); the pod's name when not found. */
  async #sandboxId(pod: Pod): Promise<string> {
    try {
      const { items } = await this.#o.runtime.listPodSandbox({ filter: { state: { state: "SANDBOX_READY" } } });
      const found = items.find((s) => s.metadata?.uid === pod.metadata.uid);
      if (found !== undefined) return found.id;
    } catch {
      // the name below
    }
    return `${pod.metadata.namespace}/${pod.metadata.name}`;
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

  #forward({ error, data }: Required<StreamPair>, target: { pod: Pod; status: PodStatus }, sandbox: string): void {
    const port = Number(data.header("port"));
    const fail = (reason: string) => {
      error.write(Buffer.from(`error forwarding port ${port} to pod ${sandbox}, uid : ${reason}`));
      error.end();
      data.end();
    };
    const address = target.pod.spec?.hostNetwork ? "127.0.0.1" : target.status.podIP;
    if (address === undefined || address === "") return fail("the pod has no IP address yet");
    // What kubectl sends before the connection is up waits here.
    const early: Buffer[] = [];
    let clientEnded = false;
    const onEarly = (chunk: Buffer) => early.push(chunk);
    const onEarlyEnd = () => (clientEnded = true);
    data.on("data", onEarly);
    data.once("end", onEarlyEnd);
    const tcp: Socket = connect({ host: address, port, timeout: this.#o.dialTimeoutMs ?? 10_000 });
    tcp.setNoDelay(true);
    const dialFailed = (err: NodeJS.ErrnoException) => fail(dialErrorText(address, port, err));
    tcp.once("error", dialFailed);
    tcp.once("timeout", () => {
      tcp.destroy();
      dialFailed(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" }));
    });
    tcp.once("connect", () => {
      tcp.setTimeout(0);
      tcp.off("error", dialFailed);
      tcp.on("error", () => tcp.destroy());
      data.off("data", onEarly);
      data.off("end", onEarlyEnd);
      if (data.closed) return void tcp.destroy();
      splice(data, tcp, early, clientEnded);
      // The forward is over once the pod's connection is: the error stream ends empty (success).
      tcp.once("close", () => {
        error.end();
        data.end();
      });
    });
  }
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
}
