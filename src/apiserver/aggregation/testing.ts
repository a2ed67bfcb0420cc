// Test support: a tiny extension API server (HTTPS with a certificate for
// w.default.svc, asking for a client certificate signed by the front proxy's
// CA) serving x.example.com/v1 with a `widgets` resource list, one widget
// (GET, a list or Table, a streamed watch), upgrades echoed, recording what it was sent.

import { createServer, type Server } from "node:https";
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { selfSignedServingCert } from "../../component/pki.js";

export interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
  cn: string | undefined;
  authorized: boolean;
}

export const RESOURCES = {
  kind: "APIResourceList", apiVersion: "v1", groupVersion: "x.example.com/v1",
  resources: [
    { name: "widgets", singularName: "widget", namespaced: true, kind: "Widget", verbs: ["get", "list", "watch"], shortNames: ["wd"] },
    { name: "widgets/status", singularName: "", namespaced: true, kind: "Widget", verbs: ["get"] },
  ],
};
export const widget = { apiVersion: "x.example.com/v1", kind: "Widget", metadata: { name: "w1", namespace: "default", resourceVersion: "7" }, color: "blue" };

/** The extension API server: HTTPS with a certificate for w.default.svc, asking for (not requiring) a client certificate. */
export async function extensionServer(frontProxyCa: string): Promise<{ server: Server; port: number; ca: string; seen: Seen[] }> {
  const pki = await selfSignedServingCert(["w.default.svc"]);
  const seen: Seen[] = [];
  const server = createServer({ cert: pki.cert, key: pki.key, ca: frontProxyCa, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const socket = req.socket as TLSSocket;
    seen.push({ path: req.url ?? "", headers: req.headers, cn: socket.getPeerCertificate()?.subject?.CN as string | undefined, authorized: socket.authorized });
    const url = new URL(req.url ?? "/", "https://x");
    const json = (body: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (url.pathname === "/apis/x.example.com/v1") return json(RESOURCES);
    if (url.pathname === "/apis/x.example.com/v1/namespaces/default/widgets/w1") return json(widget);
    if (url.pathname === "/apis/x.example.com/v1/namespaces/default/widgets" && url.searchParams.get("watch") === "true") {
      // A watch: one event now, the next only once the client has seen the first (it stays open until the client goes).
      res.writeHead(200, { "content-type": "application/json" });
      res.write(JSON.stringify({ type: "ADDED", object: widget }) + "\n");
      setTimeout(() => res.write(JSON.stringify({ type: "MODIFIED", object: { ...widget, color: "red" } }) + "\n"), 300);
      return;
    }
    if (url.pathname.endsWith("/widgets")) {
      if ((req.headers.accept ?? "").includes("as=Table")) {
        return json({
          kind: "Table", apiVersion: "meta.k8s.io/v1", metadata: {},
          columnDefinitions: [{ name: "Name", type: "string", format: "name", description: "", priority: 0 }, { name: "Color", type: "string", format: "", description: "", priority: 0 }],
          rows: [{ cells: ["w1", "blue"], object: { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: widget.metadata } }],
        });
      }
      return json({ kind: "WidgetList", apiVersion: "x.example.com/v1", metadata: { resourceVersion: "7" }, items: [widget] });
    }
    res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code: 404, reason: "NotFound" }));
  });
  // An upgrade (any protocol): switched, then every byte echoed back.
  server.on("upgrade", (req, socket: TLSSocket) => {
    seen.push({ path: req.url ?? "", headers: req.headers, cn: socket.getPeerCertificate()?.subject?.CN as string | undefined, authorized: socket.authorized });
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${req.headers.upgrade}\r\nConnection: Upgrade\r\n\r\n`);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port, ca: pki.ca, seen };
}

