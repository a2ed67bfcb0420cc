// pods/log over a WebSocket (upstream's wsstream Reader, which the e2e suite
// and older clients use): the same options, checks and agent stream as the
// GET (./pod-log.ts), sent as messages after the handshake and ended with a
// normal close. Subprotocols: "binary.k8s.io" (or none) sends binary
// messages of the raw bytes, "base64.binary.k8s.io" text messages of their
// base64; an offer of neither is refused (400), as upstream. Errors before
// the handshake are answered as Status on the socket by the caller.

import { WebSocketServer, type WebSocket } from "ws";
import { badRequest } from "../../machinery/index.js";
import type { UpgradeRequest } from "./request.js";
import { openPodLog } from "./pod-log.js";

const PROTOCOLS = ["binary.k8s.io", "base64.binary.k8s.io"];

/** Whether the upgrade is a WebSocket one (pods/log serves no other). */
export function isWebSocketUpgrade(headers: Record<string, string | string[] | undefined>): boolean {
  return String(headers["upgrade"] ?? "").toLowerCase() === "websocket";
}

/** The subprotocol to answer with: "" when none was offered; undefined when none offered is served. */
export function logProtocol(offered: readonly string[]): string | undefined {
  if (offered.length === 0) return "";
  return offered.find((p) => PROTOCOLS.includes(p));
}

export async function handlePodLogWebSocket(o: UpgradeRequest): Promise<void> {
  if (!isWebSocketUpgrade(o.req.headers)) throw badRequest(`${o.req.headers.upgrade ?? "upgrade"} requests for pods/log are served only as WebSocket`);
  const offered = String(o.req.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim()).filter((p) => p !== "");
  const protocol = logProtocol(offered);
  if (protocol === undefined) throw badRequest(`none of the offered subprotocols is served (${PROTOCOLS.join(", ")})`);
  const gone = new AbortController();
  o.socket.once("close", () => gone.abort());
  const upstream = await openPodLog(o, gone.signal);
  const server = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: () => protocol || false });
  const ws = await new Promise<WebSocket>((resolve) => server.handleUpgrade(o.req, o.socket, o.head, resolve));
  ws.on("close", () => gone.abort());
  ws.on("error", () => gone.abort());
  try {
    if (upstream !== undefined) {
      for await (const chunk of upstream) {
        if (gone.signal.aborted) break;
        const data = chunk as Buffer;
        await new Promise<void>((resolve) => (protocol === "base64.binary.k8s.io" ? ws.send(data.toString("base64"), { binary: false }, () => resolve()) : ws.send(data, { binary: true }, () => resolve())));
      }
    }
  } catch {
    // The agent went away mid-stream: close what was sent.
  }
  upstream?.destroy();
  ws.close(1000);
  server.close();
}
