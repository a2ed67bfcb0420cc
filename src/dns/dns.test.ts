// Cluster DNS: lookups over a small cluster view (cluster IPs, headless
// endpoints and their hostnames, SRV for named ports, ExternalName CNAMEs,
// pod names, PTR for cluster and endpoint addresses, NXDOMAIN), then the
// server over real UDP and TCP sockets: answers, REFUSED for clients it does
// not serve, and forwarding of other names to an upstream resolver (a real UDP
// server in the test standing in for it); then `dig` (when installed) asking
// the spec's questions with a resolv.conf search path over UDP and TCP.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createSocket, type Socket } from "node:dgram";
import { connect, createServer as createTcpServer } from "node:net";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { existsSync } from "node:fs";
import * as dnsPacket from "dns-packet";
import type { Service } from "../api/core/types.js";
import type { EndpointSlice } from "../api/discovery/types.js";
import { lookup, reverseAddress, type ClusterView } from "./records.js";
import { startDnsServer, type DnsServer } from "./server.js";
import { Indexer } from "../client/index.js";
import { SERVICE_SLICES_INDEX, dnsServiceName, privateOrLocal, serviceSlicesIndex } from "./cluster-dns.js";
import { namingFor } from "../machinery/naming.js";

const services: Record<string, Service> = {
  "default/web": { apiVersion: "v1", kind: "Service", metadata: { name: "web", namespace: "default" }, spec: { clusterIP: "10.96.0.20", ports: [{ name: "http", port: 80, protocol: "TCP" }] } },
  "default/db": { apiVersion: "v1", kind: "Service", metadata: { name: "db", namespace: "default" }, spec: { clusterIP: "None", ports: [{ name: "pg", port: 5432 }] } },
  "default/ext": { apiVersion: "v1", kind: "Service", metadata: { name: "ext", namespace: "default" }, spec: { type: "ExternalName", externalName: "example.org" } },
};
const dbSlice: EndpointSlice = {
  apiVersion: "discovery.orch.io/v1", kind: "EndpointSlice", metadata: { name: "db-1", namespace: "default" }, addressType: "IPv4",
  endpoints: [{ addresses: ["10.89.0.7"], hostname: "db-0", conditions: { ready: true } }, { addresses: ["10.89.0.8"], conditions: { ready: true } }, { addresses: ["10.89.0.9"], conditions: { ready: false } }],
};
dbSlice.ports = [{ name: "pg", port: 5432, protocol: "TCP" }];
const view: ClusterView = {
  service: (ns, name) => services[`${ns}/${name}`],
  slices: (_ns, name) => (name === "db" ? [dbSlice] : []),
  namespaceExists: (ns) => ns === "default",
  servicesByIP: (ip) => Object.values(services).filter((s) => s.spec?.clusterIP === ip),
  endpointsByAddress: (ip) => (dbSlice.endpoints ?? []).filter((e) => e.addresses?.includes(ip) && e.conditions?.ready !== false).map((e) => ({ namespace: "default", service: "db", ...(e.hostname ? { hostname: e.hostname } : {}) })),
};
const q = (name: string, type = "A") => lookup(view, "cluster.local", name, type);

test("lookups: cluster IPs, headless endpoints and hostnames, SRV, CNAME, NXDOMAIN, names outside the domain", () => {
  assert.deepEqual(q("web.default.svc.cluster.local."), { authoritative: true, exists: true, answers: [{ type: "A", name: "web.default.svc.cluster.local", address: "10.96.0.20" }], additional: [] });
  assert.deepEqual(q("db.default.svc.cluster.local").answers.map((a) => (a as { address: string }).address), ["10.89.0.7", "10.89.0.8"], "ready endpoints only");
  assert.deepEqual(q("db-0.db.default.svc.cluster.local").answers, [{ type: "A", name: "db-0.db.default.svc.cluster.local", address: "10.89.0.7" }]);
  assert.deepEqual(q("_http._tcp.web.default.svc.cluster.local", "SRV").answers, [{ type: "SRV", name: "_http._tcp.web.default.svc.cluster.local", port: 80, weight: 100, target: "web.default.svc.cluster.local" }]);
  assert.deepEqual(q("_http._tcp.web.default.svc.cluster.local", "SRV").additional, [{ type: "A", name: "web.default.svc.cluster.local", address: "10.96.0.20" }], "the target's address rides along");
  assert.deepEqual(q("ext.default.svc.cluster.local").answers, [{ type: "CNAME", name: "ext.default.svc.cluster.local", target: "example.org" }]);
  assert.deepEqual(q("web.default.svc.cluster.local", "AAAA"), { authoritative: true, exists: true, answers: [], additional: [] }, "the name exists: NOERROR, no data");
  assert.deepEqual(q("nope.default.svc.cluster.local"), { authoritative: true, answers: [], additional: [], exists: false });
  assert.equal(q("default.svc.cluster.local").exists, true);
  assert.equal(q("WEB.Default.svc.cluster.local").answers.length, 1, "case does not matter");
  assert.equal(q("example.org").authoritative, false);
});

