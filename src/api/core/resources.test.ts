import { test } from "node:test";
import assert from "node:assert/strict";
import type { ApiObject } from "../../machinery/index.js";
import { namingFor } from "../../machinery/naming.js";
import { coreModule } from "./index.js";
import { NOW, create, def, update } from "./testing.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");

test("core: module declares its resources with upstream's names and scopes", () => {
  const defs = coreModule.resources(namingFor());
  assert.deepEqual(
    defs.map((d) => [d.resource, d.kind, d.namespaced, d.shortNames ?? [], d.categories ?? [], d.allowCreateOnUpdate === true, d.nameRule ?? "subdomain"]),
    [
      ["namespaces", "Namespace", false, ["ns"], [], false, "label"],
      ["pods", "Pod", true, ["po"], ["all"], false, "subdomain"],
      ["nodes", "Node", false, ["no"], [], false, "subdomain"],
      ["services", "Service", true, ["svc"], ["all"], true, "dns1035-label"],
      ["endpoints", "Endpoints", true, ["ep"], [], true, "subdomain"],
      ["configmaps", "ConfigMap", true, ["cm"], [], false, "subdomain"],
      ["secrets", "Secret", true, [], [], false, "subdomain"],
      ["serviceaccounts", "ServiceAccount", true, ["sa"], [], true, "subdomain"],
      ["events", "Event", true, ["ev"], [], true, "subdomain"],
      ["persistentvolumes", "PersistentVolume", false, ["pv"], [], false, "subdomain"],
      ["persistentvolumeclaims", "PersistentVolumeClaim", true, ["pvc"], [], false, "subdomain"],
      ["replicationcontrollers", "ReplicationController", true, ["rc"], ["all"], false, "subdomain"],
      ["podtemplates", "PodTemplate", true, [], [], false, "subdomain"],
      ["limitranges", "LimitRange", true, ["limits"], [], false, "subdomain"],
      ["resourcequotas", "ResourceQuota", true, ["quota"], [], false, "subdomain"],
      ["componentstatuses", "ComponentStatus", false, ["cs"], [], false, "subdomain"],
      ["bindings", "Binding", true, [], [], false, "subdomain"],
    ],
  );
  for (const d of defs) assert.equal(d.group, "");
});

// ---- services

const svc = (spec: object, name = "web") => ({ apiVersion: "v1", kind: "Service", metadata: { name, namespace: "default" }, spec });
const services = def("services");

test("services: defaults", () => {
  const { obj, errors } = create(services, svc({ selector: { app: "web" }, ports: [{ port: 80 }] }));
  assert.deepEqual(errors, []);
  assert.deepEqual(obj["spec"], {
    selector: { app: "web" },
    ports: [{ port: 80, protocol: "TCP", targetPort: 80 }],
    type: "ClusterIP",
    sessionAffinity: "None",
    internalTrafficPolicy: "Cluster",
    ipFamilyPolicy: "SingleStack",
    ipFamilies: ["IPv4"],
  });
  const lb = create(services, svc({ type: "LoadBalancer", ports: [{ port: 443, targetPort: "https" }], sessionAffinity: "ClientIP" })).obj["spec"] as Record<string, unknown>;
  assert.equal(lb["externalTrafficPolicy"], "Cluster");
  assert.equal(lb["allocateLoadBalancerNodePorts"], true);
  assert.deepEqual(lb["sessionAffinityConfig"], { clientIP: { timeoutSeconds: 10800 } });
  assert.deepEqual(lb["ports"], [{ port: 443, targetPort: "https", protocol: "TCP" }]);
});

test("services: validation messages", () => {
  const cases: [string, object, string[]][] = [
    ["no ports", { selector: { app: "web" } }, ["spec.ports: Required value"]],
    ["headless without ports", { clusterIP: "None" }, []],
    [
      "type",
      { type: "Public", ports: [{ port: 80 }] },
      ['spec.type: Unsupported value: "Public": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"'],
    ],
    ["port range", { ports: [{ port: 0, targetPort: 80 }] }, ["spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"]],
    ["names required", { ports: [{ port: 80 }, { name: "b", port: 81 }] }, ["spec.ports[0].name: Required value"]],
    ["node port on ClusterIP", { ports: [{ port: 80, nodePort: 30080 }] }, ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]],
    ["external name", { type: "ExternalName" }, ["spec.externalName: Required value"]],
    ["cluster IP", { clusterIP: "10.0.0.300", ports: [{ port: 80 }] }, ['spec.clusterIPs[0]: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']],
    [
      "affinity",
      { ports: [{ port: 80 }], sessionAffinity: "Cookie" },
      ['spec.sessionAffinity: Unsupported value: "Cookie": supported values: "ClientIP", "None"'],
    ],
  ];
  for (const [what, spec, want] of cases) assert.deepEqual(create(services, svc(spec)).errors, want, what);
});

