// The networking group on the real server: Ingress (with its status
// subresource and the DefaultIngressClass step), IngressClass, NetworkPolicy:
// defaults, upstream's validation messages, Table rows, Protobuf round trips.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../index.js";
import { namingFor } from "../../machinery/naming.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { networkingModule } from "./index.js";

let t: TestServer;
before(async () => {
  t = await startTestServer({ modules: builtinModules() });
});
after(() => t.close());

const G = "networking.orch.io";
const ING = `/apis/${G}/v1/namespaces/default/ingresses`;
const IC = `/apis/${G}/v1/ingressclasses`;
const NP = `/apis/${G}/v1/namespaces/default/networkpolicies`;
const TABLE = { accept: "application/json;as=Table;v=v1;g=meta.orch.io" };

const backend = (name = "web", port: object = { number: 80 }) => ({ service: { name, port } });
const ingress = (name: string, spec: object, annotations?: Record<string, string>) => ({
  apiVersion: `${G}/v1`,
  kind: "Ingress",
  metadata: { name, ...(annotations ? { annotations } : {}) },
  spec,
});
const rule = (host: string, path = "/", pathType = "Prefix") => ({ host, http: { paths: [{ path, pathType, backend: backend() }] } });

test("networking: discovery lists the group's kinds on both naming profiles", async () => {
  const res = await t.request("GET", `/apis/${G}/v1`);
  assert.equal(res.status, 200, res.text);
  const byName = Object.fromEntries(res.json.resources.map((r: { name: string; namespaced: boolean; shortNames?: string[] }) => [r.name, [r.namespaced, r.shortNames ?? []]]));
  assert.deepEqual(byName, {
    ingresses: [true, ["ing"]],
    "ingresses/status": [true, []],
    ingressclasses: [false, []],
    networkpolicies: [true, ["netpol"]],
    ipaddresses: [false, ["ip"]],
    servicecidrs: [false, []],
    "servicecidrs/status": [false, []],
  });
  assert.ok(networkingModule.resources(namingFor("k8s.io")).every((d) => d.group === "networking.k8s.io"));
});

