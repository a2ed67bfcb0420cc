// Cluster IPs and node ports through a real API server on lmdb: assignment,
// requested values, clashes and ranges (422 with upstream's messages),
// releases after deletes and type changes, dry runs that reserve nothing,
// concurrent creates that never share an address, the `kubernetes`
// service; and the repair pass on the store directly.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";
import { openStorage } from "../../storage/index.js";
import { ServiceAllocator } from "./allocator.js";
import { bigToIp, inRange, parseIpRange, parsePortRange } from "./ranges.js";
import type { Service } from "../../api/core/types.js";

let s: TestServer;
before(async () => {
  s = await startTestServer({ modules: builtinModules() });
});
after(async () => {
  await s?.close();
});

const SVC = "/api/v1/namespaces/default/services";
const svc = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: "v1", kind: "Service", metadata: { name }, spec: { ports: [{ port: 80 }], ...spec } });
const eventually = async <T>(check: () => Promise<T | undefined>, what: string): Promise<T> => {
  for (let i = 0; i < 100; i++) {
    const v = await check();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
};

test("ranges: CIDRs (IPv4 and IPv6), canonical addresses, port ranges and their errors", () => {
  const v4 = parseIpRange("10.96.3.7/12");
  assert.deepEqual([v4.cidr, bigToIp(v4.first, 4), bigToIp(v4.last, 4)], ["10.96.0.0/12", "10.96.0.1", "10.111.255.254"]);
  const v6 = parseIpRange("fd00:10:96::/112");
  assert.deepEqual([v6.cidr, bigToIp(v6.first, 6), bigToIp(v6.last, 6)], ["fd00:10:96::/112", "fd00:10:96::1", "fd00:10:96::ffff"]);
  assert.equal(inRange(v6, "fd00:10:96:0:0:0:0:a"), "fd00:10:96::a");
  assert.equal(inRange(v4, "10.112.0.1"), undefined);
  assert.equal(inRange(v4, "fd00::1"), undefined);
  assert.throws(() => parseIpRange("10.0.0.0/31"), /too small/);
  assert.throws(() => parseIpRange("nope"), /invalid CIDR "nope"/);
  assert.deepEqual(parsePortRange("30000-32767"), { first: 30000, last: 32767, text: "30000-32767" });
  assert.deepEqual(parsePortRange("30000+10"), { first: 30000, last: 30010, text: "30000-30010" });
  assert.throws(() => parsePortRange("0-10"), /ports are 1-65535/);
});

test("a service gets a cluster IP from the range; a requested one is kept; clashes and strangers are 422", async () => {
  const a = await s.request("POST", SVC, { body: svc("alloc-a") });
  assert.equal(a.status, 201, a.text);
  const ip = a.json.spec.clusterIP as string;
  assert.ok(inRange(parseIpRange("10.96.0.0/12"), ip), ip);
  assert.deepEqual([a.json.spec.clusterIPs, a.json.spec.ipFamilies, a.json.spec.ipFamilyPolicy], [[ip], ["IPv4"], "SingleStack"]);

  const chosen = await s.request("POST", SVC, { body: svc("alloc-b", { clusterIP: "10.96.7.7" }) });
  assert.equal(chosen.json.spec.clusterIP, "10.96.7.7");
  const clash = await s.request("POST", SVC, { body: svc("alloc-c", { clusterIP: "10.96.7.7" }) });
  assert.equal(clash.status, 422);
  assert.equal(clash.json.message, 'Service "alloc-c" is invalid: spec.clusterIPs: Invalid value: ["10.96.7.7"]: failed to allocate IP 10.96.7.7: provided IP is already allocated');
  const outside = await s.request("POST", SVC, { body: svc("alloc-d", { clusterIP: "192.168.0.9" }) });
  assert.equal(outside.status, 422);
  assert.match(outside.json.message, /the provided IP \(192\.168\.0\.9\) is not in the valid range\. The range of valid IPs is 10\.96\.0\.0\/12/);
  const headless = await s.request("POST", SVC, { body: svc("alloc-headless", { clusterIP: "None" }) });
  assert.equal(headless.json.spec.clusterIP, "None");

  // An update keeps the address (PUT without it, as kubectl replace may send).
  const put = await s.request("PUT", `${SVC}/alloc-a`, { body: { ...svc("alloc-a"), metadata: { name: "alloc-a", resourceVersion: a.json.metadata.resourceVersion } } });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json.spec.clusterIP, ip);
});