test("services: allocated values survive an update that omits them; the cluster IP is immutable", () => {
  const old = create(services, svc({ type: "NodePort", clusterIP: "10.96.0.10", ports: [{ port: 80, nodePort: 30080 }] })).obj;
  const kept = update(services, svc({ type: "NodePort", ports: [{ port: 80 }] }), old);
  assert.deepEqual(kept.errors, []);
  const spec = kept.obj["spec"] as Record<string, unknown>;
  assert.equal(spec["clusterIP"], "10.96.0.10");
  assert.deepEqual(spec["clusterIPs"], ["10.96.0.10"]);
  assert.equal((spec["ports"] as { nodePort: number }[])[0]!.nodePort, 30080);
  assert.deepEqual(update(services, svc({ type: "NodePort", clusterIP: "10.96.0.11", ports: [{ port: 80 }] }), old).errors, [
    'spec.clusterIPs[0]: Invalid value: "10.96.0.11": may not change once set',
  ]);
});

test("services: table", () => {
  const s = create(services, svc({ type: "LoadBalancer", clusterIP: "10.96.0.10", selector: { app: "web", tier: "fe" }, ports: [{ port: 80, nodePort: 30080 }] })).obj;
  s.metadata.creationTimestamp = "2026-01-02T03:00:00Z";
  assert.deepEqual(services.table!.cells(s, NOW), ["web", "LoadBalancer", "10.96.0.10", "<pending>", "80:30080/TCP", "4m5s", "app=web,tier=fe"]);
  (s["status"] as Record<string, unknown>) = { loadBalancer: { ingress: [{ ip: "192.0.2.1" }] } };
  assert.equal(services.table!.cells(s, NOW)[3], "192.0.2.1");
  const headless = create(services, svc({ clusterIP: "None" })).obj;
  assert.deepEqual(services.table!.cells(headless, NOW).slice(1, 5), ["ClusterIP", "None", "<none>", "<none>"]);
});

// ---- configmaps and secrets

const configmaps = def("configmaps");
const secrets = def("secrets");
const cm = (body: object) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg", namespace: "default" }, ...body });
const secret = (body: object) => ({ apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "default" }, ...body });

test("configmaps: keys, duplicates, immutability, table", () => {
  assert.deepEqual(create(configmaps, cm({ data: { "app.conf": "x" } })).errors, []);
  assert.deepEqual(create(configmaps, cm({ data: { "a b": "x" } })).errors, [
    "data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
  ]);
  assert.deepEqual(create(configmaps, cm({ data: { "..x": "x" } })).errors, ["data[..x]: Invalid value: \"..x\": must not start with '..'"]);
  assert.deepEqual(create(configmaps, cm({ data: { k: "x" }, binaryData: { k: b64("y") } })).errors, [
    'data[k]: Invalid value: "k": duplicate of key present in binaryData',
    'binaryData[k]: Invalid value: "k": duplicate of key present in data',
  ]);
  const frozen = create(configmaps, cm({ immutable: true, data: { k: "v" } })).obj;
  assert.deepEqual(update(configmaps, cm({ immutable: true, data: { k: "v" }, metadata: { name: "cfg", namespace: "default", labels: { a: "b" } } }), frozen).errors, []);
  assert.deepEqual(update(configmaps, cm({ immutable: true, data: { k: "w" } }), frozen).errors, ["data: Forbidden: field is immutable when `immutable` is set"]);
  assert.deepEqual(update(configmaps, cm({ data: { k: "v" } }), frozen).errors, ["immutable: Forbidden: field is immutable when `immutable` is set"]);
  const shown = create(configmaps, cm({ data: { a: "1", b: "2" }, binaryData: { c: b64("3") } })).obj;
  assert.deepEqual(configmaps.table!.cells(shown, NOW), ["cfg", 3, "4m5s"]);
});

