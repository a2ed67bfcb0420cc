// The HTTPS server of every component but the API server (which routes the same
// endpoints through its own server): serves ComponentEndpoints on
// --bind-address:--secure-port with --tls-cert-file or a self-signed
// certificate, health and /version to anyone, the rest to authorized scrapers
// (ScraperAuth). Components call startComponentServer; see docs/components.md.

import { readFileSync } from "node:fs";
import { createSecureServer, type Http2SecureServer } from "node:http2";
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { selfSignedServingCert } from "./pki.js";
import { componentRegistry } from "./component-metrics.js";
import { componentEndpoints, isPublicPath, type ComponentEndpoints, type ExtraHandler, type Request, type Response } from "./endpoints.js";
import type { FeatureGates } from "./feature-gates.js";
import type { FlagEntry } from "./flags.js";
import type { HealthCheck } from "./health.js";
import type { MetricsRegistry } from "./metrics/index.js";
import { ScraperAuth, type AccessPolicy, type ApiServerCheck } from "./scraper-auth.js";
import { persistedServingCert, type CertDirOptions } from "./persisted-serving-cert.js";

export interface ComponentServerOptions {
  /** "orch-scheduler": how z-pages and logs name the component. */
  readonly name: string;
  readonly featureGates: FeatureGates;
  readonly bindAddress: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** The component's registry; one from componentRegistry(featureGates) when omitted. */
  readonly metrics?: MetricsRegistry;
  /** The parsed command line, for /flagz. */
  readonly flags?: { list(): readonly FlagEntry[] };
  /** Checks on /livez, /readyz and /healthz besides ping and log. */
  readonly liveChecks?: readonly HealthCheck[];
  /** Checks on /readyz and /healthz only (informer-sync, ...). */
  readonly readyChecks?: readonly HealthCheck[];
  /** PEM certificate (chain) and key; a self-signed pair when omitted. */
  readonly tls?: { readonly cert: string; readonly key: string };
  /** Without `tls`: keep the self-signed pair in this directory and reuse it on the next start (else it is made anew in memory). */
  readonly certDir?: CertDirOptions;
  /** PEM CA for client certificates; the API server's CA from `apiServer` when omitted. */
  readonly clientCa?: string;
  /** Where bearer tokens are checked (`apiServerCheck(kubeconfig)` from src/client/); closed when the server stops. */
  readonly apiServer?: ApiServerCheck;
  /** Who else gets past the certificate check (the node agent's authentication and authorization settings). */
  readonly access?: AccessPolicy;
  /** More read-only paths behind the same auth. */
  readonly extra?: Readonly<Record<string, ExtraHandler>>;
  /** Path prefixes (ending in "/") that take HTTP/1.1 Upgrade requests, behind the same auth (the node agent's /exec/). */
  readonly upgrades?: Readonly<Record<string, UpgradeHandler>>;
  readonly log?: (line: string) => void;
  /** Closes the server when aborted. */
  readonly signal?: AbortSignal;
}

/** Takes over the connection of an authorized Upgrade request (the handshake is the handler's to answer). */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => void | Promise<void>;

export interface RunningComponentServer {
  /** The component's name (orch-scheduler, ...), as in its log lines. */
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly endpoints: ComponentEndpoints;
  readonly metrics: MetricsRegistry;
  /** The certificate (chain) served, so tests and kubeconfigs can trust it. */
  readonly servingCert: string;
  close(): Promise<void>;
}

/** Reads --tls-cert-file/--tls-private-key-file (both or neither). */
export function readTlsFiles(certFile: string, keyFile: string): { cert: string; key: string } | undefined {
  if (certFile === "" && keyFile === "") return undefined;
  if (certFile === "" || keyFile === "") throw new Error("--tls-cert-file and --tls-private-key-file must be given together");
  return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") };
}

