// The proxy subresources against a real API server: nodes/NAME/proxy reaches
// a fake node agent over TLS with the API server's client certificate,
// nodes/NAME:PORT another port of the node in plain HTTP, pods/NAME[:PORT]
// the pod's IP, services/NAME:PORT a ready endpoint; every method with its
// body, query and the rest of the path; a WebSocket-style upgrade is carried
// both ways; https backends, links in HTML answers and redirects rewritten
// to the proxy path; bad names, ports and addresses get upstream's errors.
// Backends listen on this host's first non-loopback IPv4 address (upstream
// refuses loopback backends, and so do we).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { networkInterfaces } from "node:os";
import type { AddressInfo } from "node:net";
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import { gunzipSync, gzipSync } from "node:zlib";
import { builtinModules } from "../../../api/index.js";
import { selfSignedServingCert } from "../../../component/pki.js";
import { parsePath } from "../../routing.js";
import { requestAttributes } from "../../filters/request-info.js";
import { startTestServer, type TestServer } from "../../testing/harness.js";
import { checkProxyableIP, splitSchemeNamePort } from "./proxy.js";

const hostIP = Object.values(networkInterfaces()).flat().find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address;

/** A backend that answers with what it saw: method, URL, body, a few headers, and whether a client certificate came. */
function echo(tag: string) {
  return (req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.setEncoding("utf8").on("data", (c: string) => (body += c)).on("end", () => {
      const peer = (req.socket as TLSSocket).getPeerCertificate?.();
      res.writeHead(200, { "content-type": "application/json", "x-backend": tag });
      res.end(JSON.stringify({ tag, method: req.method, url: req.url, body, authorization: req.headers.authorization ?? null, clientCert: peer !== undefined && Object.keys(peer).length > 0 }));
    });
  };
}

const PAGE = '<html><body><a href="/rewriteme">test</a> <img src="/i.png"> <a href="rel">r</a></body></html>';

/** An HTTPS backend with HTML (plain and gzip), a redirect to itself, CORS headers and the X-Forwarded-Uri it was sent. */
function htmlSite(ownOrigin: () => string) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? "/";
    if (path === "/gz") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-encoding": "gzip" });
      return void res.end(gzipSync(PAGE));
    }
    if (path === "/redirect") {
      res.writeHead(302, { location: `${ownOrigin()}/target?x=1` });
      return void res.end();
    }
    if (path === "/elsewhere") {
      res.writeHead(302, { location: "https://example.com/" });
      return void res.end();
    }
    if (path === "/json") {
      res.writeHead(200, { "content-type": "application/json", "access-control-allow-origin": "*", "access-control-allow-methods": "GET", "x-kept": "yes" });
      return void res.end(JSON.stringify({ forwardedUri: req.headers["x-forwarded-uri"] ?? null, link: "/not-html" }));
    }
    res.writeHead(200, { "content-type": "text/html", "content-length": Buffer.byteLength(PAGE) });
    res.end(PAGE);
  };
}

