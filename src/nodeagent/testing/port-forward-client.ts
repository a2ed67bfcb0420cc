// A port-forward client for tests: the upgrade request to an agent's
// /portForward over plain TCP, then a SPDY session of our own in client mode
// (../exec/spdy/connection.ts) opening error and data streams as kubectl does.

import { connect, type Socket } from "node:net";
import { SpdyConnection, type SpdyStream } from "../exec/spdy/connection.js";

export const SPDY_PORT_FORWARD_HEADERS = "Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\n";

/** Sends `POST path` with `headers` to 127.0.0.1:port; resolves with the answer's head, its body when refused, and on 101 a client session. */
export function dialPortForward(port: number, path: string, headers = SPDY_PORT_FORWARD_HEADERS): Promise<{ head: string; body: string; session?: SpdyConnection; socket: Socket }> {
  const socket = connect(port, "127.0.0.1");
  socket.write(`POST ${path} HTTP/1.1\r\nHost: agent\r\n${headers}\r\n`);
  let buf = Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buf.subarray(0, end).toString();
      if (!head.startsWith("HTTP/1.1 101")) {
        socket.on("end", () => resolve({ head, body: buf.subarray(end + 4).toString(), socket }));
        return;
      }
      socket.off("data", onData);
      const session = new SpdyConnection(socket, { client: true });
      const rest = buf.subarray(end + 4);
      if (rest.length > 0) session.feed(rest);
      resolve({ head, body: "", session, socket });
    };
    socket.on("data", onData);
  });
}

/** Everything a stream receives until its remote half ends (FIN, reset or the session's end). */
export function collectStream(stream: SpdyStream): Promise<{ text: string; closed: boolean }> {
  const chunks: Buffer[] = [];
  stream.on("data", (d) => chunks.push(d));
  return new Promise((resolve) => {
    stream.once("end", () => resolve({ text: Buffer.concat(chunks).toString(), closed: stream.closed }));
  });
}

/** Opens one forwarded connection's streams (error first, as kubectl), `requestID` when given. */
export function forwardRequest(session: SpdyConnection, port: number | string, id?: string) {
  const base: [string, string][] = [["port", String(port)], ...(id !== undefined ? [["requestID", id] as [string, string]] : [])];
  const error = session.open([["streamType", "error"], ...base]);
  const errorText = collectStream(error);
  const data = session.open([["streamType", "data"], ...base]);
  return { error, errorText, data, dataText: collectStream(data) };
}
