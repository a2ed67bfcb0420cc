// pods/exec and pods/attach (seed 000, "Endpoints": connect sub-resources): an
// HTTP/1.1 Upgrade (kubectl's WebSocket, or its SPDY fallback) checked here as
// upstream's ExecLocation and AttachLocation do (the pod, its container, its
// node), then carried byte for byte to the node agent's
// /exec|attach/{namespace}/{pod}/{container} over
// TLS with the API server's client certificate, as upstream's upgrade-aware
// proxy does: the agent answers the handshake, the agent's refusals (plain
// text) reach kubectl as they are. Errors found here are Status objects.

import { connect, type TLSSocket } from "node:tls";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Node, Pod } from "../../api/core/types.js";
import { ApiError, badRequest, buildStatus, methodNotSupported } from "../../machinery/index.js";
import { agentBaseUrl } from "../node-agents.js";
import type { RegistryStore } from "../registry/store.js";
import type { ResourcePath } from "../routing.js";
import { logContainer } from "./pod-log.js";

export interface PodExecUpgrade {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  /** With `subresource` "exec" or "attach". */
  path: ResourcePath;
  query: URLSearchParams;
  pods: RegistryStore;
  nodes: RegistryStore | undefined;
  /** The API server's client certificate for node agents. */
  agentClient: { cert: string; key: string };
}

export const CONNECT_SUBRESOURCES: ReadonlySet<string> = new Set(["exec", "attach"]);
const TRUE = new Set(["true", "1"]);
/** Request headers the agent must not see: our caller's credentials and what the new connection sets itself. */
const DROPPED = new Set(["authorization", "host", "proxy-authorization", "impersonate-user", "impersonate-group", "impersonate-uid"]);

/** PodExecOptions or PodAttachOptions (stdin, stdout, stderr, tty, container, command) as the agent's parameters. */
export function agentStreamQuery(subresource: string, query: URLSearchParams): URLSearchParams {
  const command = subresource === "exec" ? query.getAll("command") : [];
  const flag = (name: string) => TRUE.has(query.get(name) ?? "");
  if (subresource === "exec" && command.length === 0) throw badRequest("you must specify at least one command for the container");
  if (!flag("stdin") && !flag("stdout") && !flag("stderr")) throw badRequest("you must specify at least 1 of stdin, stdout, stderr");
  const out = new URLSearchParams();
  for (const c of command) out.append("command", c);
  for (const [ours, agents] of [["stdin", "input"], ["stdout", "output"], ["stderr", "error"], ["tty", "tty"]] as const) {
    if (flag(ours)) out.set(agents, "1");
  }
  return out;
}

/** Checks the request and joins the client's connection to the agent's; throws an ApiError before anything is proxied. */
export async function proxyPodStream(r: PodExecUpgrade): Promise<void> {
  const method = (r.req.method ?? "GET").toUpperCase();
  const subresource = r.path.subresource ?? "";
  if (method !== "GET" && method !== "POST") throw methodNotSupported({ group: "", resource: `pods/${subresource}` }, method.toLowerCase());
  const name = r.path.name!;
  const params = agentStreamQuery(subresource, r.query);
  const pod = (await r.pods.get(r.path.namespace, name)).object as Pod;
  const container = logContainer(pod, r.query.get("container") || undefined);
  const nodeName = pod.spec?.nodeName ?? "";
  if (nodeName === "" || r.nodes === undefined) throw badRequest(`pod ${name} does not have a host assigned`);
  const node = (await r.nodes.get(undefined, nodeName)).object as Node;
  const base = new URL(agentBaseUrl(node));
  const target = `/${subresource}/${encodeURIComponent(pod.metadata.namespace ?? "")}/${encodeURIComponent(name)}/${encodeURIComponent(container)}?${params}`;

  const agent = await dialAgent(base, r.agentClient);
  let request = `${method} ${target} HTTP/1.1\r\nHost: ${base.host}\r\n`;
  for (let i = 0; i < r.req.rawHeaders.length; i += 2) {
    const key = r.req.rawHeaders[i]!;
    if (!DROPPED.has(key.toLowerCase())) request += `${key}: ${r.req.rawHeaders[i + 1]}\r\n`;
  }
  agent.write(`${request}\r\n`);
  if (r.head.length > 0) agent.write(r.head);
  // From here the bytes are the agent's and the client's; either side closing ends both.
  const end = () => {
    agent.destroy();
    r.socket.destroy();
  };
  agent.on("error", end).on("close", end);
  r.socket.on("error", end).on("close", end);
  agent.pipe(r.socket);
  r.socket.pipe(agent);
}

function dialAgent(base: URL, client: { cert: string; key: string }): Promise<TLSSocket> {
  const host = base.hostname.replace(/^\[|\]$/g, "");
  return new Promise((resolve, reject) => {
    // As upstream without --kubelet-certificate-authority, the agent's self-signed certificate is not verified.
    const socket = connect({ host, port: Number(base.port), cert: client.cert, key: client.key, rejectUnauthorized: false, ALPNProtocols: ["http/1.1"] });
    socket.once("secureConnect", () => {
      socket.removeAllListeners("error");
      socket.setNoDelay(true);
      resolve(socket);
    });
    socket.once("error", (err) => {
      reject(new ApiError(buildStatus({ code: 500, reason: "InternalError", message: `error dialing backend: ${err.message}`, details: { causes: [{ message: `error dialing backend: ${err.message}` }] } })));
    });
  });
}