test("ingresses: validation with upstream's messages", async () => {
  const cases: [object, string[]][] = [
    [{}, ["spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"]],
    [{ rules: [rule("1.2.3.4")] }, ['spec.rules[0].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address']],
    [{ rules: [{ host: "a.io", http: { paths: [{ path: "x", backend: backend() }] } }] }, ["spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"]],
    [{ rules: [rule("a.io", "rel/../x")] }, ['spec.rules[0].http.paths[0].path: Invalid value: "rel/../x": must be an absolute path', `spec.rules[0].http.paths[0].path: Invalid value: "rel/../x": must not contain '/../'`]],
    [{ rules: [rule("a.io", "/x", "Regex")] }, ['spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"']],
    [{ defaultBackend: { service: { name: "web", port: { name: "http", number: 80 } } } }, ['spec.defaultBackend: Invalid value: "": cannot set both port name & port number']],
    [{ defaultBackend: { service: { name: "web" } } }, ["spec.defaultBackend: Required value: port name or number is required"]],
    [{ defaultBackend: {} }, ['spec.defaultBackend: Invalid value: "": resource or service backend is required']],
    [{ defaultBackend: { resource: { kind: "Bucket" } } }, ["spec.defaultBackend.resource.name: Required value: name is required"]],
    [{ defaultBackend: backend("web", { number: 70000 }) }, ["spec.defaultBackend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive"]],
  ];
  for (const [i, [spec, messages]] of cases.entries()) {
    const res = await t.request("POST", ING, { body: ingress(`bad${i}`, spec) });
    assert.equal(res.status, 422, `${JSON.stringify(spec)}: ${res.text}`);
    assert.deepEqual(res.json.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`), messages.map((m) => m.replace(/^([^:]+): /, "$1: ")), JSON.stringify(spec));
  }
  const wildcard = await t.request("POST", ING, { body: ingress("wild", { tls: [{ hosts: ["*.a.io", "a*.b"] }], rules: [rule("*.a.io")] }) });
  assert.equal(wildcard.status, 422);
  assert.match(wildcard.json.message, /spec\.tls\[0\]\.hosts\[1\]: Invalid value: "a\*\.b": a wildcard DNS-1123 subdomain must start with '\*\.'/);
  assert.doesNotMatch(wildcard.json.message, /hosts\[0\]|rules\[0\]/);
  const both = await t.request("POST", ING, { body: ingress("both", { ingressClassName: "nginx", defaultBackend: backend() }, { "orch.io/ingress.class": "nginx" }) });
  assert.equal(both.status, 422);
  assert.match(both.json.message, /annotations\.orch\.io\/ingress\.class: Invalid value: "nginx": can not be set when the class field is also set/);
});

test("ingresses: status subresource, the Table columns of upstream's kubectl", async () => {
  const created = await t.request("POST", ING, { body: ingress("web", { ingressClassName: "nginx", tls: [{ hosts: ["a.io"], secretName: "tls" }], rules: [rule("a.io"), rule("b.io"), rule(""), rule("c.io"), rule("d.io")] }) });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.json.status, {});
  // The main resource cannot write status; the subresource can, and only status.
  const withStatus = { ...created.json, status: { loadBalancer: { ingress: [{ ip: "10.0.0.12" }, { ip: "10.0.0.11" }, { hostname: "lb.example.com" }] } } };
  const main = await t.request("PUT", `${ING}/web`, { body: withStatus });
  assert.equal(main.status, 200, main.text);
  assert.deepEqual(main.json.status, {});
  const st = await t.request("PUT", `${ING}/web/status`, { body: { ...withStatus, metadata: main.json.metadata } });
  assert.equal(st.status, 200, st.text);
  assert.equal(st.json.status.loadBalancer.ingress.length, 3);
  const badStatus = await t.request("PUT", `${ING}/web/status`, { body: { ...st.json, status: { loadBalancer: { ingress: [{ ip: "nope" }, { hostname: "10.1.1.1" }] } } } });
  assert.equal(badStatus.status, 422);
  assert.match(badStatus.json.message, /status\.loadBalancer\.ingress\[0\]\.ip: Invalid value: "nope": must be a valid IP address/);
  assert.match(badStatus.json.message, /status\.loadBalancer\.ingress\[1\]\.hostname: Invalid value: "10\.1\.1\.1": must be a DNS name, not an IP address/);

  const table = await t.request("GET", `${ING}/web`, { headers: TABLE });
  assert.equal(table.status, 200, table.text);
  assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ["Name", "Class", "Hosts", "Address", "Ports", "Age"]);
  assert.deepEqual(table.json.rows[0].cells.slice(0, 5), ["web", "nginx", "a.io,b.io,c.io + 2 more...", "10.0.0.11,10....", "80, 443"]);
});

test("ingressclasses: defaults, validation, table; DefaultIngressClass gives the marked class to ingresses without one", async () => {
  const ic = (name: string, spec: object, annotations?: Record<string, string>) => ({ apiVersion: `${G}/v1`, kind: "IngressClass", metadata: { name, ...(annotations ? { annotations } : {}) }, spec });
  const bad = await t.request("POST", IC, { body: ic("bad", { controller: "nginx", parameters: { kind: "Params", name: "p", scope: "Cluster", namespace: "x" } }) });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.json.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`), [
    'spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")',
    "spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'",
  ]);
  const plain = await t.request("POST", IC, { body: ic("plain", { controller: "example.com/ingress", parameters: { apiGroup: "k8s.example.com", kind: "Params", name: "p" } }) });
  assert.equal(plain.status, 201, plain.text);
  assert.equal(plain.json.spec.parameters.scope, "Cluster");
  const changed = await t.request("PUT", `${IC}/plain`, { body: { ...plain.json, spec: { controller: "example.com/other" } } });
  assert.equal(changed.status, 422);
  assert.match(changed.json.message, /spec\.controller: Invalid value: "example\.com\/other": field is immutable/);
  const table = await t.request("GET", IC, { headers: TABLE });
  assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ["Name", "Controller", "Parameters", "Age"]);
  assert.deepEqual(table.json.rows[0].cells.slice(0, 3), ["plain", "example.com/ingress", "Params.k8s.example.com/p"]);

  // No default class yet: the ingress keeps no class.
  const before = await t.request("POST", ING, { body: ingress("no-default", { defaultBackend: backend() }) });
  assert.equal(before.status, 201, before.text);
  assert.equal(before.json.spec.ingressClassName, undefined);
  const marked = await t.request("POST", IC, { body: ic("standard", { controller: "example.com/ingress" }, { "ingressclass.orch.io/is-default-class": "true" }) });
  assert.equal(marked.status, 201, marked.text);
  const defaulted = await t.request("POST", ING, { body: ingress("defaulted", { defaultBackend: backend() }) });
  assert.equal(defaulted.json.spec.ingressClassName, "standard");
  const explicit = await t.request("POST", ING, { body: ingress("explicit", { ingressClassName: "plain", defaultBackend: backend() }) });
  assert.equal(explicit.json.spec.ingressClassName, "plain");
  const legacy = await t.request("POST", ING, { body: ingress("legacy", { defaultBackend: backend() }, { "orch.io/ingress.class": "old" }) });
  assert.equal(legacy.json.spec.ingressClassName, undefined);
  // An update never gets a class.
  const updated = await t.request("PUT", `${ING}/no-default`, { body: before.json });
  assert.equal(updated.json.spec.ingressClassName, undefined);
});

