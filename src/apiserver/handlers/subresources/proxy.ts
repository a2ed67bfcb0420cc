// The proxy subresources (declaration: src/api/subresources/proxy.ts):
// `nodes/[SCHEME:]NAME[:PORT]/proxy/PATH`, `pods/...` and `services/...`
// carry the request (any method, its body and query, or an HTTP/1.1 upgrade
// such as a WebSocket) to a backend and its answer back, as upstream's
// ResourceLocation and upgrade-aware proxy do:
//   - nodes: the node agent's port (no port, or the agent's own) over TLS
//     with the API server's agent client certificate; another port of the
//     node over the scheme named (http by default) with no credentials;
//   - pods: the pod's IP, at the port named, else the first container port
//     the pod declares, else none (80);
//   - services: a ready address of the service's Endpoints, at the endpoint
//     port whose name is the service port named (by name or number).
// Backends are reached only at global unicast addresses (upstream's
// IsProxyableIP: no loopback, link-local or unspecified). The caller's
// credentials and impersonation headers are not passed on; the backend is
// told the proxy path in X-Forwarded-Uri. As upstream's proxy transport,
// redirects' Location and the links of HTML answers that point at the
// backend get the proxy path in front (proxy-rewrite.ts), and the backend's
// CORS headers are dropped.

import { lookup } from "node:dns/promises";
import { posix } from "node:path";
import { request as httpRequest, Agent as HttpAgent, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { request as httpsRequest, Agent as HttpsAgent } from "node:https";
import { isIPv4, isIPv6, connect as netConnect } from "node:net";
import type { Duplex } from "node:stream";
import { connect as tlsConnect } from "node:tls";
import type { Endpoints, Node, Pod, Service } from "../../../api/core/types.js";
import { ApiError, badRequest, buildStatus, serviceUnavailable } from "../../../machinery/index.js";
import { agentBaseUrl } from "../../node-agents.js";
import type { ResourceRequest, UpgradeRequest } from "../request.js";
import { DROPPED_REQUEST_HEADERS, spliceUpgrade } from "../upgrade-splice.js";
import { CORS_HEADERS, htmlBodyRewriter, isHtml, rewriteUrl, type UrlRewriteContext } from "./proxy-rewrite.js";

/** Where a proxied request goes: `base` is SCHEME://HOST:PORT; `agent` when it is the node agent's port (our client certificate). */
export interface ProxyLocation {
  readonly base: URL;
  readonly agent: boolean;
}

const SCHEMES = new Set(["", "http", "https"]);

/** upstream's SplitSchemeNamePort: "name", "name:port" or "scheme:name:port" (scheme "", http or https), else undefined. */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(":");
  let scheme = "";
  let name: string;
  let port = "";
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) [name, port] = parts as [string, string];
  else if (parts.length === 3) [scheme, name, port] = parts as [string, string, string];
  else return undefined;
  return name !== "" && SCHEMES.has(scheme) ? { scheme, name, port } : undefined;
}

/** upstream's IsProxyableIP: a global unicast address, else 400 "address not allowed". */
export function checkProxyableIP(ip: string): void {
  if (!isGlobalUnicast(ip)) throw badRequest("address not allowed");
}

function isGlobalUnicast(ip: string): boolean {
  if (isIPv4(ip)) {
    const [a, b] = ip.split(".").map(Number) as [number, number];
    return !(a === 0 || a === 127 || (a === 169 && b === 254) || a >= 224 || ip === "255.255.255.255");
  }
  if (isIPv6(ip)) {
    const v = ip.toLowerCase();
    if (v === "::" || v === "::1") return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(v);
    if (mapped) return isGlobalUnicast(mapped[1]!);
    return !(v.startsWith("fe8") || v.startsWith("fe9") || v.startsWith("fea") || v.startsWith("feb") || v.startsWith("ff"));
  }
  return false;
}

/** upstream's IsProxyableHostname: every address the name resolves to is proxyable. */
async function checkProxyableHost(host: string): Promise<void> {
  if (isIPv4(host) || isIPv6(host)) return checkProxyableIP(host);
  let addresses;
  try {
    addresses = await lookup(host, { all: true });
  } catch (err) {
    throw badRequest((err as Error).message);
  }
  for (const a of addresses) checkProxyableIP(a.address);
}

function hostPort(ip: string, port: string): string {
  const host = ip.includes(":") ? `[${ip}]` : ip;
  return port === "" ? host : `${host}:${port}`;
}

