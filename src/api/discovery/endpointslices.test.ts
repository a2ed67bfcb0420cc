import { test } from "node:test";
import assert from "node:assert/strict";
import { namingFor } from "../../machinery/naming.js";
import { create, update, NOW } from "../apps/testing.js";
import { endpointSlicesResource } from "./endpointslices.js";

const slice = (extra: Record<string, unknown> = {}) => ({
  apiVersion: "discovery.orch.io/v1",
  kind: "EndpointSlice",
  metadata: { name: "web-abc", namespace: "default" },
  addressType: "IPv4",
  endpoints: [{ addresses: ["10.0.0.1"], conditions: { ready: true } }],
  ports: [{ name: "http", port: 80 }],
  ...extra,
});

test("endpointslices: group from the naming table, protocol defaulted", () => {
  const def = endpointSlicesResource(namingFor());
  assert.equal(def.group, "discovery.orch.io");
  assert.equal(endpointSlicesResource(namingFor("k8s.io")).group, "discovery.k8s.io");
  const { obj, errors } = create(def, slice());
  assert.deepEqual(errors, []);
  assert.equal((obj["ports"] as { protocol: string }[])[0]!.protocol, "TCP");
});

test("endpointslices: validation", () => {
  const def = endpointSlicesResource(namingFor());
  const cases: [Record<string, unknown>, string[]][] = [
    [{ addressType: "IPX" }, ['addressType: Unsupported value: "IPX": supported values: "IPv4", "IPv6", "FQDN"']],
    [{ endpoints: [{ addresses: ["fe80::1"] }] }, ["endpoints[0].addresses[0]: Invalid value: \"fe80::1\": must be a valid IPv4 address"]],
    [{ endpoints: [{ addresses: [] }] }, ["endpoints[0].addresses: Required value: must contain at least 1 address"]],
    [{ ports: [{ name: "a", port: 80 }, { name: "a", port: 81 }] }, ['ports[1].name: Duplicate value: "a"']],
    [{ ports: [{ name: "x", port: 70000 }] }, ["ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive"]],
  ];
  for (const [extra, want] of cases) assert.deepEqual(create(def, slice(extra)).errors, want, JSON.stringify(extra));
  const { obj } = create(def, slice());
  const next = structuredClone(obj);
  next["addressType"] = "IPv6";
  next["endpoints"] = [{ addresses: ["fe80::1"] }];
  assert.deepEqual(update(def, next, obj), ['addressType: Invalid value: "IPv6": field is immutable']);
});

test("endpointslices: table as kubectl get endpointslices shows it", () => {
  const def = endpointSlicesResource(namingFor());
  assert.deepEqual(def.table!.columns.map((c) => c.name), ["Name", "AddressType", "Ports", "Endpoints", "Age"]);
  const many = { endpoints: [{ addresses: ["10.0.0.1", "10.0.0.2"] }, { addresses: ["10.0.0.3", "10.0.0.4"] }], ports: [{ port: 80 }, { port: 443 }] };
  assert.deepEqual(def.table!.cells(create(def, slice(many)).obj, NOW).slice(0, 4), ["web-abc", "IPv4", "80,443", "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more..."]);
  assert.deepEqual(def.table!.cells(create(def, slice({ endpoints: [], ports: [] })).obj, NOW).slice(1, 4), ["IPv4", "<unset>", "<unset>"]);
});
