// The mirroring controller against a real API server: a selector-less
// service's Endpoints (ready and not-ready addresses) become a slice; changes
// follow; a selector, the skip-mirror label or deletion takes the slice away.
// The kubernetes service's endpoints (written by the API server) are mirrored too.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import type { Endpoints, Service } from "../../api/core/types.js";
import type { EndpointSlice } from "../../api/discovery/types.js";
import { controllerContext, eventually, type TestContext } from "../testing.js";
import { ENDPOINTS, SERVICES, endpointSliceResource } from "../../api/resource-refs.js";
import { EndpointSliceMirroringController } from "./controller.js";

describe("endpointslice mirroring controller", () => {
  let t: TestServer;
  let ctx: TestContext;
  let running: Promise<void>[];
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    ctx = controllerContext(t);
    running = [new EndpointSliceMirroringController(ctx).run()];
    ctx.start();
  });
  after(async () => {
    await ctx.stop(...running);
    await t.close();
  });

  const slices = async (service: string, namespace = "default") =>
    (await ctx.client.list<EndpointSlice>(endpointSliceResource(ctx.naming), { namespace, labelSelector: { "orch.io/service-name": service } })).items;

  test("a selector-less service's Endpoints are mirrored; updates follow; the skip label and deletion remove the slice", async () => {
    await ctx.client.create<Service>(SERVICES, { apiVersion: "v1", kind: "Service", metadata: { name: "db", namespace: "default" }, spec: { ports: [{ name: "pg", port: 5432 }] } });
    const ep = await ctx.client.create<Endpoints>(ENDPOINTS, {
      apiVersion: "v1", kind: "Endpoints", metadata: { name: "db", namespace: "default" },
      subsets: [{ addresses: [{ ip: "192.0.2.10", hostname: "db-0" }], notReadyAddresses: [{ ip: "192.0.2.11" }], ports: [{ name: "pg", port: 5432, protocol: "TCP" }] }],
    });
    const [slice] = await eventually("one mirrored slice", async () => { const s = await slices("db"); return s.length === 1 ? s : undefined; }, 10_000);
    assert.equal(slice!.addressType, "IPv4");
    assert.deepEqual(slice!.ports, [{ name: "pg", port: 5432, protocol: "TCP" }]);
    assert.deepEqual(slice!.endpoints?.map((e) => [e.addresses, e.conditions?.ready, e.hostname ?? ""]), [[["192.0.2.10"], true, "db-0"], [["192.0.2.11"], false, ""]]);
    assert.equal(slice!.metadata.labels?.["endpointslice.orch.io/managed-by"], "endpointslicemirroring-controller.orch.io");
    assert.equal(slice!.metadata.ownerReferences?.[0]?.kind, "Endpoints");

    await ctx.client.update<Endpoints>(ENDPOINTS, { ...ep, subsets: [{ addresses: [{ ip: "192.0.2.12" }], ports: [{ name: "pg", port: 5432, protocol: "TCP" }] }] });
    await eventually("the update mirrored", async () => ((await slices("db"))[0]?.endpoints?.[0]?.addresses?.[0] === "192.0.2.12" || undefined), 10_000);

    const current = await ctx.client.get<Endpoints>(ENDPOINTS, { namespace: "default", name: "db" });
    await ctx.client.update<Endpoints>(ENDPOINTS, { ...current, metadata: { ...current.metadata, labels: { "endpointslice.orch.io/skip-mirror": "true" } } });
    await eventually("the slice removed for skip-mirror", async () => ((await slices("db")).length === 0 || undefined), 10_000);
  });

  test("a service with a selector is not mirrored (the endpointslice controller owns its slices)", async () => {
    await ctx.client.create<Service>(SERVICES, { apiVersion: "v1", kind: "Service", metadata: { name: "web", namespace: "default" }, spec: { selector: { app: "web" }, ports: [{ port: 80 }] } });
    await ctx.client.create<Endpoints>(ENDPOINTS, { apiVersion: "v1", kind: "Endpoints", metadata: { name: "web", namespace: "default" }, subsets: [{ addresses: [{ ip: "192.0.2.20" }], ports: [{ port: 80 }] }] });
    // The kubernetes service (no selector, endpoints from the API server) is mirrored meanwhile: once it is, web's turn has passed too.
    await eventually("the kubernetes service mirrored", async () => ((await slices("kubernetes")).length === 1 || undefined), 10_000);
    assert.deepEqual(await slices("web"), []);
  });
});
