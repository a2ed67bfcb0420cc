// pods/exec, pods/attach and pods/portforward (seed 000, "Endpoints": connect sub-resources): an
// HTTP/1.1 Upgrade (kubectl's WebSocket, or its SPDY fallback) checked here as
// upstream's ExecLocation and AttachLocation do (the pod, its container, its
// node), then carried byte for byte to the node agent's
// /exec|attach/{namespace}/{pod}/{container} over
// TLS with the API server's client certificate, as upstream's upgrade-aware
// proxy does: the agent answers the handshake, the agent's refusals (plain
// text) reach kubectl as they are. Errors found here are Status objects.
// Admission runs first (operation CONNECT, the options as the object), so a
// webhook may refuse an exec or an attach, as upstream's connect handler.

import type { Node, Pod } from "../../api/core/types.js";
import { ApiError, badRequest, buildStatus, type ApiObject } from "../../machinery/index.js";
import { addAuditAnnotation } from "../audit/index.js";
import { agentBaseUrl } from "../node-agents.js";
import type { UpgradeRequest } from "./request.js";
import { logContainer } from "./pod-log.js";
import { spliceUpgrade } from "./upgrade-splice.js";

const TRUE = new Set(["true", "1"]);

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

/** The PodExecOptions or PodAttachOptions (core/v1) a connect request's query spells, as admission sees them. */
export function connectOptions(subresource: string, query: URLSearchParams): ApiObject {
  const flag = (name: string) => TRUE.has(query.get(name) ?? "");
  const container = query.get("container");
  const options: Record<string, unknown> = {
    kind: subresource === "exec" ? "PodExecOptions" : "PodAttachOptions",
    apiVersion: "v1",
    ...(flag("stdin") ? { stdin: true } : {}),
    ...(flag("stdout") ? { stdout: true } : {}),
    ...(flag("stderr") ? { stderr: true } : {}),
    ...(flag("tty") ? { tty: true } : {}),
    ...(container ? { container } : {}),
    ...(subresource === "exec" ? { command: query.getAll("command") } : {}),
  };
  return options as unknown as ApiObject;
}

/**
 * Checks the request (GET or POST, routed by the pods/exec and pods/attach
 * declarations in src/api/subresources/exec.ts) and joins the client's
 * connection to the agent's; throws an ApiError before anything is proxied.
 */
export async function proxyPodStream(r: UpgradeRequest): Promise<void> {
  const subresource = r.subresource.name;
  const name = r.name;
  const params = agentStreamQuery(subresource, r.query);
  // A refusal is answered before the pod is even read (upstream admits before its location lookup).
  await r.store.admitConnect(r.path.namespace, name, subresource, connectOptions(subresource, r.query), {
    user: r.user,
    warn: () => {}, // no response headers to carry a warning on an upgrade
    annotate: (key, value) => addAuditAnnotation(r.req, key, value),
  });
  const pod = (await r.store.get(r.path.namespace, name)).object as Pod;
  const container = logContainer(pod, r.query.get("container") || undefined);
  const path = `/${subresource}/${encodeURIComponent(pod.metadata.namespace ?? "")}/${encodeURIComponent(name)}/${encodeURIComponent(container)}`;
  await spliceToAgent(r, pod, `${path}?${params}`);
}

/**
 * pods/portforward (PodPortForwardOptions `ports`, upstream's
 * PortForwardLocation): admitted as exec is, then carried to the agent's
 * /portForward/{namespace}/{pod}?port=P,Q. kubectl names the ports in its
 * streams' headers, not here; the agent speaks SPDY (a direct upgrade, or
 * tunnelled in a WebSocket: src/nodeagent/exec/port-forward.ts).
 */
export async function proxyPodPortForward(r: UpgradeRequest): Promise<void> {
  const ports = portForwardPorts(r.query);
  const options = { kind: "PodPortForwardOptions", apiVersion: "v1", ...(ports.length > 0 ? { ports } : {}) } as unknown as ApiObject;
  await r.store.admitConnect(r.path.namespace, r.name, "portforward", options, {
    user: r.user,
    warn: () => {},
    annotate: (key, value) => addAuditAnnotation(r.req, key, value),
  });
  const pod = (await r.store.get(r.path.namespace, r.name)).object as Pod;
  const query = ports.length > 0 ? `?${new URLSearchParams({ port: ports.join(",") })}` : "";
  await spliceToAgent(r, pod, `/portForward/${encodeURIComponent(pod.metadata.namespace ?? "")}/${encodeURIComponent(r.name)}${query}`);
}

/** The `ports` parameters (repeated, or comma-separated) as int32s; a 400 with Go's parse error otherwise, as upstream's query conversion. */
export function portForwardPorts(query: URLSearchParams): number[] {
  return query.getAll("ports").flatMap((v) => v.split(",")).map((v) => {
    const n = /^[+-]?\d+$/.test(v) ? Number(v) : NaN;
    if (Number.isNaN(n)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
    if (n > 2147483647 || n < -2147483648) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
    return n;
  });
}

/** Joins the client's connection to `target` on the agent of the pod's node; an ApiError before anything is proxied. */
async function spliceToAgent(r: UpgradeRequest, pod: Pod, target: string): Promise<void> {
  const nodeName = pod.spec?.nodeName ?? "";
  if (nodeName === "" || r.nodes === undefined) throw badRequest(`pod ${r.name} does not have a host assigned`);
  const node = (await r.nodes.get(undefined, nodeName)).object as Node;
  const base = new URL(agentBaseUrl(node));
  let agent;
  try {
    agent = await r.agents.dial(base);
  } catch (err) {
    const message = `error dialing backend: ${(err as Error).message}`;
    throw new ApiError(buildStatus({ code: 500, reason: "InternalError", message, details: { causes: [{ message }] } }));
  }
  spliceUpgrade(r, agent, target, base.host);
}
