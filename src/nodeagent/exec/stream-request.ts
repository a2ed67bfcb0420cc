// What the agent's stream endpoints (/exec, /attach) check before they take a
// connection, as upstream's kubelet does: the streams asked for, the pod on
// this node, a running instance of the container, and (last) a WebSocket, not
// SPDY. A Refusal carries the plain-text answer and status.

import { podContainerStatuses } from "../../api/core/pod-containers.js";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { Pod, PodStatus } from "../../api/core/types.js";
import { rawReply } from "../../component/index.js";
import { pickProtocol } from "./channel-protocol.js";

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

/**
 * Refuses anything but a WebSocket. Called after every other check: kubectl
 * retries a refused WebSocket over SPDY and prints that second answer, so the
 * real reason must come first whatever the protocol.
 */
export function requireWebSocket(req: IncomingMessage): void {
  if (String(req.headers.upgrade ?? "").toLowerCase() === "websocket") return;
  // No ": " in the text: kubectl would read "a: b" as YAML, a Status with nothing in it.
  throw new Refusal(400, `${req.headers.upgrade ?? "this"} streaming is not supported by the orch node agent, use a WebSocket client speaking v5.channel.k8s.io (kubectl 1.30 or newer)`);
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
