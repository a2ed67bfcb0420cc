// How the API server reaches a node agent's HTTPS port (pods/log, exec, attach):
// the Node's address (InternalIP, then ExternalIP, then Hostname: kubeadm's
// order of upstream's --kubelet-preferred-address-types) and the port its
// agent advertises in status.daemonEndpoints.kubeletEndpoint (10250 when it
// does not). The API server shows its client certificate (the agent trusts the
// cluster CA). As upstream without --kubelet-certificate-authority, the
// agent's self-signed serving certificate is not verified.

import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from "node:http";
import { Agent, request } from "node:https";
import { connect, type TLSSocket } from "node:tls";
import type { Node } from "../api/core/types.js";
import { serviceUnavailable } from "../machinery/index.js";

export const DEFAULT_AGENT_PORT = 10250;
const ADDRESS_TYPES = ["InternalIP", "ExternalIP", "Hostname"] as const;

/** https://ADDRESS:PORT of a Node's agent; 503 when the Node lists no usable address. */
export function agentBaseUrl(node: Node): string {
  const addresses = node.status?.addresses ?? [];
  let address: string | undefined;
  for (const type of ADDRESS_TYPES) {
    address = addresses.find((a) => a.type === type && a.address)?.address;
    if (address !== undefined) break;
  }
  if (address === undefined) {
    const known = addresses.map((a) => `${a.type}:${a.address}`).join(",");
    throw serviceUnavailable(`no preferred addresses found; known addresses: [${known}]`);
  }
  const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port || DEFAULT_AGENT_PORT;
  return `https://${address.includes(":") ? `[${address}]` : address}:${port}`;
}

export interface NodeAgentClientOptions {
  readonly cert: string;
  readonly key: string;
  /** How long connecting (TCP and TLS) may take before the request fails (default 30 s, upstream's dial timeout). */
  readonly connectTimeoutMs?: number;
}

export class NodeAgentClient {
  readonly #agent: Agent;
  readonly #connectTimeoutMs: number;
  readonly #credentials: { cert: string; key: string };

  constructor(options: NodeAgentClientOptions) {
    this.#credentials = { cert: options.cert, key: options.key };
    this.#agent = new Agent({ keepAlive: true, cert: options.cert, key: options.key, rejectUnauthorized: false });
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
  }

  /** GET `url`; the response's body is the caller's to read. Aborting `signal` ends the request and its response. */
  get(url: string, signal: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = this.request(new URL(url), "GET", {}, signal);
      req.once("response", resolve).once("error", reject);
      req.end();
    });
  }

  /** Any request to the agent (nodes/NAME/proxy); the caller writes the body and reads the response. */
  request(url: URL, method: string, headers: OutgoingHttpHeaders, signal?: AbortSignal): ClientRequest {
    const req = request(url, { method, headers, agent: this.#agent, ...(signal ? { signal } : {}) });
    // Only the connection is timed: a follow may then stay quiet for as long as the container does.
    req.once("socket", (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => req.destroy(new Error(`dial ${url.host}: i/o timeout`)), this.#connectTimeoutMs);
      socket.once("secureConnect", () => clearTimeout(timer));
      socket.once("close", () => clearTimeout(timer));
    });
    return req;
  }

  /** A TLS connection of its own to the agent at `base` (HTTP/1.1: exec and attach upgrade it). */
  dial(base: URL): Promise<TLSSocket> {
    const host = base.hostname.replace(/^\[|\]$/g, "");
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port: Number(base.port), ...this.#credentials, rejectUnauthorized: false, ALPNProtocols: ["http/1.1"] });
      socket.once("secureConnect", () => {
        socket.removeAllListeners("error");
        socket.setNoDelay(true);
        resolve(socket);
      });
      socket.once("error", reject);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
