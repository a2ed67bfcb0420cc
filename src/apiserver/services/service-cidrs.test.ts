// IPAddress and ServiceCIDR (networking.<suffix>/v1) on the real server:
// validation with upstream's messages and Table columns; the `kubernetes`
// ServiceCIDR made from the service range, Ready; one IPAddress per cluster
// IP (the `kubernetes` service's included), gone with its Service or its
// type; an address with an IPAddress not handed out; a ServiceCIDR kept by
// its finalizer while an address only it covers is in use (Ready=False,
// Terminating), deleted at once when another covers it.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { namingFor } from "../../machinery/naming.js";
import { startTestServer, type TestServer } from "../testing/harness.js";
import { eventually as poll } from "../../controllers/testing.js";
import { ServiceAllocator } from "./allocator.js";
import { IpAddressRecords } from "./ip-addresses.js";
import { parseIpRange, parsePortRange } from "./ranges.js";
import { READY_MESSAGE, TERMINATING_MESSAGE } from "./service-cidrs.js";
import type { Service } from "../../api/core/types.js";

const eventually = <T>(check: () => Promise<T | undefined>, what: string): Promise<T> => poll(what, check, 5000);

let t: TestServer;
before(async () => {
  t = await startTestServer({ modules: builtinModules(), groupSuffix: "k8s.io" });
});
after(() => t.close());

const G = "networking.k8s.io";
const IPS = `/apis/${G}/v1/ipaddresses`;
const CIDRS = `/apis/${G}/v1/servicecidrs`;
const SVC = "/api/v1/namespaces/default/services";
const TABLE = { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" };
const FINALIZER = "networking.k8s.io/service-cidr-finalizer";
const MANAGED = { "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io" };

const ipAddress = (name: string, parentRef: object | undefined, labels?: Record<string, string>) => ({
  apiVersion: `${G}/v1`, kind: "IPAddress", metadata: { name, ...(labels ? { labels } : {}) }, ...(parentRef ? { spec: { parentRef } } : { spec: {} }),
});
const serviceCIDR = (name: string, cidrs: string[]) => ({ apiVersion: `${G}/v1`, kind: "ServiceCIDR", metadata: { name }, spec: { cidrs } });
const svc = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: "v1", kind: "Service", metadata: { name }, spec: { ports: [{ port: 80 }], ...spec } });
/** A second allocator on the test server's store and IPAddresses (range and services of the test's choosing). */
function allocatorOnServer(range: string, listServices: () => Promise<Service[]>): { allocator: ServiceAllocator; records: IpAddressRecords } {
  const records = new IpAddressRecords(namingFor("k8s.io"), () => t.server.stores.for({ group: G, resource: "ipaddresses" }));
  const allocator = new ServiceAllocator({
    storage: t.server.storage,
    ipRange: parseIpRange(range),
    portRange: parsePortRange("30000-32767"),
    listServices,
    decode: (v) => t.server.stores.services!.decode({ key: "", value: v, createRevision: 0, modRevision: 0 }),
    ipAddresses: records,
  });
  return { allocator, records };
}
const causes = (res: { json: { details?: { causes?: { field: string; message: string }[] } } }) => (res.json.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);

test("ipaddresses: the name must be a canonical IP; parentRef required with resource and name; immutable; NAME PARENTREF", async () => {
  const parent = { group: "", resource: "services", namespace: "default", name: "web" };
  const cases: [object, string[]][] = [
    [ipAddress("10.96.1.1", undefined), ["spec.parentRef: Required value"]],
    [ipAddress("10.96.1.2", { group: "Bad_Group", resource: "", name: "a/b" }), [
      'spec.parentRef.group: Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
      "spec.parentRef.resource: Required value",
      "spec.parentRef.name: Invalid value: \"a/b\": may not contain '/'",
    ]],
    [ipAddress("10.096.1.1", parent), ['metadata.name: Invalid value: "10.096.1.1": must not have leading 0s']],
    [ipAddress("2001:DB8::1", parent), ['metadata.name: Invalid value: "2001:DB8::1": must be in canonical form ("2001:db8::1")']],
    [ipAddress("web", parent), ['metadata.name: Invalid value: "web": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']],
  ];
  for (const [body, want] of cases) {
    const res = await t.request("POST", IPS, { body });
    assert.equal(res.status, 422, res.text);
    assert.deepEqual(causes(res), want, JSON.stringify(body));
  }
  const made = await t.request("POST", IPS, { body: ipAddress("2001:db8::7", { resource: "gateways", group: "gateway.example.com", namespace: "edge", name: "gw" }) });
  assert.equal(made.status, 201, made.text);
  const moved = await t.request("PUT", `${IPS}/2001:db8::7`, { body: { ...made.json, spec: { parentRef: parent } } });
  assert.equal(moved.status, 422);
  assert.match(moved.json.message, /spec\.parentRef: Invalid value: .*field is immutable/);
  const table = await t.request("GET", `${IPS}/2001:db8::7`, { headers: TABLE });
  assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ["Name", "ParentRef"]);
  assert.deepEqual(table.json.rows[0].cells, ["2001:db8::7", "gateways.gateway.example.com/edge/gw"]);
  assert.equal((await t.request("DELETE", `${IPS}/2001:db8::7`)).status, 200);
});

