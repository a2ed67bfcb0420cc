// The userspace data plane: portals from services (pure), the choice of mode
// from what is on PATH, and (as root) real listeners on a cluster IP held by
// a dummy device, relaying TCP and UDP to endpoints, refusing without one,
// and the device's addresses following the services.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createSocket } from "node:dgram";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { connect, createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Service } from "../api/core/types.js";
import type { EndpointSlice } from "../api/discovery/types.js";
import { iptablesInstalled } from "./proxier.js";
import { AffinityTable, portalsOf, UserspaceProxy } from "./userspace.js";

const svc = (name: string, clusterIP: string, ports: { port: number; protocol?: string; name?: string; nodePort?: number }[]): Service =>
  ({ metadata: { namespace: "default", name }, spec: { clusterIP, ports } }) as Service;
const slice = (ports: { port: number; protocol?: string; name?: string }[], addresses: string[], ready = true): EndpointSlice =>
  ({ addressType: "IPv4", ports, endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready } })) }) as EndpointSlice;

test("portals: one per cluster IP port and one per node port, with the ready endpoints; headless and ExternalName have none", () => {
  const services = [
    svc("web", "10.96.0.20", [{ port: 80, name: "http", nodePort: 30080 }, { port: 53, protocol: "UDP", name: "dns" }]),
    svc("headless", "None", [{ port: 80 }]),
    { metadata: { namespace: "default", name: "ext" }, spec: { type: "ExternalName", externalName: "example.com" } } as Service,
  ];
  const slices = [slice([{ port: 8080, name: "http" }, { port: 5353, protocol: "UDP", name: "dns" }], ["10.89.0.5", "10.89.0.6"]), slice([{ port: 8080, name: "http" }], ["10.89.0.7"], false)];
  const portals = portalsOf(services, (_ns, name) => (name === "web" ? slices : []));
  assert.deepEqual(portals.map((p) => [p.key, p.endpoints]), [
    ["tcp/10.96.0.20:80", ["10.89.0.5:8080", "10.89.0.6:8080"]],
    ["tcp/0.0.0.0:30080", ["10.89.0.5:8080", "10.89.0.6:8080"]],
    ["udp/10.96.0.20:53", ["10.89.0.5:5353", "10.89.0.6:5353"]],
  ]);
});

test("portals carry the service port's ClientIP affinity timeout (10800 s by default), shared by its cluster IP and node port", () => {
  const sticky = { ...svc("web", "10.96.0.20", [{ port: 80, name: "http", nodePort: 30080 }]) };
  sticky.spec = { ...sticky.spec, sessionAffinity: "ClientIP", sessionAffinityConfig: { clientIP: { timeoutSeconds: 15 } } };
  const defaulted = svc("api", "10.96.0.21", [{ port: 443 }]);
  defaulted.spec = { ...defaulted.spec, sessionAffinity: "ClientIP" };
  const portals = portalsOf([sticky, defaulted, svc("plain", "10.96.0.22", [{ port: 80 }])], () => [slice([{ port: 8080, name: "http" }], ["10.89.0.5"])]);
  assert.deepEqual(portals.map((p) => [p.key, p.service, p.affinitySeconds]), [
    ["tcp/10.96.0.21:443", "default/api:/tcp", 10800],
    ["tcp/10.96.0.22:80", "default/plain:/tcp", undefined],
    ["tcp/10.96.0.20:80", "default/web:http/tcp", 15],
    ["tcp/0.0.0.0:30080", "default/web:http/tcp", 15],
  ]);
});

test("affinity table: a client keeps its endpoint within the timeout (each pick restarts the clock), gets a new one after it or when its endpoint goes", () => {
  let now = 0;
  const table = new AffinityTable(() => now);
  let turn = 0;
  const eps = ["a", "b", "c"];
  const next = () => eps[turn++ % eps.length];
  assert.equal(table.pick("10.0.0.1", 10, eps, next), "a");
  assert.equal(table.pick("10.0.0.2", 10, eps, next), "b", "another client gets the next endpoint");
  for (let i = 0; i < 5; i++) {
    now += 9_000;
    assert.equal(table.pick("10.0.0.1", 10, eps, next), "a", "seen again within 10 s: the same endpoint");
  }
  now += 10_001;
  assert.equal(table.pick("10.0.0.1", 10, eps, next), "c", "after the timeout: chosen afresh");
  assert.equal(table.pick("10.0.0.1", 10, ["a", "b"], next), "a", "its endpoint is no longer ready: chosen afresh");
  assert.equal(table.pick("10.0.0.3", 10, [], () => undefined), undefined);
  // Entries older than the timeout are swept, not kept for every client ever seen.
  now += 60_000;
  table.pick("10.0.0.9", 10, eps, next);
  assert.equal(table.size, 1);
});

