// The aggregation layer on the real server: APIService validation and table,
// the local APIServices the server keeps, and a remote one served by a tiny
// extension API server written here (HTTPS, a `widgets` resource list, one
// widget, a streamed watch), reached through a Service without selector and
// manual Endpoints at 127.0.0.1: requests proxied after authentication and
// authorization with the caller in X-Remote-* and the front proxy's client
// certificate, the group in discovery, and Available following the server.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { builtinModules } from "../../api/index.js";
import { FRONT_PROXY_FILES, selfSignedServingCert } from "../../component/pki.js";
import { TokenAuthenticator } from "../filters/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";
import { extensionServer, RESOURCES, widget } from "./testing.js";

const API = "/apis/apiregistration.orch.io/v1/apiservices";
const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

let t: TestServer;
before(async () => {
  t = await startTestServer({
    modules: builtinModules(),
    aggregation: { checkIntervalMs: 500 },
    authenticators: [new TokenAuthenticator(new Map([["alice-token", { name: "alice", groups: ["system:authenticated"] }]]))],
  });
});
after(() => t.close());

const causes = (res: { json: { details?: { causes?: { field: string; message: string }[] } } }) => (res.json.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);

async function eventually<T>(what: string, fn: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  let last: T | undefined;
  while (Date.now() < end) {
    last = await fn();
    if (last !== undefined) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** An HTTP/1.1 upgrade to `path` as the admin: the status line answered, then what came back for `payload`. */
async function upgradeEcho(server: TestServer, path: string, payload: string): Promise<{ status: string; echoed: string }> {
  const socket = tlsConnect({ host: "127.0.0.1", port: server.server.port, ca: server.server.credentials.caCertPem, ALPNProtocols: ["http/1.1"] });
  try {
    await new Promise<void>((resolve, reject) => socket.once("secureConnect", resolve).once("error", reject));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.server.credentials.adminToken}\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`);
    let got = "";
    const until = (done: () => boolean) => new Promise<void>((resolve, reject) => {
      const check = () => (done() ? (socket.off("data", onData), resolve()) : undefined);
      const onData = (d: Buffer) => { got += d.toString(); check(); };
      socket.on("data", onData).once("error", reject).once("close", () => reject(new Error(`closed after ${JSON.stringify(got)}`)));
      check();
    });
    await until(() => got.includes("\r\n\r\n"));
    const status = got.slice(0, got.indexOf("\r\n"));
    got = got.slice(got.indexOf("\r\n\r\n") + 4);
    socket.write(payload);
    await until(() => got.length >= payload.length);
    return { status, echoed: got };
  } finally {
    socket.destroy();
  }
}

/** Waits for the APIService's Available condition to satisfy `want`; on timeout, says what it was. */
async function availableWhen(name: string, want: (c: { status: string; reason: string; message: string }) => boolean, ms = 15_000): Promise<{ status: string; reason: string; message: string }> {
  const end = Date.now() + ms;
  let c: { status: string; reason: string; message: string } | undefined;
  while (Date.now() < end) {
    c = await available(name);
    if (c !== undefined && want(c)) return c;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting on ${name}'s Available condition; last ${JSON.stringify(c)}`);
}

async function available(name: string): Promise<{ status: string; reason: string; message: string } | undefined> {
  const r = await t.request("GET", `${API}/${name}`);
  return r.json.status?.conditions?.find((c: { type: string }) => c.type === "Available");
}

test("apiservices: upstream's validation messages, defaults, table", async () => {
  const bad = await t.request("POST", API, {
    body: { apiVersion: "apiregistration.orch.io/v1", kind: "APIService", metadata: { name: "v1.wrong.example.com" }, spec: { group: "x.example.com", version: "V1", groupPriorityMinimum: 0, versionPriority: 1001, caBundle: Buffer.from("abc").toString("base64"), insecureSkipTLSVerify: true } },
  });
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(causes(bad), [
    'metadata.name: Invalid value: "v1.wrong.example.com": must be `spec.version+"."+spec.group`: "V1.x.example.com"',
    `spec.version: Invalid value: "V1": ${causes(bad)[1]!.split(': "V1": ')[1]}`,
    "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
    "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
    'spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle',
    "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
  ]);
  assert.match(causes(bad)[1]!, /a DNS-1035 label must consist of lower case alphanumeric characters/);

  const remote = await t.request("POST", API, {
    body: { apiVersion: "apiregistration.orch.io/v1", kind: "APIService", metadata: { name: "v1.other" }, spec: { version: "v2", service: { namespace: "", name: "" , port: 70000 }, groupPriorityMinimum: 1, versionPriority: 1, caBundle: Buffer.from("x").toString("base64"), insecureSkipTLSVerify: true } },
  });
  assert.equal(remote.status, 422);
  assert.deepEqual(causes(remote), [
    'metadata.name: Invalid value: "v1.other": must be `spec.version+"."+spec.group`: "v2."',
    "spec.group: Required value: only v1 may have an empty group and it better be legacy kube",
    "spec.service.namespace: Required value",
    "spec.service.name: Required value",
    "spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive",
    "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present",
  ]);

  const ok = await t.request("POST", API, {
    body: { apiVersion: "apiregistration.orch.io/v1", kind: "APIService", metadata: { name: "v1alpha1.nowhere.example.com" }, spec: { group: "nowhere.example.com", version: "v1alpha1", service: { namespace: "default", name: "nowhere" }, insecureSkipTLSVerify: true, groupPriorityMinimum: 100, versionPriority: 10 } },
  });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.json.spec.service.port, 443);
  assert.deepEqual(ok.json.status, {});
  // The status subresource: upstream's condition statuses only.
  // (a merge patch: the server writes the condition meanwhile, a PUT of what create answered could be a 409)
  const badStatus = await t.request("PATCH", `${API}/v1alpha1.nowhere.example.com/status`, { body: { status: { conditions: [{ type: "Available", status: "Maybe" }] } }, headers: { "content-type": "application/merge-patch+json" } });
  assert.equal(badStatus.status, 422);
  assert.deepEqual(causes(badStatus), ['status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"']);

  // No such Service: Available False, ServiceNotFound, as the table shows it.
  const c = await availableWhen("v1alpha1.nowhere.example.com", (c) => c.reason === "ServiceNotFound");
  assert.deepEqual(c, { ...c, status: "False", message: 'service/nowhere in "default" is not present' });
  const table = await t.request("GET", API, { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } });
  assert.deepEqual(table.json.columnDefinitions.map((d: { name: string }) => d.name), ["Name", "Service", "Available", "Age"]);
  const row = (name: string) => table.json.rows.find((r: { cells: string[] }) => r.cells[0] === name)?.cells.slice(0, 3);
  assert.deepEqual(row("v1alpha1.nowhere.example.com"), ["v1alpha1.nowhere.example.com", "default/nowhere", "False (ServiceNotFound)"]);
  assert.deepEqual(row("v1.apps"), ["v1.apps", "Local", "True"]);
  // A remote group that never answered is listed in /apis (as upstream) but has no resources in aggregated discovery.
  const groups = (await t.request("GET", "/apis")).json.groups.map((g: { name: string }) => g.name);
  assert.ok(groups.includes("nowhere.example.com"), groups.join(" "));
  assert.equal((await t.request("GET", "/apis/nowhere.example.com/v1alpha1/things")).text, "service unavailable\n");
  assert.equal((await t.request("DELETE", `${API}/v1alpha1.nowhere.example.com`)).status, 200);
});