test("servicecidrs: 1–2 valid CIDRs of distinct families, immutable; NAME CIDRS AGE; status reset on create", async () => {
  const cases: [string[], string[]][] = [
    [[], ["spec.cidrs: Required value: at least one CIDR required"]],
    [["10.0.0.0/24", "fd00::/64", "10.1.0.0/24"], ['spec.cidrs: Invalid value: {"cidrs":["10.0.0.0/24","fd00::/64","10.1.0.0/24"]}: may only hold up to 2 values']],
    [["10.0.0.0/24", "10.1.0.0/24"], ['spec.cidrs: Invalid value: {"cidrs":["10.0.0.0/24","10.1.0.0/24"]}: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64']],
    [["10.0.0.7/24"], ['spec.cidrs[0]: Invalid value: "10.0.0.7/24": must not have bits set beyond the prefix length']],
    [["fd00:0::/64"], ['spec.cidrs[0]: Invalid value: "fd00:0::/64": must be in canonical form ("fd00::/64")']],
  ];
  for (const [cidrs, want] of cases) {
    const res = await t.request("POST", CIDRS, { body: serviceCIDR("bad", cidrs) });
    assert.equal(res.status, 422, res.text);
    assert.deepEqual(causes(res), want, JSON.stringify(cidrs));
  }
  const made = await t.request("POST", CIDRS, { body: { ...serviceCIDR("dual", ["192.168.7.0/24", "fd00:7::/64"]), status: { conditions: [{ type: "Ready", status: "True", reason: "Mine", message: "", lastTransitionTime: "2020-01-01T00:00:00Z" }] } } });
  assert.equal(made.status, 201, made.text);
  assert.deepEqual(made.json.status, {});
  assert.deepEqual(made.json.metadata.finalizers, [FINALIZER]);
  // (No resourceVersion: the API server's keeper may have written the status meanwhile.)
  const changed = await t.request("PUT", `${CIDRS}/dual`, { body: { ...made.json, metadata: { name: "dual" }, spec: { cidrs: ["192.168.8.0/24"] } } });
  assert.equal(changed.status, 422);
  assert.match(changed.json.message, /spec\.cidrs: Invalid value: .*field is immutable/);
  const table = await t.request("GET", `${CIDRS}/dual`, { headers: TABLE });
  assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ["Name", "CIDRs", "Age"]);
  assert.deepEqual(table.json.rows[0].cells.slice(0, 2), ["dual", "192.168.7.0/24,fd00:7::/64"]);
  // Nothing in it is in use: a delete removes it once the keeper has looked.
  assert.equal((await t.request("DELETE", `${CIDRS}/dual`)).status, 202, "held by its finalizer at first");
  await eventually(async () => ((await t.request("GET", `${CIDRS}/dual`)).status === 404 || undefined), "the unused ServiceCIDR to go");
});

test("the kubernetes ServiceCIDR: the service range, Ready, protected; the kubernetes service's address has its IPAddress", async () => {
  const sc = await eventually(async () => {
    const res = await t.request("GET", `${CIDRS}/kubernetes`);
    return res.json.status?.conditions?.length ? res.json : undefined;
  }, "the kubernetes ServiceCIDR to be Ready");
  assert.deepEqual(sc.spec.cidrs, ["10.96.0.0/12"]);
  assert.deepEqual(sc.metadata.finalizers, [FINALIZER]);
  assert.deepEqual(sc.status.conditions.map((c: { type: string; status: string; message: string }) => [c.type, c.status, c.message]), [["Ready", "True", READY_MESSAGE]]);
  const ip = await t.request("GET", `${IPS}/10.96.0.1`);
  assert.equal(ip.status, 200, ip.text);
  assert.deepEqual(ip.json.spec.parentRef, { group: "", resource: "services", namespace: "default", name: "kubernetes" });
  assert.deepEqual(ip.json.metadata.labels, { ...MANAGED, "ipaddress.kubernetes.io/ip-family": "IPv4" });
});

