// The endpoints and endpointslice controllers against a real API server.
// No node agent runs: the test plays it, giving pods IPs and Ready conditions.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import type { Endpoints, Pod } from "../../api/core/types.js";
import type { EndpointSlice } from "../../api/discovery/types.js";
import { controllerContext, eventually, type TestContext } from "../testing.js";
import { ENDPOINTS, NODES, PODS, SERVICES, endpointSliceResource } from "../../api/resource-refs.js";
import { EndpointsController } from "./controller.js";
import { EndpointSliceController } from "../endpointslice/controller.js";

describe("endpoints and endpointslice controllers", () => {
  let t: TestServer;
  let ctx: TestContext;
  let running: Promise<void>[];
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    ctx = controllerContext(t, { config: { maxEndpointsPerSlice: 2 } });
    running = [new EndpointsController(ctx).run(), new EndpointSliceController(ctx).run()];
    ctx.start();
  });
  after(async () => {
    await ctx.stop(...running);
    await t.close();
  });

  /** Plays the node agent: the pod runs on node-a with this IP, ready or not. */
  const runPod = async (name: string, ip: string, ready: boolean, labels: Record<string, string> = { app: "web" }) => {
    const pod = await ctx.client.create<Pod>(PODS, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: "default", labels },
      spec: { nodeName: "node-a", hostname: name, subdomain: "web", containers: [{ name: "c", image: "nginx", ports: [{ name: "http", containerPort: 8080 }] }] },
    });
    await ctx.client.update(PODS, { ...pod, status: { ...pod.status, phase: "Running", podIP: ip, podIPs: [{ ip }], conditions: [{ type: "Ready", status: ready ? "True" : "False" }] } }, { subresource: "status" });
  };
  const endpoints = () => ctx.client.get<Endpoints>(ENDPOINTS, { namespace: "default", name: "web" }).catch(() => undefined);
  const slices = async (service = "web") =>
    (await ctx.client.list<EndpointSlice>(endpointSliceResource(ctx.naming), { namespace: "default", labelSelector: { "orch.io/service-name": service } })).items;

  test("ready and not-ready pods, ports by name and number, managed-by and service-name labels; deletion follows", async () => {
    await ctx.client.create(NODES, { apiVersion: "v1", kind: "Node", metadata: { name: "node-a", labels: { "topology.orch.io/zone": "z1" } } });
    await ctx.client.create(SERVICES, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: "default", labels: { tier: "front" } },
      spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: "http" }, { name: "metrics", port: 9090, targetPort: 9090 }] },
    });
    await runPod("web-1", "10.1.0.1", true);
    await runPod("web-2", "10.1.0.2", false);
    await runPod("other", "10.1.0.3", true, { app: "other" });

    const ep = await eventually("Endpoints with both pods", async () => {
      const e = await endpoints();
      return e?.subsets?.[0]?.addresses?.length === 1 && e.subsets[0].notReadyAddresses?.length === 1 ? e : undefined;
    });
    const subset = ep.subsets![0]!;
    assert.equal(subset.addresses![0]!.ip, "10.1.0.1");
    assert.equal(subset.addresses![0]!.hostname, "web-1", "hostname when the pod's subdomain is the service");
    assert.equal(subset.addresses![0]!.nodeName, "node-a");
    assert.equal(subset.notReadyAddresses![0]!.ip, "10.1.0.2");
    assert.deepEqual(subset.ports, [{ name: "http", port: 8080, protocol: "TCP" }, { name: "metrics", port: 9090, protocol: "TCP" }]);
    assert.equal(ep.metadata.labels?.["tier"], "front");

    const [slice] = await eventually("one slice with both pods", async () => {
      const s = await slices();
      return s.length === 1 && s[0]!.endpoints?.length === 2 ? s : undefined;
    });
    assert.equal(slice!.metadata.labels?.["endpointslice.orch.io/managed-by"], "endpointslice-controller.orch.io");
    assert.equal(slice!.metadata.ownerReferences?.[0]?.kind, "Service");
    assert.equal(slice!.addressType, "IPv4");
    assert.deepEqual(slice!.ports, [{ name: "http", port: 8080, protocol: "TCP" }, { name: "metrics", port: 9090, protocol: "TCP" }]);
    const one = slice!.endpoints!.find((e) => e.addresses?.[0] === "10.1.0.1")!;
    assert.deepEqual(one.conditions, { ready: true, serving: true, terminating: false });
    assert.equal(one.zone, "z1");
    assert.equal(one.targetRef?.name, "web-1");
    assert.deepEqual(slice!.endpoints!.find((e) => e.addresses?.[0] === "10.1.0.2")!.conditions, { ready: false, serving: false, terminating: false });

    // A terminating pod leaves Endpoints but stays in the slice as terminating (still serving while ready).
    await ctx.client.delete(PODS, { namespace: "default", name: "web-1" });
    await eventually("web-1 out of Endpoints", async () => (await endpoints())?.subsets?.[0]?.addresses === undefined);
    await eventually("web-1 terminating in the slice", async () => {
      const e = (await slices())[0]?.endpoints?.find((x) => x.addresses?.[0] === "10.1.0.1");
      return e?.conditions?.terminating === true && e.conditions.serving === true && e.conditions.ready === false;
    });

    await ctx.client.delete(SERVICES, { namespace: "default", name: "web" });
    await eventually("Endpoints gone", async () => (await endpoints()) === undefined);
    await eventually("slices gone", async () => (await slices()).length === 0);
  });

  test("a slice of ours deleted by someone else is made again", async () => {
    await ctx.client.create(SERVICES, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "remade", namespace: "default" },
      spec: { selector: { app: "remade" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
    });
    await runPod("remade-1", "10.1.3.1", true, { app: "remade" });
    const [first] = await eventually("a slice for remade", async () => {
      const s = await slices("remade");
      return s.length === 1 && s[0]!.endpoints?.length === 1 ? s : undefined;
    });
    await ctx.client.delete(endpointSliceResource(ctx.naming), { namespace: "default", name: first!.metadata.name! });
    const [again] = await eventually("the slice made again", async () => {
      const s = await slices("remade");
      return s.length === 1 && s[0]!.metadata.uid !== first!.metadata.uid ? s : undefined;
    });
    assert.equal(again!.endpoints?.[0]?.addresses?.[0], "10.1.3.1");
  });

  test("--max-endpoints-per-slice splits a service's endpoints over several slices", async () => {
    await ctx.client.create(SERVICES, { apiVersion: "v1", kind: "Service", metadata: { name: "many", namespace: "default" }, spec: { selector: { app: "many" }, ports: [{ port: 80 }] } });
    for (const n of [1, 2, 3]) await runPod(`many-${n}`, `10.2.0.${n}`, true, { app: "many" });
    const found = await eventually("two slices holding three endpoints", async () => {
      const s = await slices("many");
      return s.length === 2 && s.reduce((sum, x) => sum + (x.endpoints?.length ?? 0), 0) === 3 ? s : undefined;
    });
    assert.deepEqual(found.map((x) => x.endpoints?.length).sort(), [1, 2]);
  });
});
