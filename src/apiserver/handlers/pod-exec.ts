// pods/exec and pods/attach (seed 000, "Endpoints": connect sub-resources): an
// HTTP/1.1 Upgrade (kubectl's WebSocket, or its SPDY fallback) checked here as
// upstream's ExecLocation and AttachLocation do (the pod, its container, its
// node), then carried byte for byte to the node agent's
// /exec|attach/{namespace}/{pod}/{container} over
// TLS with the API server's client certificate, as upstream's upgrade-aware
// proxy does: the agent answers the handshake, the agent's refusals (plain
// text) reach kubectl as they are. Errors found here are Status objects.

import type { Node, Pod } from "../../api/core/types.js";
import { ApiError, badRequest, buildStatus } from "../../machinery/index.js";
import { agentBaseUrl } from "../node-agents.js";
import type { UpgradeRequest } from "./request.js";
import { logContainer } from "./pod-log.js";
import { withoutBearerProtocol } from "../filters/websocket-token.js";

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

/**
 * Checks the request (GET or POST, routed by the pods/exec and pods/attach
 * declarations in src/api/subresources/exec.ts) and joins the client's
 * connection to the agent's; throws an ApiError before anything is proxied.
 */
export async function proxyPodStream(r: UpgradeRequest): Promise<void> {
  const method = (r.req.method ?? "GET").toUpperCase();
  const subresource = r.subresource.name;
  const name = r.name;
  const params = agentStreamQuery(subresource, r.query);
  const pod = (await r.store.get(r.path.namespace, name)).object as Pod;
  const container = logContainer(pod, r.query.get("container") || undefined);
  const nodeName = pod.spec?.nodeName ?? "";
  if (nodeName === "" || r.nodes === undefined) throw badRequest(`pod ${name} does not have a host assigned`);
  const node = (await r.nodes.get(undefined, nodeName)).object as Node;
  const base = new URL(agentBaseUrl(node));
  const target = `/${subresource}/${encodeURIComponent(pod.metadata.namespace ?? "")}/${encodeURIComponent(name)}/${encodeURIComponent(container)}?${params}`;

  let agent;
  try {
    agent = await r.agents.dial(base);
  } catch (err) {
    const message = `error dialing backend: ${(err as Error).message}`;
    throw new ApiError(buildStatus({ code: 500, reason: "InternalError", message, details: { causes: [{ message }] } }));
  }
  let request = `${method} ${target} HTTP/1.1\r\nHost: ${base.host}\r\n`;
  for (let i = 0; i < r.req.rawHeaders.length; i += 2) {
    const key = r.req.rawHeaders[i]!;
    const lower = key.toLowerCase();
    if (DROPPED.has(lower)) continue;
    // A browser's token rides in a subprotocol (filters/websocket-token.ts): never the agent's to see.
    const value = lower === "sec-websocket-protocol" ? withoutBearerProtocol(r.req.rawHeaders[i + 1]!) : r.req.rawHeaders[i + 1];
    if (value !== "") request += `${key}: ${value}\r\n`;
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