test("a Service's cluster IP is an IPAddress while the Service holds it: gone on delete and on a change to ExternalName", async () => {
  const made = await t.request("POST", SVC, { body: svc("web") });
  assert.equal(made.status, 201, made.text);
  const ip = made.json.spec.clusterIP as string;
  const rec = await t.request("GET", `${IPS}/${ip}`);
  assert.equal(rec.status, 200, "recorded with the allocation, before the Service create returns");
  assert.deepEqual(rec.json.spec.parentRef, { group: "", resource: "services", namespace: "default", name: "web" });
  const listed = await t.request("GET", IPS, { headers: TABLE });
  assert.ok(listed.json.rows.some((r: { cells: string[] }) => r.cells[0] === ip && r.cells[1] === "services/default/web"), JSON.stringify(listed.json.rows));

  assert.equal((await t.request("DELETE", `${SVC}/web`)).status, 200);
  await eventually(async () => ((await t.request("GET", `${IPS}/${ip}`)).status === 404 || undefined), "the deleted Service's IPAddress to go");

  const other = await t.request("POST", SVC, { body: svc("to-external") });
  const otherIp = other.json.spec.clusterIP as string;
  assert.equal((await t.request("GET", `${IPS}/${otherIp}`)).status, 200);
  const changed = await t.request("PUT", `${SVC}/to-external`, { body: { ...other.json, spec: { ...other.json.spec, type: "ExternalName", externalName: "example.com" } } });
  assert.equal(changed.status, 200, changed.text);
  await eventually(async () => ((await t.request("GET", `${IPS}/${otherIp}`)).status === 404 || undefined), "the IPAddress of a Service turned ExternalName to go");
  // A dry run records nothing.
  const dry = await t.request("POST", `${SVC}?dryRun=All`, { body: svc("dry", { clusterIP: "10.96.44.44" }) });
  assert.equal(dry.status, 201, dry.text);
  assert.equal((await t.request("GET", `${IPS}/10.96.44.44`)).status, 404);
});

test("an address with an IPAddress is not handed out: requested ones are 422, random ones skip it", async () => {
  const taken = await t.request("POST", IPS, { body: ipAddress("10.96.50.5", { group: "gateway.example.com", resource: "gateways", namespace: "edge", name: "gw" }) });
  assert.equal(taken.status, 201, taken.text);
  const clash = await t.request("POST", SVC, { body: svc("wants-taken", { clusterIP: "10.96.50.5" }) });
  assert.equal(clash.status, 422, clash.text);
  assert.deepEqual(causes(clash), ['spec.clusterIPs: Invalid value: ["10.96.50.5"]: failed to allocate IP 10.96.50.5: provided IP is already allocated']);

  // Random allocation from a two-address range whose first address has a (foreign) IPAddress.
  const { allocator, records } = allocatorOnServer("172.30.0.0/30", async () => []);
  assert.equal((await t.request("POST", IPS, { body: ipAddress("172.30.0.1", { resource: "things", name: "x" }) })).status, 201);
  for (let i = 0; i < 5; i++) {
    const s: Service = { apiVersion: "v1", kind: "Service", metadata: { name: `r${i}`, namespace: "default" }, spec: { ports: [{ port: 80 }] } };
    await allocator.assign(s, undefined, false);
    assert.equal(s.spec?.clusterIP, "172.30.0.2");
    assert.equal((await records.get("172.30.0.2"))?.owner, `default/r${i}`);
    await allocator.releaseChanges(s, undefined);
    assert.equal(await records.get("172.30.0.2"), undefined, "released with the address");
  }
  const holder: Service = { apiVersion: "v1", kind: "Service", metadata: { name: "holder", namespace: "default" }, spec: { ports: [{ port: 80 }] } };
  await allocator.assign(holder, undefined, false);
  await assert.rejects(allocator.assign({ ...holder, metadata: { name: "late", namespace: "default" }, spec: { ports: [{ port: 80 }] } }, undefined, false), /range is full/);
});