/** The backend of `r`'s object (its name as sent, with scheme and port), or an ApiError. */
export async function proxyLocation(r: Pick<ResourceRequest, "store" | "nodes" | "endpoints" | "path">, id: string): Promise<ProxyLocation> {
  const resource = r.store.def.group === "" ? r.store.def.resource : "";
  const what = resource === "nodes" ? "node" : resource === "pods" ? "pod" : "service";
  const parts = splitSchemeNamePort(id);
  if (parts === undefined) throw badRequest(`invalid ${what} request ${JSON.stringify(id)}`);
  const { scheme, name } = parts;
  let { port } = parts;
  if (resource === "nodes") {
    const node = (await r.store.get(undefined, name)).object as Node;
    const agentBase = new URL(agentBaseUrl(node));
    const host = agentBase.hostname.replace(/^\[|\]$/g, "");
    await checkProxyableHost(host);
    if (port === "" || port === agentBase.port) return { base: agentBase, agent: true };
    return { base: new URL(`${scheme || "http"}://${hostPort(host, port)}`), agent: false };
  }
  if (resource === "pods") {
    const pod = (await r.store.get(r.path.namespace, name)).object as Pod;
    if (port === "") {
      const declared = (pod.spec?.containers ?? []).find((c) => (c.ports ?? []).length > 0)?.ports?.[0]?.containerPort;
      if (declared !== undefined) port = String(declared);
    }
    const ip = pod.status?.podIP ?? pod.status?.podIPs?.[0]?.ip ?? "";
    checkProxyableIP(ip);
    return { base: new URL(`${scheme || "http"}://${hostPort(ip, port)}`), agent: false };
  }
  // services
  if (/^-?\d+$/.test(port)) {
    const svc = (await r.store.get(r.path.namespace, name)).object as Service;
    const number = Number(port);
    const found = (svc.spec?.ports ?? []).find((p) => p.port === number);
    if (found === undefined) throw serviceUnavailable(`no service port ${number} found for service ${JSON.stringify(name)}`);
    port = found.name ?? "";
  }
  if (r.endpoints === undefined) throw serviceUnavailable(`no endpoints available for service ${JSON.stringify(name)}`);
  const eps = (await r.endpoints.get(r.path.namespace, name)).object as Endpoints;
  const subsets = eps.subsets ?? [];
  if (subsets.length === 0) throw serviceUnavailable(`no endpoints available for service ${JSON.stringify(name)}`);
  const start = Math.floor(Math.random() * subsets.length);
  for (let i = 0; i < subsets.length; i++) {
    const ss = subsets[(start + i) % subsets.length]!;
    const addresses = (ss.addresses ?? []).filter((a) => a.ip);
    const epPort = (ss.ports ?? []).find((p) => (p.name ?? "") === port);
    if (addresses.length === 0 || epPort?.port === undefined) continue;
    const address = addresses[Math.floor(Math.random() * addresses.length)]!;
    return { base: new URL(`${scheme || "http"}://${hostPort(address.ip!, String(epPort.port))}`), agent: false };
  }
  throw serviceUnavailable(`no endpoints available for service ${JSON.stringify(id)}`);
}

/** Hop-by-hop headers (RFC 9110 7.6.1): never forwarded, in either direction. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authenticate"]);

export function forwardable(name: string): boolean {
  return !name.startsWith(":") && !HOP_BY_HOP.has(name);
}

/** The request's headers as the backend sees them: no hop-by-hop headers, no credentials, an X-Forwarded-For. */
export function backendRequestHeaders(headers: IncomingHttpHeaders, remoteAddress: string | undefined): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || !forwardable(name) || DROPPED_REQUEST_HEADERS.has(name) || name.startsWith("impersonate-extra-")) continue;
    out[name] = value;
  }
  if (remoteAddress !== undefined) {
    const prior = headers["x-forwarded-for"];
    out["x-forwarded-for"] = prior === undefined ? remoteAddress : `${Array.isArray(prior) ? prior.join(", ") : prior}, ${remoteAddress}`;
  }
  return out;
}

/**
 * The path after `/proxy` as sent ("" when the URL ends at `/proxy`), the raw
 * query, and the proxy path in front of it (`/api/v1/namespaces/NS/pods/NAME/proxy`).
 */
function backendPath(r: { path: { subpath?: string }; req: { url?: string } }): { path: string; query: string; prefix: string } {
  const raw = r.req.url ?? "";
  const q = raw.indexOf("?");
  const pathname = q < 0 ? raw : raw.slice(0, q);
  const query = q < 0 ? "" : raw.slice(q);
  const subpath = r.path.subpath;
  const prefix = subpath !== undefined && pathname.endsWith(subpath) ? pathname.slice(0, pathname.length - subpath.length) : pathname.replace(/\/$/, "");
  return { path: subpath ?? (pathname.endsWith("/") ? "/" : ""), query, prefix };
}