test("node ports: assigned in range, requested ones kept, clashes and strangers 422; released when the type changes", async () => {
  const np = await s.request("POST", SVC, { body: svc("np-a", { type: "NodePort", ports: [{ name: "http", port: 80 }, { name: "https", port: 443, nodePort: 30443 }] }) });
  assert.equal(np.status, 201, np.text);
  const [p0, p1] = np.json.spec.ports as { nodePort: number }[];
  assert.ok(p0!.nodePort >= 30000 && p0!.nodePort <= 32767);
  assert.equal(p1!.nodePort, 30443);
  const clash = await s.request("POST", SVC, { body: svc("np-b", { type: "NodePort", ports: [{ port: 80, nodePort: 30443 }] }) });
  assert.equal(clash.status, 422);
  assert.match(clash.json.message, /spec\.ports\[0\]\.nodePort: Invalid value: 30443: provided port is already allocated/);
  const outside = await s.request("POST", SVC, { body: svc("np-c", { type: "NodePort", ports: [{ port: 80, nodePort: 80 }] }) });
  assert.match(outside.json.message, /provided port is not in the valid range\. The range of valid ports is 30000-32767/);

  // NodePort → ClusterIP drops the node ports; they are free again once the change is seen.
  const cur = (await s.request("GET", `${SVC}/np-a`)).json;
  const changed = await s.request("PUT", `${SVC}/np-a`, { body: { ...cur, spec: { ...cur.spec, type: "ClusterIP", externalTrafficPolicy: undefined, ports: cur.spec.ports.map((p: Record<string, unknown>) => ({ ...p, nodePort: undefined })) } } });
  assert.equal(changed.status, 200, changed.text);
  await eventually(async () => ((await s.request("POST", SVC, { body: svc("np-d", { type: "NodePort", ports: [{ port: 80, nodePort: 30443 }] }) })).status === 201 || undefined), "node port 30443 to be free again");
});

test("NodePort → ExternalName with the fields sent back unchanged (a get-modify-put): cluster IPs, node ports and externalTrafficPolicy are dropped and freed", async () => {
  const created = await s.request("POST", SVC, { body: svc("to-external", { type: "NodePort", ports: [{ port: 80, nodePort: 30555 }] }) });
  assert.equal(created.status, 201, created.text);
  const ip = created.json.spec.clusterIP as string;
  const cur = (await s.request("GET", `${SVC}/to-external`)).json;
  const changed = await s.request("PUT", `${SVC}/to-external`, { body: { ...cur, spec: { ...cur.spec, type: "ExternalName", externalName: "externalsvc.default.svc.cluster.local" } } });
  assert.equal(changed.status, 200, changed.text);
  const spec = changed.json.spec;
  assert.deepEqual([spec.clusterIP, spec.clusterIPs, spec.ipFamilies, spec.ipFamilyPolicy, spec.externalTrafficPolicy, spec.ports[0].nodePort], [undefined, undefined, undefined, undefined, undefined, undefined]);
  // Both are free again once the change is seen.
  await eventually(async () => ((await s.request("POST", SVC, { body: svc("reuse-port", { type: "NodePort", ports: [{ port: 80, nodePort: 30555 }] }) })).status === 201 || undefined), "node port 30555 to be free again");
  await eventually(async () => ((await s.request("POST", SVC, { body: svc("reuse-ip", { clusterIP: ip }) })).status === 201 || undefined), `${ip} to be free again`);
  // A changed cluster IP is the client's and left for validation to refuse.
  const back = (await s.request("GET", `${SVC}/reuse-port`)).json;
  const refused = await s.request("PUT", `${SVC}/reuse-port`, { body: { ...back, spec: { ...back.spec, type: "ExternalName", externalName: "x.example.com", clusterIP: "10.96.0.99", clusterIPs: ["10.96.0.99"] } } });
  assert.equal(refused.status, 422, refused.text);
});