test("secrets: stringData, type default and immutability, per-type keys, table and field selector", () => {
  const { obj, errors } = create(secrets, secret({ data: { a: b64("1") }, stringData: { b: "two" } }));
  assert.deepEqual(errors, []);
  assert.equal(obj["type"], "Opaque");
  assert.deepEqual(obj["data"], { a: b64("1"), b: b64("two") });
  assert.equal("stringData" in obj, false);
  assert.deepEqual(create(secrets, secret({ type: "orch.io/tls", data: { "tls.crt": b64("c") } })).errors, ["data[tls.key]: Required value"]);
  assert.deepEqual(create(secrets, secret({ type: "orch.io/dockerconfigjson", data: { ".dockerconfigjson": b64("{}") } })).errors, []);
  assert.deepEqual(create(secrets, secret({ type: "orch.io/service-account-token" })).errors, [
    "metadata.annotations[orch.io/service-account.name]: Required value",
  ]);
  assert.deepEqual(update(secrets, secret({ type: "orch.io/tls", data: { "tls.crt": "", "tls.key": "" } }), obj).errors, [
    'type: Invalid value: "orch.io/tls": field is immutable',
  ]);
  const frozen = create(secrets, secret({ immutable: true, data: { a: b64("1") } })).obj;
  assert.deepEqual(update(secrets, secret({ immutable: true, stringData: { a: "2" } }), frozen).errors, ["data: Forbidden: field is immutable when `immutable` is set"]);
  assert.deepEqual(secrets.table!.cells(obj, NOW), ["s", "Opaque", 2, "4m5s"]);
  assert.equal(secrets.fieldSelectors!["type"]!(obj), "Opaque");
});

// ---- namespaces and nodes

const namespaces = def("namespaces");
const nodes = def("nodes");