export async function startComponentServer(options: ComponentServerOptions): Promise<RunningComponentServer> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const metrics = options.metrics ?? componentRegistry({ featureGates: options.featureGates });
  const endpoints = componentEndpoints({
    component: options.name,
    featureGates: options.featureGates,
    metrics,
    ...(options.flags ? { flags: options.flags } : {}),
    ...(options.extra ? { extra: options.extra } : {}),
  });
  for (const c of options.liveChecks ?? []) endpoints.health.addLive(c);
  for (const c of options.readyChecks ?? []) endpoints.health.addReady(c);
  const wildcard = options.bindAddress === "0.0.0.0" || options.bindAddress === "::" || options.bindAddress === "";
  const names = wildcard ? [] : [options.bindAddress];
  const tls = options.tls ?? (options.certDir ? await persistedServingCert(options.certDir, names) : await selfSignedServingCert(names));
  const clientCa = options.clientCa ?? options.apiServer?.ca;
  const auth = new ScraperAuth({ ...(options.apiServer ? { apiServer: options.apiServer } : {}), ...(options.access ? { access: options.access } : {}) });

  const handle = async (req: Request, res: Response) => {
    const url = new URL(req.url ?? "/", "https://localhost");
    if (req.method !== "GET" && req.method !== "HEAD" && !endpoints.takes(url.pathname, req.method ?? "")) return plain(res, 405, "405 method not allowed\n");
    if (!endpoints.handles(url.pathname)) return plain(res, 404, "404 page not found\n");
    if (!isPublicPath(url.pathname)) {
      const decision = await auth.decide(req, url.pathname);
      if (!decision.allowed) return plain(res, decision.status, `${decision.reason}\n`);
    }
    if (!(await endpoints.serve(req, res, url))) plain(res, 404, "404 page not found\n");
  };
  const server: Http2SecureServer = createSecureServer(
    {
      cert: tls.cert, key: tls.key, allowHTTP1: true,
      // Ask for a client certificate but let token holders and the public paths in without one.
      ...(clientCa ? { ca: clientCa, requestCert: true, rejectUnauthorized: false } : {}),
    },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        log(`${options.name}: internal error on ${req.method} ${req.url}: ${(err as Error)?.stack ?? String(err)}`);
        try {
          plain(res, 500, "internal server error\n");
        } catch {
          res.destroy?.();
        }
      });
    },
  );
  server.on("sessionError", () => {});
  // Upgrades (HTTP/1.1 only: kubectl's WebSocket streams); any other upgrade request is refused as a plain 404.
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => {});
    const url = new URL(req.url ?? "/", "https://localhost");
    const prefix = Object.keys(options.upgrades ?? {}).find((p) => url.pathname.startsWith(p));
    const upgrade = async () => {
      if (prefix === undefined) return rawReply(socket, 404, "404 page not found\n");
      const decision = await auth.decide(req, url.pathname);
      if (!decision.allowed) return rawReply(socket, decision.status, `${decision.reason}\n`);
      await options.upgrades![prefix]!(req, socket, head, url);
    };
    upgrade().catch((err: unknown) => {
      log(`${options.name}: internal error on upgrade ${req.method} ${req.url}: ${(err as Error)?.stack ?? String(err)}`);
      rawReply(socket, 500, "internal server error\n");
    });
  });
  // Scrapers keep connections alive; close() ends them.
  const sockets = new Set<{ destroy(): void }>();
  server.on("secureConnection", (socket: { destroy(): void; once(e: "close", f: () => void): void }) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, wildcard ? undefined : options.bindAddress, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = wildcard ? "127.0.0.1" : options.bindAddress;
  const url = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  log(`${options.name}: serving /healthz, /livez, /readyz, /metrics, /statusz and /flagz on ${url}`);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      auth.close();
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    }));
  options.signal?.addEventListener("abort", () => void close(), { once: true });
  return { name: options.name, url, port, endpoints, metrics, servingCert: tls.cert, close };
}

function plain(res: Response, status: number, body: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

const REASONS: Record<number, string> = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error", 503: "Service Unavailable" };

/** An HTTP/1.1 answer (plain text unless said) written straight to an Upgrade request's socket, which then closes. */
export function rawReply(socket: Duplex, status: number, body: string, contentType = "text/plain; charset=utf-8"): void {
  if (socket.destroyed) return;
  const bytes = Buffer.byteLength(body);
  socket.end(`HTTP/1.1 ${status} ${REASONS[status] ?? "Error"}\r\nContent-Type: ${contentType}\r\nContent-Length: ${bytes}\r\nConnection: close\r\n\r\n${body}`);
}
