// The API server's listener: HTTPS only, HTTP/2 (ALPN) and HTTP/1.1 on one
// port, serving the credentials' certificate. Each request, and each HTTP/1.1
// Upgrade (pods/exec), becomes a request context and goes to its handler
// chain (filters/index.ts); close() ends the connections still open.

import { createSecureServer, type Http2SecureServer } from "node:http2";
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { requestContext, type Handler, type RequestContext, type ResponseExchange, type UpgradeExchange } from "./filters/index.js";
import type { Credentials } from "../component/pki.js";

export interface ListenOptions {
  readonly credentials: Credentials;
  readonly bindAddress: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly serve: Handler<RequestContext<ResponseExchange>>;
  readonly upgrade: Handler<RequestContext<UpgradeExchange>>;
}

export async function listen(o: ListenOptions): Promise<{ port: number; close(): Promise<void> }> {
  const { credentials } = o;
  const server: Http2SecureServer = createSecureServer(
    // The CA goes in the chain: a joining node pins it by digest (a join token) before trusting it.
    // Client certificates are asked for, not required: the TLS stack verifies one against the cluster CA
    // (`authorized`), and the request goes on either way for the authenticators to judge (filters/client-certificates.ts).
    {
      cert: credentials.serverCertPem + credentials.caCertPem, key: credentials.serverKeyPem, allowHTTP1: true, settings: { maxConcurrentStreams: 1000 },
      ca: credentials.caCertPem, requestCert: true, rejectUnauthorized: false,
    },
    (req, res) => void o.serve(requestContext({ kind: "response", req, res })),
  );
  server.on("sessionError", () => {});
  // Connect sub-resources (pods/exec) arrive as HTTP/1.1 Upgrade requests; close() ends the ones still open.
  const upgraded = new Set<Duplex>();
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => {});
    upgraded.add(socket);
    socket.once("close", () => upgraded.delete(socket));
    void o.upgrade(requestContext({ kind: "upgrade", req, socket, head, statusCode: 101 }));
  });
  // Watch events are small writes that must leave at once: no Nagle delay.
  server.on("secureConnection", (socket: { setNoDelay(on: boolean): void }) => socket.setNoDelay(true));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.bindAddress, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Watches and exec sessions hold connections open; end them so close() completes.
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      for (const s of upgraded) s.destroy();
      setTimeout(resolve, 2000).unref();
    }),
  };
}
