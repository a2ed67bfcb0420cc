// The HTTP/1.1 side of a SPDY stream upgrade, as upstream's kubelet answers
// kubectl (≤ 1.29 for exec, every version for port-forward): the request
// carries `Connection: Upgrade`, `Upgrade: SPDY/3.1` and the stream protocols
// it speaks in `X-Stream-Protocol-Version` (one header each, or a list); the
// first of them the server speaks is chosen and echoed in the 101 answer.
// Refusals are upstream's: 400 without the header, 403 (with
// X-Accepted-Stream-Protocol-Versions) when none is spoken.

import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { SpdyConnection, type SpdyConnectionOptions } from "./connection.js";

export const SPDY_UPGRADE = "SPDY/3.1";
const PROTOCOL_HEADER = "X-Stream-Protocol-Version";

/** Whether `req` asks for a SPDY/3.1 upgrade. */
export function isSpdyUpgrade(req: IncomingMessage): boolean {
  const connection = String(req.headers.connection ?? "").toLowerCase().split(/\s*,\s*/);
  return connection.includes("upgrade") && String(req.headers.upgrade ?? "").toLowerCase() === SPDY_UPGRADE.toLowerCase();
}

export class SpdyHandshakeError extends Error {
  constructor(readonly status: number, message: string, readonly headers: Record<string, string[]> = {}) {
    super(message);
  }
}

/** The protocol to speak: the client's first that the server speaks (upstream's negotiation); throws SpdyHandshakeError. */
export function negotiateStreamProtocol(req: IncomingMessage, server: readonly string[]): string {
  const raw = req.headersDistinct[PROTOCOL_HEADER.toLowerCase()] ?? [];
  const offered = raw.flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== "");
  if (offered.length === 0) throw new SpdyHandshakeError(400, `unable to upgrade: ${PROTOCOL_HEADER} is required`);
  const chosen = offered.find((p) => server.includes(p));
  if (chosen === undefined) {
    throw new SpdyHandshakeError(403, `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(" ")}], server accepts [${server.join(" ")}]`, {
      "X-Accepted-Stream-Protocol-Versions": [...server],
    });
  }
  return chosen;
}

/** Writes a refusal on the raw connection and ends it. */
export function refuseHandshake(socket: Duplex, err: SpdyHandshakeError): void {
  if (socket.destroyed) return;
  const reason = err.status === 403 ? "Forbidden" : "Bad Request";
  const body = `${err.message}\n`;
  let head = `HTTP/1.1 ${err.status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n`;
  for (const [name, values] of Object.entries(err.headers)) for (const v of values) head += `${name}: ${v}\r\n`;
  socket.end(`${head}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** Answers 101 with `protocol` and starts a server session on the connection (`head`: bytes read past the request). */
export function acceptSpdy(socket: Duplex, head: Buffer, protocol: string, options: SpdyConnectionOptions): SpdyConnection {
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${SPDY_UPGRADE}\r\n${PROTOCOL_HEADER}: ${protocol}\r\n\r\n`);
  const session = new SpdyConnection(socket, options);
  if (head.length > 0) session.feed(head);
  return session;
}