test("headless services: SRV per ready endpoint (hostname, else dashed address) with the endpoint port; endpoint names; no endpoints is NXDOMAIN", () => {
  assert.deepEqual(q("_pg._tcp.db.default.svc.cluster.local", "SRV").answers.map((a) => a.type === "SRV" && [a.target, a.port, a.weight]), [["db-0.db.default.svc.cluster.local", 5432, 50], ["10-89-0-8.db.default.svc.cluster.local", 5432, 50]]);
  assert.deepEqual(q("_pg._tcp.db.default.svc.cluster.local", "SRV").additional.map((a) => a.type === "A" && [a.name, a.address]), [["db-0.db.default.svc.cluster.local", "10.89.0.7"], ["10-89-0-8.db.default.svc.cluster.local", "10.89.0.8"]]);
  assert.equal(q("db.default.svc.cluster.local", "SRV").answers.length, 2, "SRV on the service's own name: every port");
  assert.deepEqual(q("10-89-0-8.db.default.svc.cluster.local").answers.map((a) => a.type === "A" && a.address), ["10.89.0.8"]);
  assert.equal(q("10-89-0-9.db.default.svc.cluster.local").exists, false, "not ready: not named");
  assert.equal(q("_pg._udp.db.default.svc.cluster.local", "SRV").exists, false, "wrong protocol");
  assert.equal(q("_http._tcp.db.default.svc.cluster.local", "SRV").exists, false, "no such port");
  const empty = lookup({ ...view, slices: () => [] }, "cluster.local", "db.default.svc.cluster.local", "A");
  assert.equal(empty.exists, false, "a headless service without ready endpoints is NXDOMAIN, as upstream");
});

test("pod names (a-b-c-d.<ns>.pod.<domain>), PTR for cluster IPs and endpoint addresses, reverse names of other addresses not ours", () => {
  assert.deepEqual(q("10-89-0-44.default.pod.cluster.local").answers, [{ type: "A", name: "10-89-0-44.default.pod.cluster.local", address: "10.89.0.44" }]);
  assert.equal(q("10-89-0-44.nons.pod.cluster.local").exists, false, "unknown namespace");
  assert.equal(q("not-an-ip.default.pod.cluster.local").exists, false);
  assert.deepEqual(q("20.0.96.10.in-addr.arpa", "PTR").answers, [{ type: "PTR", name: "20.0.96.10.in-addr.arpa", target: "web.default.svc.cluster.local" }]);
  assert.deepEqual(q("7.0.89.10.in-addr.arpa.", "PTR").answers, [{ type: "PTR", name: "7.0.89.10.in-addr.arpa", target: "db-0.db.default.svc.cluster.local" }]);
  assert.deepEqual(q("8.0.89.10.in-addr.arpa", "PTR").answers.map((a) => a.type === "PTR" && a.target), ["10-89-0-8.db.default.svc.cluster.local"]);
  assert.equal(q("9.0.89.10.in-addr.arpa", "PTR").authoritative, false, "a not-ready endpoint's address goes to the upstream resolvers");
  assert.equal(q("1.1.1.1.in-addr.arpa", "PTR").authoritative, false);
  assert.equal(q("something.svc.example.cluster.local").exists, false, "neither svc nor pod under the domain");
  assert.equal(q("cluster.local", "SOA").exists, true, "the zone apex");
});

test("reverse names of IPv6 addresses (nibbles under ip6.arpa) are read back to the canonical spelling", () => {
  const nibbles = (ip: string) => `${expand(ip).split("").reverse().join(".")}.ip6.arpa`;
  const expand = (ip: string) => { const [h, t] = ip.split("::") as [string, string?]; const hs = h ? h.split(":") : []; const ts = t ? t.split(":") : []; return [...hs, ...Array(8 - hs.length - ts.length).fill("0"), ...ts].map((g) => g.padStart(4, "0")).join(""); };
  assert.equal(reverseAddress(nibbles("fd00:10:96::a")), "fd00:10:96::a");
  assert.equal(reverseAddress(nibbles("2001:db8::1:0:0:1")), "2001:db8::1:0:0:1");
  assert.equal(reverseAddress("1.2.3.in-addr.arpa"), undefined, "a partial name is no address");
  assert.equal(reverseAddress("300.2.3.4.in-addr.arpa"), undefined);
});