/** Upgrades to "echo": a 101, then every byte back in upper case. */
function acceptUpgrades(server: Server): void {
  server.on("upgrade", (req: IncomingMessage, socket) => {
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\nX-Path: ${req.url}\r\n\r\n`);
    socket.on("data", (d: Buffer) => socket.write(d.toString().toUpperCase()));
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, hostIP, r));
  return (server.address() as AddressInfo).port;
}

describe("proxy subresources", { skip: hostIP === undefined ? "no non-loopback IPv4 address on this host (backends must not be on loopback)" : false }, () => {
  let t: TestServer;
  const servers: Server[] = [];
  let agentPort = 0;
  let nodePort = 0;
  let podPort = 0;
  let tlsPort = 0;

  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    const pair = await selfSignedServingCert();
    const agent = createHttpsServer({ cert: pair.cert, key: pair.key, requestCert: true, rejectUnauthorized: false }, echo("agent"));
    const plainNode = createHttpServer(echo("node-port"));
    const pod = createHttpServer(echo("pod"));
    acceptUpgrades(pod);
    acceptUpgrades(agent);
    const site = createHttpsServer({ cert: pair.cert, key: pair.key }, htmlSite(() => `https://${hostIP}:${tlsPort}`));
    servers.push(agent, plainNode, pod, site);
    [agentPort, nodePort, podPort, tlsPort] = await Promise.all([listen(agent), listen(plainNode), listen(pod), listen(site)]);
    const node = { apiVersion: "v1", kind: "Node", metadata: { name: "n1" }, status: { addresses: [{ type: "InternalIP", address: hostIP }], daemonEndpoints: { kubeletEndpoint: { Port: agentPort } } } };
    assert.equal((await t.request("POST", "/api/v1/nodes", { body: node })).status, 201);
    const noAddress = { apiVersion: "v1", kind: "Node", metadata: { name: "n2" }, status: { addresses: [{ type: "InternalIP", address: "127.0.0.1" }] } };
    assert.equal((await t.request("POST", "/api/v1/nodes", { body: noAddress })).status, 201);
    const podObj = { apiVersion: "v1", kind: "Pod", metadata: { name: "web", namespace: "default" }, spec: { containers: [{ name: "c", image: "x", ports: [{ containerPort: podPort }] }] } };
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/pods", { body: podObj })).status, 201);
    const withIP = await t.request("PATCH", "/api/v1/namespaces/default/pods/web/status", { rawBody: JSON.stringify({ status: { podIP: hostIP, podIPs: [{ ip: hostIP }] } }), headers: { "content-type": "application/merge-patch+json" } });
    assert.equal(withIP.status, 200, withIP.text);
    const pending = { ...podObj, metadata: { name: "pending", namespace: "default" } };
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/pods", { body: pending })).status, 201);
    const svc = { apiVersion: "v1", kind: "Service", metadata: { name: "web", namespace: "default" }, spec: { ports: [{ name: "http", port: 80, targetPort: podPort }], selector: { app: "web" } } };
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/services", { body: svc })).status, 201);
    const eps = { apiVersion: "v1", kind: "Endpoints", metadata: { name: "web", namespace: "default" }, subsets: [{ addresses: [{ ip: hostIP }], ports: [{ name: "http", port: podPort }] }] };
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/endpoints", { body: eps })).status, 201);
    const tlsPod = { apiVersion: "v1", kind: "Pod", metadata: { name: "tls", namespace: "default" }, spec: { containers: [{ name: "c", image: "x", ports: [{ containerPort: tlsPort }] }] } };
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/pods", { body: tlsPod })).status, 201);
    const tlsIP = await t.request("PATCH", "/api/v1/namespaces/default/pods/tls/status", { rawBody: JSON.stringify({ status: { podIP: hostIP, podIPs: [{ ip: hostIP }] } }), headers: { "content-type": "application/merge-patch+json" } });
    assert.equal(tlsIP.status, 200, tlsIP.text);
    const secure = { apiVersion: "v1", kind: "Service", metadata: { name: "secure", namespace: "default" }, spec: { ports: [{ name: "tlsportname1", port: 443, targetPort: tlsPort }] } };
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/services", { body: secure })).status, 201);
    const secureEps = { apiVersion: "v1", kind: "Endpoints", metadata: { name: "secure", namespace: "default" }, subsets: [{ addresses: [{ ip: hostIP }], ports: [{ name: "tlsportname1", port: tlsPort }] }] };
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/endpoints", { body: secureEps })).status, 201);
    const empty = { apiVersion: "v1", kind: "Service", metadata: { name: "empty", namespace: "default" }, spec: { ports: [{ port: 80 }] } };
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/services", { body: empty })).status, 201);
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/endpoints", { body: { apiVersion: "v1", kind: "Endpoints", metadata: { name: "empty", namespace: "default" } } })).status, 201);
  });

  after(async () => {
    for (const s of servers) s.close();
    await t?.close();
  });

  test("nodes/NAME/proxy/PATH: the agent's port, TLS with the API server's client certificate, the caller's token not passed on", async () => {
    const res = await t.request("GET", "/api/v1/nodes/n1/proxy/healthz?verbose=1");
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers["x-backend"], "agent");
    assert.deepEqual(res.json, { tag: "agent", method: "GET", url: "/healthz?verbose=1", body: "", authorization: null, clientCert: true });
    // The agent's own port named explicitly is the same.
    assert.equal((await t.request("GET", `/api/v1/nodes/n1:${agentPort}/proxy/x`)).json.tag, "agent");
  });

  test("nodes/NAME:PORT: another port of the node, plain HTTP, no client certificate", async () => {
    const res = await t.request("POST", `/api/v1/nodes/n1:${nodePort}/proxy/a/b/`, { rawBody: "hello", headers: { "content-type": "text/plain" } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { tag: "node-port", method: "POST", url: "/a/b/", body: "hello", authorization: null, clientCert: false });
  });

  test("pods/NAME/proxy: the pod's IP at its first declared port; every method with its body", async () => {
    for (const method of ["GET", "PUT", "PATCH", "DELETE", "POST"]) {
      const res = await t.request(method, "/api/v1/namespaces/default/pods/web/proxy/some/path?q=1", method === "GET" || method === "DELETE" ? {} : { rawBody: `body-${method}`, headers: { "content-type": "text/plain" } });
      assert.equal(res.status, 200, `${method}: ${res.text}`);
      assert.deepEqual([res.json.tag, res.json.method, res.json.url, res.json.body], ["pod", method, "/some/path?q=1", method === "GET" || method === "DELETE" ? "" : `body-${method}`]);
    }
    assert.equal((await t.request("GET", `/api/v1/namespaces/default/pods/http:web:${podPort}/proxy/`)).json.url, "/");
  });

  test("the bare proxy path: GET is sent on to the path with a slash (301), as upstream", async () => {
    const res = await t.request("GET", "/api/v1/namespaces/default/pods/web/proxy?a=b");
    assert.equal(res.status, 301);
    assert.equal(res.headers.location, "/api/v1/namespaces/default/pods/web/proxy/?a=b");
  });

  test("services/NAME:PORT/proxy: a ready endpoint, the port by name or by number", async () => {
    for (const id of ["web:http", "web:80", "http:web:http"]) {
      const res = await t.request("GET", `/api/v1/namespaces/default/services/${id}/proxy/index.html`);
      assert.equal(res.status, 200, `${id}: ${res.text}`);
      assert.deepEqual([res.json.tag, res.json.url], ["pod", "/index.html"]);
    }
  });

  test("an upgrade through pods/NAME/proxy is carried both ways", async () => {
    const socket = tlsConnect({ host: "127.0.0.1", port: t.server.port, ca: t.server.credentials.caCertPem, servername: "localhost", ALPNProtocols: ["http/1.1"] });
    await new Promise<void>((r, j) => socket.once("secureConnect", r).once("error", j));
    socket.write(`GET /api/v1/namespaces/default/pods/web/proxy/ws?x=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.server.credentials.adminToken}\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`);
    let got = "";
    await new Promise<void>((resolve, reject) => {
      socket.setEncoding("utf8");
      socket.on("data", (d: string) => {
        got += d;
        if (got.includes("\r\n\r\n") && !got.includes("PING")) socket.write("ping");
        if (got.includes("PING")) resolve();
      });
      socket.once("error", reject);
      setTimeout(() => reject(new Error(`no echo: ${JSON.stringify(got)}`)), 5000).unref();
    });
    socket.destroy();
    assert.match(got, /^HTTP\/1\.1 101 /);
    assert.match(got, /X-Path: \/ws\?x=1\r\n/);
  });

  test("bad names, ports and addresses: upstream's errors", async () => {
    const cases: [string, string, number, string][] = [
      ["GET", "/api/v1/nodes/a:b:c:d/proxy/x", 400, 'invalid node request "a:b:c:d"'],
      ["GET", "/api/v1/nodes/ftp:n1:1/proxy/x", 400, 'invalid node request "ftp:n1:1"'],
      ["GET", "/api/v1/namespaces/default/pods/:80/proxy/x", 400, 'invalid pod request ":80"'],
      ["GET", "/api/v1/namespaces/default/services/a:b:c:d/proxy/", 400, 'invalid service request "a:b:c:d"'],
      ["GET", "/api/v1/nodes/nope/proxy/x", 404, 'nodes "nope" not found'],
      ["GET", "/api/v1/nodes/n2/proxy/x", 400, "address not allowed"],
      ["GET", "/api/v1/namespaces/default/pods/pending/proxy/x", 400, "address not allowed"],
      ["GET", "/api/v1/namespaces/default/services/web:81/proxy/", 503, 'no service port 81 found for service "web"'],
      ["GET", "/api/v1/namespaces/default/services/empty/proxy/", 503, 'no endpoints available for service "empty"'],
      ["GET", "/api/v1/namespaces/default/services/web:nope/proxy/", 503, 'no endpoints available for service "web:nope"'],
      ["GET", "/api/v1/namespaces/default/services/nope/proxy/", 404, 'endpoints "nope" not found'], // as upstream: a port number would look the service up first
    ];
    for (const [method, path, code, message] of cases) {
      const res = await t.request(method, path);
      assert.equal(res.status, code, `${path}: ${res.text}`);
      assert.equal(res.json?.message, message, path);
    }
  });

  test("a backend that does not answer: 503 error trying to reach service", async () => {
    const closed = createHttpServer();
    const port = await listen(closed);
    await new Promise<void>((r) => closed.close(() => r()));
    const res = await t.request("GET", `/api/v1/nodes/n1:${port}/proxy/x`);
    assert.equal(res.status, 503, res.text);
    assert.match(res.json.message, /^error trying to reach service: connect ECONNREFUSED /);
  });

  test("a path after any other subresource is not found", async () => {
    const res = await t.request("GET", "/api/v1/namespaces/default/pods/web/status/more");
    assert.equal(res.status, 404);
  });

  test("https backends: pods/https:NAME:PORT and services/https:NAME:PORTNAME dial TLS without verifying the backend's certificate", async () => {
    for (const path of [`/api/v1/namespaces/default/pods/https:tls:${tlsPort}/proxy/json`, "/api/v1/namespaces/default/services/https:secure:tlsportname1/proxy/json"]) {
      const res = await t.request("GET", path);
      assert.equal(res.status, 200, `${path}: ${res.text}`);
    }
    // Plain HTTP to the TLS port is the backend's own answer (Go and Node answer 400), not a rewrite of ours.
    assert.notEqual((await t.request("GET", `/api/v1/namespaces/default/pods/http:tls:${tlsPort}/proxy/json`)).status, 200);
  });

  test("HTML answers: absolute links get the proxy path (plain and gzip bodies), relative ones stay; other types pass unchanged", async () => {
    const prefix = `/api/v1/namespaces/default/pods/https:tls:${tlsPort}/proxy`;
    const want = `<html><body><a href="${prefix}/rewriteme">test</a> <img src="${prefix}/i.png"> <a href="rel">r</a></body></html>`;
    const plain = await t.request("GET", `${prefix}/`);
    assert.equal(plain.status, 200);
    assert.equal(plain.text, want);
    assert.equal(plain.headers["content-length"], undefined, "the backend's length no longer holds");
    const gz = await t.request("GET", `${prefix}/gz`, { headers: { "accept-encoding": "gzip" } });
    assert.equal(gz.headers["content-encoding"], "gzip");
    assert.equal(gunzipSync(gz.body).toString(), want, "decoded, rewritten, encoded again");
    const svc = await t.request("GET", "/api/v1/namespaces/default/services/https:secure:tlsportname1/proxy/");
    assert.equal(svc.text, want.replaceAll(prefix, "/api/v1/namespaces/default/services/https:secure:tlsportname1/proxy"));
    const json = await t.request("GET", `${prefix}/json`);
    assert.equal(json.json.link, "/not-html", "not HTML: untouched");
    assert.equal(json.json.forwardedUri, `${prefix}/json`, "X-Forwarded-Uri: the page as the client addressed it");
    assert.equal(json.headers["access-control-allow-origin"], undefined, "the backend's CORS headers are dropped");
    assert.equal(json.headers["access-control-allow-methods"], undefined);
    assert.equal(json.headers["x-kept"], "yes");
  });

  test("redirects to the backend itself are sent back through the proxy path; to another host unchanged", async () => {
    const prefix = `/api/v1/namespaces/default/pods/https:tls:${tlsPort}/proxy`;
    const res = await t.request("GET", `${prefix}/redirect`);
    assert.equal(res.status, 302);
    assert.equal(res.headers.location, `${prefix}/target?x=1`);
    assert.equal((await t.request("GET", `${prefix}/elsewhere`)).headers.location, "https://example.com/");
  });

  test("discovery lists nodes/proxy, pods/proxy and services/proxy with upstream's verbs", async () => {
    const list = (await t.request("GET", "/api/v1")).json.resources as { name: string; verbs: string[] }[];
    for (const name of ["nodes/proxy", "pods/proxy", "services/proxy"]) {
      assert.deepEqual(list.find((r) => r.name === name)?.verbs, ["create", "delete", "get", "patch", "update"], name);
    }
  });
});