test("repair: a reservation without its IPAddress gets one; the allocator's IPAddress no reservation backs goes after the grace", async () => {
  // The server's range and services: its own reservations are left as they are.
  const { allocator, records } = allocatorOnServer("10.96.0.0/12", async () => (await t.server.stores.services!.list(undefined, {})).items.map((i) => i.object as Service));
  // A reservation recorded before IPAddresses existed: the key alone.
  await t.server.storage.create("/registry/orch/serviceips/10.96.77.3", new TextEncoder().encode(JSON.stringify({ service: "default/older", at: new Date().toISOString() })));
  // An allocator-labelled IPAddress nothing reserves.
  assert.equal((await t.request("POST", IPS, { body: ipAddress("10.96.77.4", { resource: "services", namespace: "default", name: "ghost" }, MANAGED) })).status, 201);
  const first = await allocator.repair();
  assert.equal((await records.get("10.96.77.3"))?.owner, "default/older");
  assert.deepEqual(first, { freed: 0, recorded: 1 });
  assert.ok((await records.get("10.96.77.4")) !== undefined, "within the grace it stays");
  // After the grace: the reservation no service holds is freed, and both allocator IPAddresses without one go
  // (with the previous test's `holder` reservation and its IPAddress: 5); the kubernetes service's stays.
  assert.deepEqual(await allocator.repair(Date.now() + 61_000), { freed: 5, recorded: 0 });
  assert.equal(await records.get("10.96.77.4"), undefined);
  assert.equal(await records.get("10.96.77.3"), undefined);
  assert.equal((await records.get("10.96.0.1"))?.owner, "default/kubernetes");
});

test("a ServiceCIDR being deleted keeps its finalizer while an address only it covers is in use (Ready=False Terminating); one inside another goes at once", async () => {
  assert.equal((await t.request("POST", CIDRS, { body: serviceCIDR("extra", ["192.168.60.0/24"]) })).status, 201);
  assert.equal((await t.request("POST", IPS, { body: ipAddress("192.168.60.9", { resource: "services", namespace: "default", name: "elsewhere" }, MANAGED) })).status, 201);
  assert.equal((await t.request("DELETE", `${CIDRS}/extra`)).status, 202, "held by its finalizer at first");
  const terminating = await eventually(async () => {
    const res = await t.request("GET", `${CIDRS}/extra`);
    const ready = res.json.status?.conditions?.find((c: { type: string }) => c.type === "Ready");
    return ready?.reason === "Terminating" ? res.json : undefined;
  }, "Ready=False Terminating");
  assert.ok(terminating.metadata.deletionTimestamp);
  assert.deepEqual(terminating.metadata.finalizers, [FINALIZER]);
  const ready = terminating.status.conditions.find((c: { type: string }) => c.type === "Ready");
  assert.deepEqual([ready.status, ready.message], ["False", TERMINATING_MESSAGE]);
  // The address goes: so does the ServiceCIDR.
  assert.equal((await t.request("DELETE", `${IPS}/192.168.60.9`)).status, 200);
  await eventually(async () => ((await t.request("GET", `${CIDRS}/extra`)).status === 404 || undefined), "the ServiceCIDR to go once its address is free");

  // Inside the kubernetes range, holding an address the kubernetes ServiceCIDR also covers: deleted at once.
  assert.equal((await t.request("POST", CIDRS, { body: serviceCIDR("inside", ["10.96.0.0/24"]) })).status, 201);
  assert.equal((await t.request("DELETE", `${CIDRS}/inside`)).status, 202, "held by its finalizer at first");
  await eventually(async () => ((await t.request("GET", `${CIDRS}/inside`)).status === 404 || undefined), "the covered ServiceCIDR to go");
  // The kubernetes one holds the kubernetes service's address: it stays, terminating.
  assert.equal((await t.request("DELETE", `${CIDRS}/kubernetes`)).status, 202, "held by its finalizer at first");
  await eventually(async () => {
    const res = await t.request("GET", `${CIDRS}/kubernetes`);
    return res.json.status?.conditions?.find((c: { type: string; reason?: string }) => c.type === "Ready" && c.reason === "Terminating") ? true : undefined;
  }, "the kubernetes ServiceCIDR to be held");
});