test("local APIServices: one per served group version, Available=True Local, kept local", async () => {
  const list = (await t.request("GET", API)).json.items as { metadata: { name: string; labels: Record<string, string> }; spec: Record<string, unknown>; status: { conditions: { type: string; status: string; reason: string; message: string }[] } }[];
  const byName = new Map(list.map((s) => [s.metadata.name, s]));
  for (const name of ["v1.", "v1.apps", "v1.batch", "v2.autoscaling", "v1.rbac.authorization.orch.io", "v1beta1.metrics.k8s.io", "v1.apiregistration.orch.io"]) assert.ok(byName.has(name), `${name} missing: ${[...byName.keys()].join(" ")}`);
  // The groups served under upstream's names as views of orch's own have none (the store keeps the profile's names only).
  assert.equal(byName.has("v1.rbac.authorization.k8s.io"), false);
  const apps = byName.get("v1.apps")!;
  assert.deepEqual(apps.spec, { group: "apps", version: "v1", groupPriorityMinimum: 17800, versionPriority: 15 });
  assert.equal(apps.metadata.labels["orch-aggregator.orch.io/automanaged"], "onstart");
  assert.deepEqual(apps.status.conditions.map((c) => [c.type, c.status, c.reason, c.message]), [["Available", "True", "Local", "Local APIServices are always available"]]);

  // Pointed at a Service: put back, orch serves apps itself (and apps requests never leave the server).
  const edited = await t.request("PUT", `${API}/v1.apps`, { body: { ...apps, spec: { ...apps.spec, service: { namespace: "default", name: "hijack", port: 443 }, insecureSkipTLSVerify: true } } });
  assert.equal(edited.status, 200, edited.text);
  await eventually("v1.apps local again", async () => ((await t.request("GET", `${API}/v1.apps`)).json.spec.service === undefined ? true : undefined));
  assert.equal((await t.request("GET", "/apis/apps/v1/namespaces/default/deployments")).status, 200);
  // Deleted: made again.
  assert.equal((await t.request("DELETE", `${API}/v1.batch`)).status, 200);
  await eventually("v1.batch again", async () => ((await t.request("GET", `${API}/v1.batch`)).status === 200 ? true : undefined));

  // A custom resource's group version gets one (upstream's crdRegistration priorities), gone with it.
  const crd = await t.request("POST", "/apis/apiextensions.orch.io/v1/customresourcedefinitions", {
    body: {
      apiVersion: "apiextensions.orch.io/v1", kind: "CustomResourceDefinition", metadata: { name: "gadgets.stable.example.com" },
      spec: { group: "stable.example.com", scope: "Namespaced", names: { plural: "gadgets", singular: "gadget", kind: "Gadget" }, versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }] },
    },
  });
  assert.equal(crd.status, 201, crd.text);
  const local = await eventually("v1.stable.example.com", async () => {
    const r = await t.request("GET", `${API}/v1.stable.example.com`);
    return r.status === 200 && r.json.status?.conditions?.length ? r.json : undefined;
  });
  assert.deepEqual(local.spec, { group: "stable.example.com", version: "v1", groupPriorityMinimum: 1000, versionPriority: 100 });
  assert.equal(local.metadata.labels["orch-aggregator.orch.io/automanaged"], "true");
  assert.ok([200, 202].includes((await t.request("DELETE", "/apis/apiextensions.orch.io/v1/customresourcedefinitions/gadgets.stable.example.com")).status));
  await eventually("v1.stable.example.com gone", async () => ((await t.request("GET", `${API}/v1.stable.example.com`)).status === 404 ? true : undefined));
});