test("auto mode: iptables only when iptables, iptables-save and iptables-restore are all on PATH", () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-path-"));
  assert.equal(iptablesInstalled(dir), false);
  for (const cmd of ["iptables", "iptables-save"]) {
    writeFileSync(join(dir, cmd), "#!/bin/sh\n");
    chmodSync(join(dir, cmd), 0o755);
  }
  assert.equal(iptablesInstalled(`/nonexistent:${dir}`), false, "iptables-restore is missing");
  writeFileSync(join(dir, "iptables-restore"), "#!/bin/sh\n");
  chmodSync(join(dir, "iptables-restore"), 0o755);
  assert.equal(iptablesInstalled(`/nonexistent:${dir}`), true);
});

const root = process.getuid?.() === 0;

test("as root: a cluster IP on our dummy device relays TCP and UDP to the endpoints in turn, refuses without one, and goes when its service goes", { skip: root ? false : "not root: the userspace proxy adds addresses to a device" }, async () => {
  const lines: string[] = [];
  const proxy = new UserspaceProxy("otest-svc", (l) => lines.push(l));
  // Two TCP endpoints that say who they are, and a UDP echo.
  const backends = await Promise.all(["one", "two"].map((who) => new Promise<ReturnType<typeof createServer>>((resolve) => {
    const s = createServer((c) => c.end(who));
    s.listen(0, "127.0.0.1", () => resolve(s));
  })));
  const udp = createSocket("udp4");
  udp.on("message", (m, from) => udp.send(Buffer.concat([Buffer.from("echo:"), m]), from.port, from.address));
  await new Promise<void>((r) => udp.bind(0, "127.0.0.1", () => r()));
  const eps = backends.map((b) => `127.0.0.1:${(b.address() as AddressInfo).port}`);
  const clusterIP = "10.250.77.1";
  const read = (port: number) => new Promise<string>((resolve, reject) => {
    let text = "";
    connect({ host: clusterIP, port }).on("data", (d) => (text += d.toString())).on("end", () => resolve(text)).on("error", reject);
  });
  try {
    await proxy.sync([
      { key: `tcp/${clusterIP}:80`, protocol: "tcp", address: clusterIP, port: 80, endpoints: eps, id: "default/web:80", service: "default/web:80", affinitySeconds: undefined },
      { key: `udp/${clusterIP}:53`, protocol: "udp", address: clusterIP, port: 53, endpoints: [`127.0.0.1:${(udp.address() as AddressInfo).port}`], id: "default/dns:53", service: "default/dns:53", affinitySeconds: undefined },
      { key: `tcp/${clusterIP}:81`, protocol: "tcp", address: clusterIP, port: 81, endpoints: [], id: "default/empty:81", service: "default/empty:81", affinitySeconds: undefined },
    ]);
    assert.deepEqual([...(await proxy.addresses())], [clusterIP]);
    assert.deepEqual([await read(80), await read(80), await read(80)].sort(), ["one", "one", "two"]);
    const client = createSocket("udp4");
    const answer = await new Promise<string>((resolve) => {
      client.on("message", (m, from) => resolve(`${m.toString()} from ${from.address}:${from.port}`));
      client.send("ping", 53, clusterIP);
    });
    client.close();
    assert.equal(answer, `echo:ping from ${clusterIP}:53`, "the answer comes back from the service address");
    await assert.rejects(read(81), /ECONNRESET|ECONNREFUSED/, "a port without endpoints refuses at once");
    // The endpoints change in place; the service goes: its address leaves the device.
    await proxy.sync([{ key: `tcp/${clusterIP}:80`, protocol: "tcp", address: clusterIP, port: 80, endpoints: [eps[1]!], id: "default/web:80", service: "default/web:80", affinitySeconds: undefined }]);
    assert.deepEqual([await read(80), await read(80)], ["two", "two"]);
    // ClientIP affinity: this host is one client, so every connection goes to one endpoint; turned off, they alternate again.
    const web = { key: `tcp/${clusterIP}:80`, protocol: "tcp" as const, address: clusterIP, port: 80, endpoints: eps, id: "default/web:80", service: "default/web:80" };
    await proxy.sync([{ ...web, affinitySeconds: 60 }]);
    const sticky = new Set<string>();
    for (let i = 0; i < 6; i++) sticky.add(await read(80));
    assert.equal(sticky.size, 1, `one endpoint for one client: ${[...sticky]}`);
    await proxy.sync([{ ...web, affinitySeconds: undefined }]);
    const spread = new Set<string>();
    for (let i = 0; i < 4; i++) spread.add(await read(80));
    assert.deepEqual([...spread].sort(), ["one", "two"], "affinity switched off: both endpoints answer");
    await proxy.sync([]);
    assert.deepEqual([...(await proxy.addresses())], []);
    await assert.rejects(read(80));
    assert.deepEqual(lines, []);
  } finally {
    await proxy.close();
    for (const b of backends) b.close();
    udp.close();
  }
});