test("a service's slices are found by namespace and service-name label; unlabelled slices are in no bucket", () => {
  const label = "orch.io/service-name";
  const slice = (namespace: string, name: string, service?: string): EndpointSlice => ({
    apiVersion: "discovery.orch.io/v1", kind: "EndpointSlice", metadata: { name, namespace, ...(service ? { labels: { [label]: service } } : {}) }, addressType: "IPv4",
  });
  const idx = new Indexer<EndpointSlice>();
  idx.addIndexers({ [SERVICE_SLICES_INDEX]: serviceSlicesIndex(label) });
  for (const s of [slice("default", "db-1", "db"), slice("default", "db-2", "db"), slice("other", "db-1", "db"), slice("default", "mine")]) idx.set(`${s.metadata.namespace}/${s.metadata.name}`, s);
  assert.deepEqual(idx.indexKeys(SERVICE_SLICES_INDEX, "default/db"), ["default/db-1", "default/db-2"]);
  assert.deepEqual(idx.indexKeys(SERVICE_SLICES_INDEX, "other/db"), ["other/db-1"]);
  assert.deepEqual(idx.indexValues(SERVICE_SLICES_INDEX).sort(), ["default/db", "other/db"]);
});

test("clients served: loopback, private ranges and this host; not public addresses", () => {
  assert.deepEqual(["127.0.0.1", "10.89.0.4", "172.20.1.1", "192.168.1.5", "100.64.0.1", "::1", "fd00::5", "::ffff:10.1.2.3"].filter((ip) => !privateOrLocal(ip)), []);
  assert.deepEqual(["8.8.8.8", "172.32.0.1", "2001:4860::8888"].filter(privateOrLocal), []);
});

let upstream: Socket;
let upstreamPort: number;
let server: DnsServer;
let refused: DnsServer;
before(async () => {
  // A stand-in upstream resolver: answers every A query with 198.51.100.1.
  upstream = createSocket("udp4");
  upstream.on("message", (msg, r) => {
    const p = dnsPacket.decode(msg);
    upstream.send(dnsPacket.encode({ type: "response", id: p.id, flags: dnsPacket.RECURSION_AVAILABLE, questions: p.questions, answers: [{ type: "A", name: p.questions![0]!.name, ttl: 60, data: "198.51.100.1" }] }), r.port, r.address);
  });
  upstreamPort = await new Promise<number>((res) => upstream.bind(0, "127.0.0.1", () => res(upstream.address().port)));
  server = await startDnsServer({ address: "127.0.0.1", port: 0, domain: "cluster.local", view, allowed: () => true, upstreams: [] });
  refused = await startDnsServer({ address: "127.0.0.1", port: 0, domain: "cluster.local", view, allowed: () => false, upstreams: [] });
});
after(async () => {
  upstream.close();
  await server.close();
  await refused.close();
});

function udpQuery(port: number, name: string, type: "A" | "SRV" = "A"): Promise<dnsPacket.DecodedPacket & { rcode: string }> {
  return new Promise((resolve, reject) => {
    const s = createSocket("udp4");
    const timer = setTimeout(() => { s.close(); reject(new Error("no answer")); }, 3000);
    s.on("message", (m) => { clearTimeout(timer); s.close(); resolve(dnsPacket.decode(m) as dnsPacket.DecodedPacket & { rcode: string }); });
    s.send(dnsPacket.encode({ type: "query", id: 42, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name }] }), port, "127.0.0.1");
  });
}