test("the extension-apiserver-authentication ConfigMap names the front proxy's CA, names and headers", async () => {
  const cm = await t.request("GET", "/api/v1/namespaces/orch-system/configmaps/extension-apiserver-authentication");
  assert.equal(cm.status, 200, cm.text);
  assert.equal(cm.json.data["requestheader-client-ca-file"], readFileSync(join(t.dataDir, FRONT_PROXY_FILES.caCert), "utf8"));
  assert.equal(cm.json.data["client-ca-file"], t.server.credentials.caCertPem);
  assert.equal(cm.json.data["requestheader-allowed-names"], '["front-proxy-client"]');
  assert.equal(cm.json.data["requestheader-username-headers"], '["X-Remote-User"]');
  assert.equal(cm.json.data["requestheader-group-headers"], '["X-Remote-Group"]');
  assert.equal(cm.json.data["requestheader-extra-headers-prefix"], '["X-Remote-Extra-"]');
  // The bootstrap Role extension servers are bound to so they can read it.
  const reader = await t.request("GET", "/apis/rbac.authorization.orch.io/v1/namespaces/orch-system/roles/extension-apiserver-authentication-reader");
  assert.equal(reader.status, 200, reader.text);
  assert.deepEqual(reader.json.rules, [{ verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["configmaps"], resourceNames: ["extension-apiserver-authentication"] }]);
});

