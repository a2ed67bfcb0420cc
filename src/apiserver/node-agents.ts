// How the API server reaches a node agent's HTTPS port (pods/log today):
// the Node's address (InternalIP, then ExternalIP, then Hostname: kubeadm's
// order of upstream's --kubelet-preferred-address-types) and the port its
// agent advertises in status.daemonEndpoints.kubeletEndpoint (10250 when it
// does not). The API server shows its client certificate (the agent trusts the
// cluster CA). As upstream without --kubelet-certificate-authority, the
// agent's self-signed serving certificate is not verified.

import type { IncomingMessage } from "node:http";
import { Agent, request } from "node:https";
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

export class NodeAgentClient {
  readonly #agent: Agent;

  constructor(options: { cert: string; key: string }) {
    this.#agent = new Agent({ keepAlive: true, cert: options.cert, key: options.key, rejectUnauthorized: false });
  }

  /** GET `url`; the response's body is the caller's to read. Aborting `signal` ends the request and its response. */
  get(url: string, signal: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = request(url, { method: "GET", agent: this.#agent, signal }, resolve);
      req.once("error", reject);
      req.end();
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