test("namespaces: finalizer, phase, name label, deletion, table", () => {
  const { obj, errors } = create(namespaces, { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" } });
  assert.deepEqual(errors, []);
  assert.deepEqual(obj["spec"], { finalizers: ["kubernetes"] });
  assert.deepEqual(obj["status"], { phase: "Active" });
  assert.deepEqual(obj.metadata.labels, { "orch.io/metadata.name": "team-a" });
  assert.deepEqual(namespaces.pendingFinalizers!(obj), ["kubernetes"]);
  namespaces.prepareForDelete!(obj, { naming: namingFor(), now: NOW });
  assert.equal((obj["status"] as { phase: string }).phase, "Terminating");
  assert.deepEqual(namespaces.table!.cells(obj, NOW), ["team-a", "Terminating", "4m5s"]);
  assert.equal(namespaces.fieldSelectors!["status.phase"]!(obj), "Terminating");
  assert.deepEqual(create(namespaces, { apiVersion: "v1", kind: "Namespace", metadata: { name: "x" }, spec: { finalizers: ["custom"] } }).errors, [
    'spec.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
  ]);
});

const node = (spec: object = {}, status: object = {}, labels: Record<string, string> = {}) =>
  ({ apiVersion: "v1", kind: "Node", metadata: { name: "node-1", labels, creationTimestamp: "2026-01-01T03:04:05Z" }, spec, status }) as ApiObject;

test("nodes: taints, pod CIDRs, allocatable default, table, field selector", () => {
  assert.deepEqual(create(nodes, node({ taints: [{ key: "gpu", effect: "NoSchedule" }] })).errors, []);
  assert.deepEqual(create(nodes, node({ taints: [{ key: "gpu", effect: "Never" }] })).errors, [
    'spec.taints[0].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
  ]);
  assert.deepEqual(create(nodes, node({ taints: [{ key: "gpu", effect: "NoSchedule" }, { key: "gpu", value: "x", effect: "NoSchedule" }] })).errors, [
    'spec.taints[1]: Duplicate value: {"effect":"NoSchedule","key":"gpu","value":"x"}: taints must be unique by key and effect pair',
  ]);
  assert.deepEqual(create(nodes, node({ podCIDR: "10.244.0.0/24", podCIDRs: ["10.244.0.0/33"] })).errors.length, 2);
  const { obj } = create(nodes, node({ podCIDR: "10.244.0.0/24", podCIDRs: ["10.244.0.0/24"] }, { capacity: { cpu: "4", pods: "110" } }));
  assert.deepEqual((obj["status"] as { allocatable: unknown }).allocatable, { cpu: "4", pods: "110" });
  assert.deepEqual(update(nodes, node({ podCIDR: "10.244.1.0/24", podCIDRs: ["10.244.1.0/24"] }), obj).errors, [
    'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
  ]);

  const shown = node(
    { unschedulable: true },
    {
      conditions: [{ type: "Ready", status: "True" }],
      addresses: [{ type: "InternalIP", address: "192.168.1.10" }, { type: "Hostname", address: "node-1" }],
      nodeInfo: { kubeletVersion: "v1.33.0", osImage: "Debian GNU/Linux 12 (bookworm)", kernelVersion: "6.1.0", containerRuntimeVersion: "containerd://1.7.0" },
    },
    { "node-role.orch.io/control-plane": "", "orch.io/hostname": "node-1" },
  );
  assert.deepEqual(nodes.table!.cells(shown, NOW), [
    "node-1",
    "Ready,SchedulingDisabled",
    "control-plane",
    "24h",
    "v1.33.0",
    "192.168.1.10",
    "<none>",
    "Debian GNU/Linux 12 (bookworm)",
    "6.1.0",
    "containerd://1.7.0",
  ]);
  assert.deepEqual(nodes.table!.cells(node(), NOW).slice(1, 3), ["Unknown", "<none>"]);
  assert.deepEqual(nodes.table!.cells(node({}, { conditions: [{ type: "Ready", status: "Unknown" }] }), NOW)[1], "NotReady");
  assert.equal(nodes.fieldSelectors!["spec.unschedulable"]!(shown), "true");
});

// ---- endpoints, events, service accounts

test("endpoints: validation and the ENDPOINTS cell", () => {
  const endpoints = def("endpoints");
  const ep = (subsets: object[]) => ({ apiVersion: "v1", kind: "Endpoints", metadata: { name: "web", namespace: "default" }, subsets });
  assert.deepEqual(create(endpoints, ep([{ addresses: [{ ip: "10.0.0.1" }], ports: [{ port: 80 }] }])).errors, []);
  assert.deepEqual(create(endpoints, ep([{ addresses: [{ ip: "nope" }], ports: [{ port: 80 }] }])).errors, [
    'subsets[0].addresses[0].ip: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
  ]);
  const five = create(endpoints, ep([{ addresses: ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5"].map((ip) => ({ ip })), ports: [{ port: 80 }] }])).obj;
  assert.equal(endpoints.table!.cells(five, NOW)[1], "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 2 more...");
  assert.equal(endpoints.table!.cells(create(endpoints, ep([])).obj, NOW)[1], "<none>");
});

test("events: validation, table and describe's field selectors", () => {
  const events = def("events");
  const ev = (body: object) => ({ apiVersion: "v1", kind: "Event", metadata: { name: "web.1", namespace: "default" }, ...body });
  const involved = { kind: "Pod", namespace: "default", name: "web", uid: "u-1", apiVersion: "v1", fieldPath: "spec.containers{web}" };
  const { obj, errors } = create(
    events,
    ev({
      involvedObject: involved,
      reason: "Pulled",
      message: "Successfully pulled image \"nginx\"\n",
      source: { component: "nodeagent", host: "node-1" },
      firstTimestamp: "2026-01-02T02:04:05Z",
      lastTimestamp: "2026-01-02T03:04:00Z",
      count: 3,
      type: "Normal",
    }),
  );
  assert.deepEqual(errors, []);
  assert.deepEqual(events.table!.cells(obj, NOW), ["5s", "Normal", "Pulled", "pod/web", "spec.containers{web}", "nodeagent, node-1", 'Successfully pulled image "nginx"', "60m", 3, "web.1"]);
  assert.deepEqual(create(events, ev({ involvedObject: { ...involved, namespace: "other" } })).errors, [
    'involvedObject.namespace: Invalid value: "other": does not match event.namespace',
  ]);
  assert.deepEqual(create(events, ev({ involvedObject: involved, eventTime: "2026-01-02T03:04:05.000000Z" })).errors, [
    "reportingComponent: Required value",
    "reportingComponent: Invalid value: \"\": name part must be non-empty",
    "reportingComponent: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    "reportingInstance: Required value",
    "action: Required value",
    "reason: Required value",
  ]);
  const sel = (f: string) => events.fieldSelectors![f]!(obj);
  assert.deepEqual(
    ["involvedObject.kind", "involvedObject.name", "involvedObject.namespace", "involvedObject.uid", "reason", "source", "type"].map(sel),
    ["Pod", "web", "default", "u-1", "Pulled", "nodeagent", "Normal"],
  );
});

test("serviceaccounts: table", () => {
  const sa = def("serviceaccounts");
  const { obj } = create(sa, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: "default" }, secrets: [{ name: "t" }] });
  assert.deepEqual(sa.table!.cells(obj, NOW), ["default", 1, "4m5s"]);
});