test("a remote APIService: proxied with the caller's identity, in discovery, Available following its server", async () => {
  const ext = await extensionServer(readFileSync(join(t.dataDir, FRONT_PROXY_FILES.caCert), "utf8"));
  try {
    // A Service without selector and manual Endpoints at the extension server's loopback address.
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/services", { body: { apiVersion: "v1", kind: "Service", metadata: { name: "w" }, spec: { ports: [{ name: "https", port: 443, targetPort: ext.port }] } } })).status, 201);
    const apiService = { apiVersion: "apiregistration.orch.io/v1", kind: "APIService", metadata: { name: "v1.x.example.com" }, spec: { group: "x.example.com", version: "v1", service: { namespace: "default", name: "w", port: 443 }, caBundle: Buffer.from(ext.ca).toString("base64"), groupPriorityMinimum: 1000, versionPriority: 15 } };
    assert.equal((await t.request("POST", API, { body: apiService })).status, 201);
    const noEndpoints = await availableWhen("v1.x.example.com", (c) => c.reason === "EndpointsNotFound");
    assert.equal(noEndpoints.message, 'cannot find endpoints for service/w in "default"');
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/endpoints", { body: { apiVersion: "v1", kind: "Endpoints", metadata: { name: "w" }, subsets: [{ notReadyAddresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port: ext.port }] }] } })).status, 201);
    const missing = await availableWhen("v1.x.example.com", (c) => c.reason === "MissingEndpoints");
    assert.equal(missing.message, 'endpoints for service/w in "default" have no addresses with port name "https"');
    const eps = (await t.request("GET", "/api/v1/namespaces/default/endpoints/w")).json;
    assert.equal((await t.request("PUT", "/api/v1/namespaces/default/endpoints/w", { body: { ...eps, subsets: [{ addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port: ext.port }] }] } })).status, 200);
    const passed = await availableWhen("v1.x.example.com", (c) => c.status === "True");
    assert.deepEqual({ reason: passed.reason, message: passed.message }, { reason: "Passed", message: "all checks passed" });
    // The check ran as the aggregator, in system:masters, with the front proxy's certificate.
    const check = ext.seen.find((s) => s.path === "/apis/x.example.com/v1")!;
    assert.deepEqual([check.headers["x-remote-user"], check.headers["x-remote-group"], check.cn, check.authorized], ["system:orch-aggregator", "system:masters", "front-proxy-client", true]);

    // Proxied: the widget as the server wrote it, the admin's identity in the front proxy's headers, no bearer token.
    ext.seen.length = 0;
    const got = await t.request("GET", "/apis/x.example.com/v1/namespaces/default/widgets/w1", { headers: { "x-remote-user": "mallory", "x-remote-group": "system:masters" } });
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.json, widget);
    const hit = ext.seen.find((s) => s.path === "/apis/x.example.com/v1/namespaces/default/widgets/w1")!;
    assert.equal(hit.headers["x-remote-user"], "admin");
    assert.ok(String(hit.headers["x-remote-group"]).includes("system:masters"), String(hit.headers["x-remote-group"]));
    assert.equal(hit.headers.authorization, undefined);
    assert.deepEqual([hit.cn, hit.authorized], ["front-proxy-client", true]);

    // Authorization first: a user without rights is refused here, and the server never sees the request.
    ext.seen.length = 0;
    const denied = await t.request("GET", "/apis/x.example.com/v1/namespaces/default/widgets/w1", { headers: { authorization: "Bearer alice-token" } });
    assert.equal(denied.status, 403);
    assert.equal(denied.json.message, 'widgets.x.example.com "w1" is forbidden: User "alice" cannot get resource "widgets" in API group "x.example.com" in the namespace "default"');
    assert.equal(ext.seen.filter((s) => s.path.includes("/widgets")).length, 0);

    // Discovery: /apis, /apis/GROUP (answered here), /apis/GROUP/VERSION (proxied), aggregated discovery (the merged resource list).
    const apis = (await t.request("GET", "/apis")).json.groups.find((g: { name: string }) => g.name === "x.example.com");
    assert.deepEqual(apis, { name: "x.example.com", versions: [{ groupVersion: "x.example.com/v1", version: "v1" }], preferredVersion: { groupVersion: "x.example.com/v1", version: "v1" } });
    assert.equal((await t.request("GET", "/apis/x.example.com")).json.kind, "APIGroup");
    assert.deepEqual((await t.request("GET", "/apis/x.example.com/v1")).json, RESOURCES);
    const aggregated = await t.request("GET", "/apis", { headers: { accept: AGGREGATED } });
    const item = aggregated.json.items.find((i: { metadata: { name: string } }) => i.metadata.name === "x.example.com");
    assert.deepEqual(item.versions, [{
      version: "v1", freshness: "Current",
      resources: [{ resource: "widgets", responseKind: { group: "x.example.com", version: "v1", kind: "Widget" }, scope: "Namespaced", singularResource: "widget", verbs: ["get", "list", "watch"], shortNames: ["wd"], subresources: [{ subresource: "status", responseKind: { group: "x.example.com", version: "v1", kind: "Widget" }, verbs: ["get"] }] }],
    }]);

    // A watch is streamed: the first event arrives while the server still holds the response open.
    const w = await t.watch("/apis/x.example.com/v1/namespaces/default/widgets?watch=true");
    assert.equal(w.status, 200);
    assert.deepEqual((await w.next(1, 5000)).map((e) => [e.type, e.object.color]), [["ADDED", "blue"]]);
    assert.deepEqual((await w.next(1, 5000)).map((e) => [e.type, e.object.color]), [["MODIFIED", "red"]]);
    w.close();

    // An HTTP/1.1 upgrade is joined to the server byte for byte, the caller's identity in the front proxy's headers.
    ext.seen.length = 0;
    const echoed = await upgradeEcho(t, "/apis/x.example.com/v1/namespaces/default/widgets/w1/attach", "ping");
    assert.deepEqual(echoed, { status: "HTTP/1.1 101 Switching Protocols", echoed: "ping" });
    const up = ext.seen.find((s) => s.path === "/apis/x.example.com/v1/namespaces/default/widgets/w1/attach")!;
    assert.deepEqual([up.headers["x-remote-user"], up.headers.authorization, up.cn, up.authorized], ["admin", undefined, "front-proxy-client", true]);

    // The server stops: requests are 503, Available turns False (FailedDiscoveryCheck), discovery marks the version Stale.
    ext.server.closeAllConnections();
    await new Promise<void>((resolve) => ext.server.close(() => resolve()));
    const gone = await t.request("GET", "/apis/x.example.com/v1/namespaces/default/widgets/w1");
    assert.equal(gone.status, 503);
    const failed = await availableWhen("v1.x.example.com", (c) => c.status === "False");
    assert.equal(failed.reason, "FailedDiscoveryCheck");
    assert.match(failed.message, new RegExp(`^failing or missing response from https://127\\.0\\.0\\.1:${ext.port}/apis/x\\.example\\.com/v1: .*ECONNREFUSED`));
    const after = await t.request("GET", "/apis/x.example.com/v1/namespaces/default/widgets/w1");
    assert.deepEqual([after.status, after.text, after.headers["content-type"]], [503, "service unavailable\n", "text/plain; charset=utf-8"]);
    const stale = (await t.request("GET", "/apis", { headers: { accept: AGGREGATED } })).json.items.find((i: { metadata: { name: string } }) => i.metadata.name === "x.example.com");
    assert.equal(stale.versions[0].freshness, "Stale");

    // Deleted: the group is gone from discovery and its paths are 404 again.
    assert.equal((await t.request("DELETE", `${API}/v1.x.example.com`)).status, 200);
    await eventually("group gone", async () => ((await t.request("GET", "/apis/x.example.com")).status === 404 ? true : undefined));
    assert.ok(!(await t.request("GET", "/apis")).json.groups.some((g: { name: string }) => g.name === "x.example.com"));
  } finally {
    ext.server.closeAllConnections();
    ext.server.close();
  }
});