test("a deleted service's address is free again; a dry run reserves nothing", async () => {
  await s.request("POST", SVC, { body: svc("gone", { clusterIP: "10.96.8.8" }) });
  assert.equal((await s.request("DELETE", `${SVC}/gone`)).status, 200);
  await eventually(async () => ((await s.request("POST", SVC, { body: svc("heir", { clusterIP: "10.96.8.8" }) })).status === 201 || undefined), "10.96.8.8 to be free again");

  const dry = await s.request("POST", `${SVC}?dryRun=All`, { body: svc("dry", { clusterIP: "10.96.9.9" }) });
  assert.equal(dry.status, 201);
  assert.equal(dry.json.spec.clusterIP, "10.96.9.9");
  const dryAuto = await s.request("POST", `${SVC}?dryRun=All`, { body: svc("dry-auto") });
  assert.ok(dryAuto.json.spec.clusterIP, "a dry run shows the address it would get");
  assert.equal((await s.request("POST", SVC, { body: svc("real", { clusterIP: "10.96.9.9" }) })).status, 201, "the dry run kept nothing");
});

test("concurrent creates never share an address; the kubernetes service holds the range's first address", async () => {
  const made = await Promise.all(Array.from({ length: 20 }, (_, i) => s.request("POST", SVC, { body: svc(`many-${i}`) })));
  const ips = made.map((r) => r.json.spec.clusterIP as string);
  assert.equal(new Set(ips).size, 20);
  const k = await s.request("GET", `${SVC}/kubernetes`);
  assert.equal(k.status, 200);
  assert.deepEqual([k.json.spec.clusterIP, k.json.spec.ports[0].port], ["10.96.0.1", 443]);
  const ep = await s.request("GET", "/api/v1/namespaces/default/endpoints/kubernetes");
  assert.deepEqual(ep.json.subsets, [{ addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port: s.server.port, protocol: "TCP" }] }]);
  assert.ok(!ips.includes("10.96.0.1"));
});

test("repair: a reservation no service holds is freed after its grace; a held value without one is recorded", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-repair-"));
  const { store } = await openStorage({ backend: "lmdb", dataDir: dir });
  try {
    const services: Service[] = [];
    const allocator = new ServiceAllocator({
      storage: store,
      ipRange: parseIpRange("10.0.0.0/24"),
      portRange: parsePortRange("30000-30010"),
      listServices: async () => services,
      decode: (v) => JSON.parse(new TextDecoder().decode(v)),
    });
    // A fixed address: a random one would be 10.0.0.50 or .60 once in ~127 runs, and the test's own choices would clash.
    const kept: Service = { apiVersion: "v1", kind: "Service", metadata: { name: "kept", namespace: "ns" }, spec: { type: "NodePort", clusterIP: "10.0.0.10", ports: [{ port: 80 }] } };
    await allocator.assign(kept, undefined, false);
    services.push(kept);
    const orphan: Service = { apiVersion: "v1", kind: "Service", metadata: { name: "orphan", namespace: "ns" }, spec: { clusterIP: "10.0.0.50", ports: [{ port: 80 }] } };
    await allocator.assign(orphan, undefined, false); // its create "failed": no service holds 10.0.0.50
    services.push({ apiVersion: "v1", kind: "Service", metadata: { name: "old", namespace: "ns" }, spec: { clusterIP: "10.0.0.60", ports: [{ port: 80 }] } });
    assert.deepEqual(await allocator.repair(), { freed: 0, recorded: 1 }, "within the grace nothing is freed; the old service's address is recorded");
    assert.deepEqual(await allocator.repair(Date.now() + 61_000), { freed: 1, recorded: 0 });
    const taker: Service = { apiVersion: "v1", kind: "Service", metadata: { name: "taker", namespace: "ns" }, spec: { clusterIP: "10.0.0.50", ports: [{ port: 80 }] } };
    await allocator.assign(taker, undefined, false);
    await assert.rejects(allocator.assign({ ...taker, metadata: { name: "late", namespace: "ns" }, spec: { clusterIP: "10.0.0.60", ports: [{ port: 80 }] } }, undefined, false), /provided IP is already allocated/);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