test("the server answers over UDP (authoritative, TTL 5) and TCP; NXDOMAIN; REFUSED for clients it does not serve", async () => {
  const a = await udpQuery(server.port, "web.default.svc.cluster.local");
  assert.deepEqual([a.id, a.rcode, a.flag_aa, a.answers?.map((x) => [x.type, (x as { data: unknown }).data, (x as { ttl: number }).ttl])], [42, "NOERROR", true, [["A", "10.96.0.20", 5]]]);
  assert.equal((await udpQuery(server.port, "nope.default.svc.cluster.local")).rcode, "NXDOMAIN");
  const srv = await udpQuery(server.port, "_http._tcp.web.default.svc.cluster.local", "SRV");
  assert.deepEqual((srv.answers?.[0] as { data: unknown }).data, { priority: 0, weight: 100, port: 80, target: "web.default.svc.cluster.local" });
  assert.equal((await udpQuery(refused.port, "web.default.svc.cluster.local")).rcode, "REFUSED");

  // TCP: two length-prefixed queries on one connection.
  const answers = await new Promise<dnsPacket.DecodedPacket[]>((resolve, reject) => {
    const sock = connect(server.port, "127.0.0.1");
    const frame = (id: number, name: string) => { const b = dnsPacket.encode({ type: "query", id, questions: [{ type: "A", name }] }); const l = Buffer.alloc(2); l.writeUInt16BE(b.length); return Buffer.concat([l, b]); };
    let buf = Buffer.alloc(0);
    const got: dnsPacket.DecodedPacket[] = [];
    sock.on("data", (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        got.push(dnsPacket.decode(buf.subarray(2, 2 + buf.readUInt16BE(0))));
        buf = buf.subarray(2 + buf.readUInt16BE(0));
      }
      if (got.length === 2) { sock.destroy(); resolve(got); }
    });
    sock.on("error", reject);
    sock.write(Buffer.concat([frame(1, "web.default.svc.cluster.local"), frame(2, "db-0.db.default.svc.cluster.local")]));
  });
  assert.deepEqual(answers.map((p) => [p.id, (p.answers?.[0] as { data: unknown }).data]).sort(), [[1, "10.96.0.20"], [2, "10.89.0.7"]]);
});

test("names outside the cluster domain are forwarded to the upstream resolver as they are; without one, SERVFAIL", async () => {
  const fwd = await startDnsServer({ address: "127.0.0.1", port: 0, domain: "cluster.local", view, allowed: () => true, upstreams: [`127.0.0.1:${upstreamPort}`] });
  const none = await startDnsServer({ address: "127.0.0.1", port: 0, domain: "cluster.local", view, allowed: () => true, upstreams: [] });
  try {
    const r = await udpQuery(fwd.port, "example.org");
    assert.deepEqual([r.id, r.rcode, r.answers?.map((a) => (a as { data: unknown }).data)], [42, "NOERROR", ["198.51.100.1"]]);
    assert.equal((await udpQuery(none.port, "example.org")).rcode, "SERVFAIL");
  } finally {
    await fwd.close();
    await none.close();
  }
});

test("the cluster DNS Service is named by the table: orch-dns, upstream's kube-dns", () => {
  assert.equal(dnsServiceName(namingFor()), "orch-dns");
  assert.equal(dnsServiceName(namingFor("k8s.io")), "kube-dns");
});

test("no answer carries the zone's SOA; an answer larger than the client's UDP size goes out truncated (TC) and whole over TCP", async () => {
  const many: EndpointSlice = { ...dbSlice, endpoints: Array.from({ length: 60 }, (_, i) => ({ addresses: [`10.89.1.${i + 1}`], conditions: { ready: true } })) };
  const big = await startDnsServer({ address: "127.0.0.1", port: 0, domain: "cluster.local", view: { ...view, slices: (_ns, name) => (name === "db" ? [many] : []) }, allowed: () => true, upstreams: [] });
  try {
    const nx = await udpQuery(server.port, "nope.default.svc.cluster.local");
    assert.deepEqual([nx.rcode, nx.authorities?.map((a) => [a.type, a.name])], ["NXDOMAIN", [["SOA", "cluster.local"]]]);
    const nodata = await udpQuery(server.port, "web.default.svc.cluster.local", "SRV" as "A");
    assert.equal(nodata.rcode, "NOERROR");
    const truncated = await udpQuery(big.port, "db.default.svc.cluster.local");
    assert.deepEqual([truncated.rcode, truncated.flag_tc, truncated.answers?.length], ["NOERROR", true, 0], "60 A records do not fit 512 bytes");
    const whole = await tcpQuery(big.port, "db.default.svc.cluster.local");
    assert.deepEqual([whole.flag_tc, whole.answers?.length], [false, 60]);
  } finally {
    await big.close();
  }
});

function tcpQuery(port: number, name: string, type = "A"): Promise<dnsPacket.DecodedPacket> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    const b = dnsPacket.encode({ type: "query", id: 7, questions: [{ type: type as "A", name }] });
    const l = Buffer.alloc(2);
    l.writeUInt16BE(b.length);
    let buf = Buffer.alloc(0);
    sock.on("data", (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        sock.destroy();
        resolve(dnsPacket.decode(buf.subarray(2, 2 + buf.readUInt16BE(0))));
      }
    });
    sock.on("error", reject);
    sock.write(Buffer.concat([l, b]));
  });
}