test("the request attributes of a proxy path: subresource proxy, the name as sent, the method's verb", () => {
  const url = new URL("https://x/api/v1/namespaces/d/pods/https:p:8443/proxy/a/b/?q=1");
  const path = parsePath(url.pathname);
  assert.equal(path.kind === "resource" ? path.subpath : undefined, "/a/b/");
  const attrs = requestAttributes("DELETE", url, path);
  assert.deepEqual([attrs.verb, attrs.resource, attrs.subresource, attrs.name, attrs.namespace], ["delete", "pods", "proxy", "https:p:8443", "d"]);
  const node = requestAttributes("GET", new URL("https://x/api/v1/nodes/n/proxy/healthz"), parsePath("/api/v1/nodes/n/proxy/healthz"));
  assert.deepEqual([node.verb, node.resource, node.subresource, node.name], ["get", "nodes", "proxy", "n"]);
});

test("splitSchemeNamePort and checkProxyableIP, as upstream's", () => {
  assert.deepEqual(splitSchemeNamePort("n"), { scheme: "", name: "n", port: "" });
  assert.deepEqual(splitSchemeNamePort("n:80"), { scheme: "", name: "n", port: "80" });
  assert.deepEqual(splitSchemeNamePort("https:n:443"), { scheme: "https", name: "n", port: "443" });
  for (const bad of ["", ":80", "ftp:n:1", "a:b:c:d"]) assert.equal(splitSchemeNamePort(bad), undefined, bad);
  for (const ok of ["10.1.2.3", "192.168.0.1", "8.8.8.8", "fd00::1", "2001:db8::1"]) checkProxyableIP(ok);
  for (const bad of ["127.0.0.1", "0.0.0.0", "169.254.1.1", "224.0.0.1", "::1", "::", "fe80::1", "", "not-an-ip"]) {
    assert.throws(() => checkProxyableIP(bad), /address not allowed/, bad);
  }
});