test("a remote APIService with a bad caBundle or a server that does not serve its group: FailedDiscoveryCheck, and the server stays up", async () => {
  const ext = await extensionServer(readFileSync(join(t.dataDir, FRONT_PROXY_FILES.caCert), "utf8"));
  const path = `${API}/v1.x.example.com`;
  try {
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/services", { body: { apiVersion: "v1", kind: "Service", metadata: { name: "w2" }, spec: { ports: [{ name: "https", port: 443, targetPort: ext.port }] } } })).status, 201);
    assert.equal((await t.request("POST", "/api/v1/namespaces/default/endpoints", { body: { apiVersion: "v1", kind: "Endpoints", metadata: { name: "w2" }, subsets: [{ addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port: ext.port }] }] } })).status, 201);
    const spec = (group: string) => ({ group, version: "v1", service: { namespace: "default", name: "w2", port: 443 }, groupPriorityMinimum: 1000, versionPriority: 15 });
    // A caBundle that does not sign the server's certificate (another CA's).
    const other = await selfSignedServingCert();
    assert.equal((await t.request("POST", API, { body: { apiVersion: "apiregistration.orch.io/v1", kind: "APIService", metadata: { name: "v1.x.example.com" }, spec: { ...spec("x.example.com"), caBundle: Buffer.from(other.ca).toString("base64") } } })).status, 201);
    const untrusted = await availableWhen("v1.x.example.com", (c) => c.reason === "FailedDiscoveryCheck");
    assert.match(untrusted.message, /^failing or missing response from https:\/\/127\.0\.0\.1:\d+\/apis\/x\.example\.com\/v1: .*(certificate|verify)/i);
    const refused = await t.request("GET", "/apis/x.example.com/v1/namespaces/default/widgets/w1");
    assert.deepEqual([refused.status, refused.text], [503, "service unavailable\n"]);
    // Not verified at all: Passed.
    const current = (await t.request("GET", path)).json;
    assert.equal((await t.request("PUT", path, { body: { ...current, spec: { ...spec("x.example.com"), insecureSkipTLSVerify: true } } })).status, 200);
    await availableWhen("v1.x.example.com", (c) => c.status === "True");
    assert.equal((await t.request("GET", "/apis/x.example.com/v1/namespaces/default/widgets/w1")).json.color, "blue");
    // A group the server does not serve: its discovery answer is a 404.
    assert.equal((await t.request("POST", API, { body: { apiVersion: "apiregistration.orch.io/v1", kind: "APIService", metadata: { name: "v1.y.example.com" }, spec: { ...spec("y.example.com"), insecureSkipTLSVerify: true } } })).status, 201);
    const bad = await availableWhen("v1.y.example.com", (c) => c.reason === "FailedDiscoveryCheck");
    assert.match(bad.message, /^bad status from https:\/\/127\.0\.0\.1:\d+\/apis\/y\.example\.com\/v1: 404$/);
    assert.equal((await t.request("GET", "/readyz")).status, 200);
  } finally {
    for (const name of ["v1.x.example.com", "v1.y.example.com"]) await t.request("DELETE", `${API}/${name}`);
    ext.server.closeAllConnections();
    ext.server.close();
  }
});