test("networkpolicies: defaults, validation with upstream's messages, table, Protobuf", async () => {
  const np = (name: string, spec: object) => ({ apiVersion: `${G}/v1`, kind: "NetworkPolicy", metadata: { name }, spec });
  const ok = await t.request("POST", NP, {
    body: np("db", { podSelector: { matchLabels: { app: "db" } }, ingress: [{ ports: [{ port: 5432 }], from: [{ ipBlock: { cidr: "10.0.0.0/8", except: ["10.1.0.0/16"] } }] }], egress: [{}] }),
  });
  assert.equal(ok.status, 201, ok.text);
  assert.deepEqual(ok.json.spec.policyTypes, ["Ingress", "Egress"]);
  assert.equal(ok.json.spec.ingress[0].ports[0].protocol, "TCP");
  const deny = await t.request("POST", NP, { body: np("deny", {}) });
  assert.equal(deny.status, 201, deny.text);
  assert.deepEqual(deny.json.spec, { podSelector: {}, policyTypes: ["Ingress"] });

  const bad = await t.request("POST", NP, {
    body: np("bad", {
      podSelector: {},
      ingress: [{ ports: [{ protocol: "ICMP", port: 90, endPort: 80 }, { port: "http", endPort: 90 }], from: [{}, { ipBlock: { cidr: "10.0.0.0/8", except: ["11.0.0.0/16"] }, podSelector: {} }] }],
      egress: [{ to: [{ ipBlock: { cidr: "10.0.0.0/33" } }] }],
      policyTypes: ["Ingress", "Sideways"],
    }),
  });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.json.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`), [
    'spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"',
    "spec.ingress[0].ports[0].endPort: Invalid value: 90: must be greater than or equal to `port`",
    "spec.ingress[0].ports[1].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
    "spec.ingress[0].from[0]: Required value: must specify a peer",
    'spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: "11.0.0.0/16": must be a strict subset of `cidr`',
    "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer",
    'spec.egress[0].to[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": not a valid CIDR',
    'spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
  ]);
  const v6 = await t.request("POST", NP, { body: np("v6", { podSelector: {}, egress: [{ to: [{ ipBlock: { cidr: "fd00::/8", except: ["fd00:1::/32", "fe00::/16"] } }] }] }) });
  assert.equal(v6.status, 422);
  assert.deepEqual(v6.json.details.causes.map((c: { field: string }) => c.field), ["spec.egress[0].to[0].ipBlock.except[1]"]);

  const table = await t.request("GET", NP, { headers: TABLE });
  assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ["Name", "Pod-Selector", "Age"]);
  assert.deepEqual(table.json.rows.map((r: { cells: unknown[] }) => r.cells.slice(0, 2)), [["db", "app=db"], ["deny", "<none>"]]);

  const pb = await t.request("GET", `${NP}/db`, { headers: { accept: "application/vnd.orch.protobuf" } });
  assert.equal(pb.status, 200, pb.text);
  assert.ok(pb.body.includes(Buffer.from("10.1.0.0/16")));
  const ingPb = await t.request("POST", ING, { body: ingress("pb", { rules: [rule("pb.io", "/api")] }) });
  assert.equal(ingPb.status, 201);
  const ingGet = await t.request("GET", `${ING}/pb`, { headers: { accept: "application/vnd.orch.protobuf" } });
  assert.equal(ingGet.status, 200, ingGet.text);
  assert.ok(ingGet.body.includes(Buffer.from("pb.io")));
});

test("ingresses: an update keeps what the stored object already had (invalid secret name, invalid wildcard rule), as upstream", async () => {
  const { ctx } = await import("../core/testing.js");
  const def = networkingModule.resources(namingFor()).find((d) => d.resource === "ingresses")!;
  const legacy = {
    apiVersion: `${G}/v1`,
    kind: "Ingress",
    metadata: { name: "legacy", namespace: "default" },
    spec: { tls: [{ hosts: ["a.io"], secretName: "Bad_Secret" }], rules: [{ host: "*.a.io", http: { paths: [{ path: "rel", pathType: "Prefix", backend: backend() }] } }] },
  };
  const fields = (errs: readonly { field: string }[] | undefined) => (errs ?? []).map((e) => e.field);
  assert.deepEqual(fields(def.validate!(structuredClone(legacy) as never, ctx)), ["spec.rules[0].http.paths[0].path", "spec.tls[0].secretName"]);
  assert.deepEqual(fields(def.validateUpdate!(structuredClone(legacy) as never, structuredClone(legacy) as never, ctx)), []);
  // A valid stored object gives no such leniency.
  const valid = { ...legacy, spec: { tls: [{ hosts: ["a.io"], secretName: "tls" }], rules: [rule("*.a.io")] } };
  assert.deepEqual(fields(def.validateUpdate!(structuredClone(legacy) as never, valid as never, ctx)), ["spec.rules[0].http.paths[0].path", "spec.tls[0].secretName"]);
});