/** How links to the backend are recognized and rewritten (the backend's host with and without its default port). */
function rewriteContext(base: URL, prefix: string, requestHost: string | undefined): UrlRewriteContext {
  const backendHosts = [base.host];
  if (base.port === "") backendHosts.push(`${base.host}:${base.protocol === "https:" ? 443 : 80}`);
  return { prefix, backendHosts, requestHost };
}

const plainHttp = new HttpAgent({ keepAlive: true });
// As upstream's proxy transport: a backend's serving certificate is not verified.
const plainHttps = new HttpsAgent({ keepAlive: true, rejectUnauthorized: false });

function reachError(err: Error): ApiError {
  return serviceUnavailable(`error trying to reach service: ${err.message}`);
}

/** A plain request through `pods|services|nodes/NAME/proxy[/PATH]`: answered by the backend, status and headers and body. */
export async function proxyRequest(r: ResourceRequest & { readonly name: string }): Promise<void> {
  const location = await proxyLocation(r, r.name);
  const method = (r.req.method ?? "GET").toUpperCase();
  const { path, query, prefix } = backendPath(r);
  // upstream (issue 4958): GET or HEAD of the bare proxy path is sent on to the path with a "/".
  if (path === "" && (method === "GET" || method === "HEAD")) {
    const pathname = (r.req.url ?? "").split("?")[0]!;
    r.res.writeHead(301, { location: `${pathname}/${query}` });
    r.res.end();
    return;
  }
  const url = new URL(`${path || "/"}${query}`, location.base);
  const headers = backendRequestHeaders(r.req.headers, r.req.socket?.remoteAddress);
  // upstream's X-Forwarded-Uri: where the backend's page is, as the client sees it.
  const forwarded = posix.join(prefix, path || "/");
  headers["x-forwarded-uri"] = (path || "/").endsWith("/") && !forwarded.endsWith("/") ? `${forwarded}/` : forwarded;
  const out: ClientRequest = location.agent
    ? r.agents.request(url, method, headers)
    : (url.protocol === "https:" ? httpsRequest : httpRequest)(url, { method, headers, agent: url.protocol === "https:" ? plainHttps : plainHttp });
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    out.once("response", resolve);
    out.once("error", (err) => reject(reachError(err)));
    r.req.pipe(out);
  });
  const answer: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined && forwardable(name) && !CORS_HEADERS.has(name)) answer[name] = value;
  }
  // The address the client wrote: Host over HTTP/1.1, :authority over HTTP/2 (kubectl's).
  const authority = r.req.headers.host ?? (r.req.headers[":authority"] as string | undefined);
  const links = rewriteContext(url, prefix, authority);
  const rewrite = (target: string) => rewriteUrl(target, links);
  // A redirect's Location is rewritten and its body passed on; otherwise an HTML body has its links rewritten as it streams.
  const redirect = typeof answer["location"] === "string" ? answer["location"] : undefined;
  const body = redirect !== undefined || method === "HEAD" || !isHtml(answer["content-type"]) ? undefined : htmlBodyRewriter(answer["content-encoding"] as string | undefined, rewrite);
  if (redirect !== undefined) answer["location"] = rewrite(redirect);
  if (body !== undefined) delete answer["content-length"];
  r.res.writeHead(response.statusCode ?? 502, answer);
  await new Promise<void>((resolve) => {
    const done = () => resolve();
    const failed = () => {
      r.res.destroy();
      done();
    };
    response.on("error", failed);
    body?.on("error", failed);
    r.res.once("close", () => {
      response.destroy();
      done();
    });
    (body === undefined ? response : response.pipe(body)).pipe(r.res as NodeJS.WritableStream).once("finish", done);
  });
}

/** An HTTP/1.1 upgrade (WebSocket) through the proxy subresource, joined to the backend byte for byte. */
export async function proxyUpgrade(r: UpgradeRequest): Promise<void> {
  const location = await proxyLocation(r, r.name);
  const { path, query } = backendPath(r);
  const { base } = location;
  const host = base.hostname.replace(/^\[|\]$/g, "");
  const port = Number(base.port || (base.protocol === "https:" ? 443 : 80));
  let backend: Duplex;
  try {
    backend = location.agent
      ? await r.agents.dial(base)
      : await new Promise<Duplex>((resolve, reject) => {
          const socket = base.protocol === "https:"
            ? tlsConnect({ host, port, rejectUnauthorized: false, ALPNProtocols: ["http/1.1"] }, () => resolve(socket))
            : netConnect({ host, port }, () => resolve(socket));
          socket.once("error", reject);
        });
  } catch (err) {
    const message = `error dialing backend: ${(err as Error).message}`;
    throw new ApiError(buildStatus({ code: 503, reason: "ServiceUnavailable", message, details: { causes: [{ message }] } }));
  }
  backend.removeAllListeners("error");
  spliceUpgrade(r, backend, `${path || "/"}${query}`, base.host);
}