test("garbage, responses and multi-question messages do not take the server down", async () => {
  const s = createSocket("udp4");
  try {
    s.send(Buffer.from("not dns at all"), server.port, "127.0.0.1");
    s.send(dnsPacket.encode({ type: "response", id: 1, questions: [{ type: "A", name: "web.default.svc.cluster.local" }] }), server.port, "127.0.0.1");
    const two = await new Promise<dnsPacket.DecodedPacket & { rcode: string }>((resolve) => {
      s.on("message", (m) => resolve(dnsPacket.decode(m) as dnsPacket.DecodedPacket & { rcode: string }));
      s.send(dnsPacket.encode({ type: "query", id: 9, questions: [{ type: "A", name: "a.cluster.local" }, { type: "A", name: "b.cluster.local" }] }), server.port, "127.0.0.1");
    });
    assert.deepEqual([two.id, two.rcode], [9, "FORMERR"], "the only answer is to the well-formed query");
    assert.equal((await udpQuery(server.port, "web.default.svc.cluster.local")).rcode, "NOERROR", "still serving");
  } finally {
    s.close();
  }
});

// The conformance probers' commands, as dns_common.go builds them (`dig +notcp|+tcp +noall +answer +search NAME TYPE`),
// with the pod's first search domain and ndots:5 given on the command line instead of a resolv.conf.
const noDig = !existsSync("/usr/bin/dig") ? "dig (bind9-dnsutils) is not installed on this machine" : false;
test("dig with the pod's search path and ndots:5 finds the spec's names over UDP and TCP: service A, SRV of both kinds, PTR, pod A", { skip: noDig }, async () => {
  // dig runs beside the server in this process: asynchronously, or the server could not answer it.
  const dig = async (...args: string[]) => (await promisify(execFile)("dig", [`@127.0.0.1`, "-p", String(server.port), "+noall", "+answer", "+search", "+domain=default.svc.cluster.local", "+ndots=5", "+tries=1", "+time=2", ...args], { encoding: "utf8" })).stdout.trim();
  for (const transport of ["+notcp", "+tcp"]) {
    assert.match(await dig(transport, "db.default.svc.cluster.local", "A"), /^db\.default\.svc\.cluster\.local\.\s+5\s+IN\s+A\s+10\.89\.0\.7$/m, transport);
    assert.match(await dig(transport, "_pg._tcp.db.default.svc.cluster.local", "SRV"), /SRV\s+0 50 5432 db-0\.db\.default\.svc\.cluster\.local\.$/m, transport);
    assert.match(await dig(transport, "_http._tcp.web.default.svc.cluster.local", "SRV"), /SRV\s+0 100 80 web\.default\.svc\.cluster\.local\.$/m, transport);
    assert.match(await dig(transport, "20.0.96.10.in-addr.arpa.", "PTR"), /PTR\s+web\.default\.svc\.cluster\.local\.$/m, transport);
    assert.match(await dig(transport, "web", "A"), /^web\.default\.svc\.cluster\.local\.\s+5\s+IN\s+A\s+10\.96\.0\.20$/m, "a short name through the search path");
    assert.match(await dig(transport, "10-89-0-44.default.pod.cluster.local", "A"), /A\s+10\.89\.0\.44$/m, transport);
    assert.equal(await dig(transport, "nope.default.svc.cluster.local", "A"), "", "NXDOMAIN: no answer lines");
  }
});

test("a port whose TCP side is taken: the start fails with EADDRINUSE and leaves the UDP side free (port 0 draws another port then)", async () => {
  const taken = createTcpServer();
  const port = await new Promise<number>((resolve) => taken.listen(0, "127.0.0.1", () => resolve((taken.address() as { port: number }).port)));
  try {
    await assert.rejects(startDnsServer({ address: "127.0.0.1", port, domain: "cluster.local", view, allowed: () => true, upstreams: [] }), { code: "EADDRINUSE" });
  } finally {
    await new Promise((r) => taken.close(r));
  }
  // Had the failed start kept its UDP socket, this one could not bind the port.
  const again = await startDnsServer({ address: "127.0.0.1", port, domain: "cluster.local", view, allowed: () => true, upstreams: [] });
  try {
    assert.equal((await udpQuery(again.port, "web.default.svc.cluster.local")).rcode, "NOERROR");
  } finally {
    await again.close();
  }
});