test("front proxy flags: half a pair, or a pair that is not one, stops the start", async () => {
  await assert.rejects(startTestServer({ modules: builtinModules(), aggregation: { proxyClientCertFile: "/etc/hostname" } }), /--proxy-client-cert-file and --proxy-client-key-file must be given together/);
  await assert.rejects(startTestServer({ modules: builtinModules(), aggregation: { proxyClientCertFile: "/etc/hostname", proxyClientKeyFile: "/etc/hostname" } }), /--proxy-client-cert-file\/--proxy-client-key-file: .*PEM/);
});

test("a restart keeps the local APIServices of custom resources (not deleted and made again)", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "orch-aggregation-restart-"));
  try {
    let s = await startTestServer({ modules: builtinModules(), dataDir });
    const crd = await s.request("POST", "/apis/apiextensions.orch.io/v1/customresourcedefinitions", {
      body: {
        apiVersion: "apiextensions.orch.io/v1", kind: "CustomResourceDefinition", metadata: { name: "gizmos.kept.example.com" },
        spec: { group: "kept.example.com", scope: "Cluster", names: { plural: "gizmos", singular: "gizmo", kind: "Gizmo" }, versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } }] },
      },
    });
    assert.equal(crd.status, 201, crd.text);
    const before = await eventually("v1.kept.example.com", async () => {
      const r = await s.request("GET", `${API}/v1.kept.example.com`);
      return r.status === 200 && r.json.status?.conditions?.length ? r.json : undefined;
    });
    await s.close();
    s = await startTestServer({ modules: builtinModules(), dataDir });
    try {
      const after = await s.request("GET", `${API}/v1.kept.example.com`);
      assert.equal(after.status, 200, after.text);
      assert.equal(after.json.metadata.uid, before.metadata.uid);
      assert.equal(after.json.metadata.resourceVersion, before.metadata.resourceVersion);
    } finally {
      await s.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
