// What the agent's stream endpoints (/exec, /attach) check before they take a
// connection, as upstream's kubelet does: the streams asked for, the pod on
// this node, a running instance of the container, and (last) the upgrade: a WebSocket
// or SPDY/3.1 (./channel-transport.ts). A Refusal carries the plain-text answer and status.

import { podContainerStatuses } from "../../api/core/pod-containers.js";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { Pod, PodStatus } from "../../api/core/types.js";
import { rawReply } from "../../component/index.js";
import { pickProtocol, type Channel } from "./channel-protocol.js";
import { SpdyTransport, WebSocketTransport, type ChannelTransport } from "./channel-transport.js";
import { isSpdyUpgrade, negotiateStreamProtocol, refuseHandshake, SpdyHandshakeError } from "./spdy/upgrade.js";

/** Which streams the caller wants; upstream's remotecommand.Options. */
export interface StreamOptions {
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export interface StreamTarget {
  readonly pod: Pod;
  /** The running container instance's runtime id. */
  readonly containerId: string;
  readonly options: StreamOptions;
}

export class Refusal extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** Bytes queued on a WebSocket before the output is paused. */
export const HIGH_WATER = 1 << 20;

/** The agent's boolean query parameters: the API server sends "1"; "true" is accepted too. */
const flagParam = (q: URLSearchParams, name: string): boolean => ["1", "true"].includes(q.get(name) ?? "");

/** Checks a request under `prefix` (`/exec/NS/POD/CONTAINER`); throws a Refusal. */
export function streamTarget(url: URL, prefix: string, pods: readonly { pod: Pod; status: PodStatus }[]): StreamTarget {
  const [namespace = "", podName = "", container = ""] = url.pathname.slice(prefix.length).split("/").map(decodeURIComponent);
  const q = url.searchParams;
  const options: StreamOptions = { command: q.getAll("command"), stdin: flagParam(q, "input"), stdout: flagParam(q, "output"), stderr: flagParam(q, "error"), tty: flagParam(q, "tty") };
  // A terminal merges stderr into stdout (upstream drops the stderr stream).
  if (options.tty) options.stderr = false;
  if (!options.stdin && !options.stdout && !options.stderr) throw new Refusal(400, "you must specify at least 1 of stdin, stdout, stderr");
  const entry = pods.find((p) => p.pod.metadata.namespace === namespace && p.pod.metadata.name === podName);
  if (entry === undefined) throw new Refusal(404, "pod does not exist");
  const status = podContainerStatuses(entry.status).find((c) => c.name === container);
  const id = status?.state?.running && status.containerID ? status.containerID.replace(/^[^:]*:\/\//, "") : undefined;
  if (id === undefined) throw new Refusal(500, `container not found (${JSON.stringify(container)})`);
  return { pod: entry.pod, containerId: id, options };
}

/** The channel protocols spoken over SPDY, best first (upstream's kubelet: v4 down to the unversioned one). */
export const SPDY_CHANNEL_PROTOCOLS = ["v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io"] as const;

/**
 * Which upgrade `req` asks for: a WebSocket or SPDY/3.1; anything else is
 * refused. Called after every other check: kubectl retries a refused
 * WebSocket over SPDY and prints that second answer, so the real reason must
 * come first whatever the protocol.
 */
export function requireStreamUpgrade(req: IncomingMessage): "websocket" | "spdy" {
  if (String(req.headers.upgrade ?? "").toLowerCase() === "websocket") return "websocket";
  if (isSpdyUpgrade(req)) return "spdy";
  throw new Refusal(400, "unable to upgrade: missing upgrade headers in request (Connection: Upgrade with Upgrade: SPDY/3.1 or websocket)");
}

/**
 * Takes the connection with the protocol `req` asked for (checked by
 * requireStreamUpgrade) and resolves with its channels once the client has
 * them up; undefined when it never does (a failed handshake has been answered).
 */
export async function acceptChannels(req: IncomingMessage, socket: Duplex, head: Buffer, wss: WebSocketServer, options: StreamOptions, first: Channel): Promise<ChannelTransport | undefined> {
  if (requireStreamUpgrade(req) === "websocket") return new Promise((resolve) => wss.handleUpgrade(req, socket, head, (ws) => resolve(new WebSocketTransport(ws, first))));
  let protocol: string;
  try {
    protocol = negotiateStreamProtocol(req, SPDY_CHANNEL_PROTOCOLS);
  } catch (err) {
    if (!(err instanceof SpdyHandshakeError)) throw err;
    refuseHandshake(socket, err);
    return undefined;
  }
  return SpdyTransport.accept(socket, head, protocol, options);
}

/** A WebSocket server for channel.k8s.io upgrades, attached to no HTTP server (the component server hands them over). */
export function channelSocketServer(): WebSocketServer {
  return new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: (offered) => pickProtocol(offered) ?? false });
}

/** Answers a Refusal on the raw connection; anything else is rethrown. */
export function refuse(socket: Duplex, err: unknown): void {
  if (!(err instanceof Refusal)) throw err;
  rawReply(socket, err.status, err.message);
}
