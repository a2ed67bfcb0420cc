// Carrying an HTTP/1.1 Upgrade to a backend byte for byte (pods/exec and
// attach to the node agent, the proxy subresources to a node, pod or
// service): the request goes out again with the backend's path, without the
// caller's credentials (a bearer token in the WebSocket subprotocols too); from then on either side closing ends both. The
// backend answers the handshake (or refuses) itself.

import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { withoutBearerProtocol } from "../filters/websocket-token.js";

/** Request headers the backend must not see: our caller's credentials and what the new connection sets itself. */
export const DROPPED_REQUEST_HEADERS: ReadonlySet<string> = new Set(["authorization", "host", "proxy-authorization", "impersonate-user", "impersonate-group", "impersonate-uid"]);

/** Writes `method target` with the client's headers (but DROPPED_REQUEST_HEADERS) to `backend`, then joins the two connections. */
export function spliceUpgrade(client: { req: IncomingMessage; socket: Duplex; head: Buffer }, backend: Duplex, target: string, host: string): void {
  let request = `${(client.req.method ?? "GET").toUpperCase()} ${target} HTTP/1.1\r\nHost: ${host}\r\n`;
  const raw = client.req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i]!;
    const lower = key.toLowerCase();
    if (DROPPED_REQUEST_HEADERS.has(lower) || lower.startsWith("impersonate-extra-")) continue;
    // A browser's token rides in a subprotocol (filters/websocket-token.ts): never the backend's to see.
    const value = lower === "sec-websocket-protocol" ? withoutBearerProtocol(raw[i + 1]!) : raw[i + 1];
    if (value !== "") request += `${key}: ${value}\r\n`;
  }
  backend.write(`${request}\r\n`);
  if (client.head.length > 0) backend.write(client.head);
  const end = () => {
    backend.destroy();
    client.socket.destroy();
  };
  backend.on("error", end).on("close", end);
  client.socket.on("error", end).on("close", end);
  backend.pipe(client.socket);
  client.socket.pipe(backend);
}
