// Node lifecycle and taint eviction against a real API server. No node agent
// runs: the test plays it, posting the node's Ready condition and renewing
// its Lease, then falls silent; the grace period is shortened to 400 ms.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import type { Node, Pod, Toleration } from "../../api/core/types.js";
import type { Lease } from "../../api/coordination/types.js";
import { formatMicroTimestamp, formatTimestamp } from "../../machinery/index.js";
import { MetricsRegistry } from "../../component/metrics/index.js";
import { assertExposesMetric } from "../../component/metrics/testing.js";
import { controllerContext, deletingOrGone, metricValue, eventually, type TestContext } from "../testing.js";
import { NODES, PODS, leaseResource } from "../../api/resource-refs.js";
import { NodeLifecycleController, agentDisplayName } from "./controller.js";
import { TaintEvictionController } from "./taint-eviction.js";
import { tolerationWindowMs } from "./taints.js";
import { toleratesTaint } from "../../api/core/node-matching.js";
import { namingFor } from "../../machinery/naming.js";

test("tolerations: Exists with no key matches all; Equal compares values; the window is the smallest tolerationSeconds", () => {
  const taint = { key: "node.orch.io/unreachable", effect: "NoExecute" };
  assert.equal(toleratesTaint({ operator: "Exists" }, taint), true);
  assert.equal(toleratesTaint({ key: "node.orch.io/unreachable", operator: "Exists", effect: "NoSchedule" }, taint), false);
  assert.equal(toleratesTaint({ key: "k", operator: "Equal", value: "a" }, { key: "k", value: "b", effect: "NoExecute" }), false);
  assert.equal(tolerationWindowMs([], [taint]), 0);
  assert.equal(tolerationWindowMs([{ operator: "Exists" }], [taint]), Infinity);
  assert.equal(tolerationWindowMs([{ operator: "Exists", tolerationSeconds: 30 }, { key: taint.key, operator: "Exists", tolerationSeconds: 5 }], [taint]), 5000);
  assert.equal(agentDisplayName(namingFor()), "Orch node agent");
  assert.equal(agentDisplayName(namingFor("k8s.io")), "Kubelet");
});

describe("node lifecycle and taint eviction", () => {
  let t: TestServer;
  let ctx: TestContext;
  let running: Promise<void>[];
  const metrics = new MetricsRegistry();

  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    ctx = controllerContext(t, { metrics, config: { nodeMonitorGracePeriodMs: 400 } });
    running = [new NodeLifecycleController(ctx).run(), new TaintEvictionController(ctx).run()];
    ctx.start();
  });
  after(async () => {
    await ctx.stop(...running);
    await t.close();
  });

  const leases = () => leaseResource(ctx.naming);
  /** Plays the node agent: registers the node Ready with a lease. */
  const register = async (name: string, labels: Record<string, string> = {}) => {
    const now = formatTimestamp();
    const node = await ctx.client.create<Node>(NODES, { apiVersion: "v1", kind: "Node", metadata: { name, labels } });
    await ctx.client.update(NODES, { ...node, status: { conditions: [{ type: "Ready", status: "True", reason: "NodeagentReady", message: "ready", lastHeartbeatTime: now, lastTransitionTime: now }] } }, { subresource: "status" });
    await ctx.client.create<Lease>(leases(), { apiVersion: "coordination.orch.io/v1", kind: "Lease", metadata: { name, namespace: "orch-node-lease" }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: formatMicroTimestamp() } });
  };
  const renew = async (name: string) => {
    const lease = await ctx.client.get<Lease>(leases(), { namespace: "orch-node-lease", name });
    await ctx.client.update(leases(), { ...lease, spec: { ...lease.spec, renewTime: formatMicroTimestamp() } });
  };
  const getNode = (name: string) => ctx.client.get<Node>(NODES, { name });
  const ready = (node: Node) => node.status?.conditions?.find((c) => c.type === "Ready");
  const createPod = (name: string, node: string, tolerations: Toleration[] = []) =>
    ctx.client.create<Pod>(PODS, { apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "default" }, spec: { nodeName: node, tolerations, containers: [{ name: "c", image: "busybox" }] } });
  const evicted = (name: string) => deletingOrGone(ctx, PODS, "default", name);

  test("a node that keeps renewing its lease stays Ready; a silent one goes Unknown and is tainted unreachable", async () => {
    await register("alive", { "topology.orch.io/zone": "z1" });
    await register("silent", { "topology.orch.io/zone": "z1" });
    const deadline = Date.now() + 900;
    while (Date.now() < deadline) {
      await renew("alive");
      await new Promise((r) => setTimeout(r, 100)); // the agent's renew interval, shortened
    }
    assert.equal(ready(await getNode("alive"))?.status, "True", "renewing the lease is a heartbeat");
    const node = await eventually("silent node Unknown and tainted", async () => {
      const n = await getNode("silent");
      return ready(n)?.status === "Unknown" && (n.spec?.taints ?? []).length === 2 ? n : undefined;
    });
    assert.equal(ready(node)?.reason, "NodeStatusUnknown");
    assert.equal(ready(node)?.message, "Orch node agent stopped posting node status.");
    assert.deepEqual(node.spec?.taints?.map((x) => `${x.key}:${x.effect}`).sort(), ["node.orch.io/unreachable:NoExecute", "node.orch.io/unreachable:NoSchedule"]);
    assert.ok(node.spec?.taints?.find((x) => x.effect === "NoExecute")?.timeAdded, "NoExecute taints carry timeAdded");
    assert.equal(metricValue(metrics, "node_collector_evictions_total", { zone: ":\x00:z1" }), 1);
    assertExposesMetric(metrics.expose(), { name: "node_collector_evictions_total", kind: "counter", labels: ["zone"] });
    assert.equal(metricValue(metrics, "node_collector_unhealthy_nodes_in_zone", { zone: ":\x00:z1" }), 1);
    assert.equal(metricValue(metrics, "node_collector_zone_size", { zone: ":\x00:z1" }), 2);
    // Counted per node change: a node joins its zone's counts and a deleted one leaves them.
    await register("passing", { "topology.orch.io/zone": "z2" });
    await eventually("a zone of one", async () => metricValue(metrics, "node_collector_zone_size", { zone: ":\x00:z2" }) === 1);
    await ctx.client.delete(NODES, { name: "passing" });
    await eventually("the zone without the deleted node", async () => metricValue(metrics, "node_collector_zone_size", { zone: ":\x00:z2" }) === 0);
    assert.equal(metricValue(metrics, "node_collector_zone_health", { zone: ":\x00:z2" }), 100);
    assert.equal(metricValue(metrics, "node_collector_zone_size", { zone: ":\x00:z1" }), 2);
  });

  test("a node that reports Ready=False (lease fresh) is tainted not-ready NoSchedule and NoExecute; Ready again clears them", async () => {
    await register("sick");
    // Keep the lease fresh throughout, so the node is heard from and not Unknown.
    let heard = true;
    const heartbeats = (async () => {
      while (heard) {
        await renew("sick");
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const post = async (status: "True" | "False", reason: string) => {
      const node = await getNode("sick");
      const now = formatTimestamp();
      await ctx.client.update(NODES, { ...node, status: { conditions: [{ type: "Ready", status, reason, message: reason, lastHeartbeatTime: now, lastTransitionTime: now }] } }, { subresource: "status" });
    };
    const ourTaints = (n: Node) => (n.spec?.taints ?? []).map((x) => `${x.key}:${x.effect}`).sort();
    try {
      await post("False", "NodeagentNotReady");
      const node = await eventually("sick node tainted not-ready", async () => {
        const n = await getNode("sick");
        return ourTaints(n).length === 2 ? n : undefined;
      });
      assert.equal(ready(node)?.status, "False", "the agent's own condition stands (not turned Unknown)");
      assert.deepEqual(ourTaints(node), ["node.orch.io/not-ready:NoExecute", "node.orch.io/not-ready:NoSchedule"]);
      assert.ok(node.spec?.taints?.find((x) => x.effect === "NoExecute")?.timeAdded, "the NoExecute taint carries timeAdded");
      await post("True", "NodeagentReady");
      await eventually("the not-ready taints removed", async () => ourTaints(await getNode("sick")).length === 0);
    } finally {
      heard = false;
      await heartbeats;
    }
  });

  test("taint eviction: untolerating pods go at once, tolerationSeconds later, tolerate-forever pods stay", async () => {
    await register("doomed");
    await createPod("intolerant", "doomed");
    await createPod("patient", "doomed", [
      // timeAdded has whole seconds: 2 s means at least 1 s after the taint.
      { key: "node.orch.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 2 },
      { key: "example.com/maintenance", operator: "Exists", effect: "NoExecute", tolerationSeconds: 2 },
    ]);
    const stubborn = await createPod("stubborn", "doomed", [{ operator: "Exists" }]);
    await ctx.client.update(PODS, { ...stubborn, status: { ...stubborn.status, phase: "Running", conditions: [{ type: "Ready", status: "True" }] } }, { subresource: "status" });
    const defaulted = await ctx.client.get<Pod>(PODS, { namespace: "default", name: "intolerant" });
    assert.deepEqual(
      defaulted.spec?.tolerations?.map((x) => `${x.key}:${x.tolerationSeconds}`),
      ["node.orch.io/not-ready:300", "node.orch.io/unreachable:300"],
      "pod creation adds upstream's default 300 s tolerations",
    );
    const node = await eventually("doomed tainted unreachable", async () => {
      const n = await getNode("doomed");
      return (n.spec?.taints ?? []).some((x) => x.effect === "NoExecute") ? n : undefined;
    });
    assert.equal(await evicted("intolerant"), false, "the default toleration holds it for 300 s");
    // A taint it does not tolerate at all: out at once.
    await ctx.client.update(NODES, { ...node, spec: { ...node.spec, taints: [...(node.spec?.taints ?? []), { key: "example.com/maintenance", effect: "NoExecute", timeAdded: formatTimestamp() }] } });
    const tainted = Date.now();
    await eventually("the untolerating pod evicted", () => evicted("intolerant"));
    const early = Date.now() - tainted;
    assert.equal(await evicted("patient"), false, `the patient pod waits its tolerationSeconds (checked after ${early} ms)`);
    await eventually("the patient pod evicted after 2 s", () => evicted("patient"), 6000);
    const pod = await ctx.client.get<Pod>(PODS, { namespace: "default", name: "patient" });
    assert.equal(pod.status?.conditions?.find((c) => c.type === "DisruptionTarget")?.reason, "DeletionByTaintManager");
    assert.equal(await evicted("stubborn"), false, "tolerates everything forever");
    await eventually("the pod on the unreachable node marked not ready", async () => {
      const p = await ctx.client.get<Pod>(PODS, { namespace: "default", name: "stubborn" });
      return p.status?.conditions?.find((c) => c.type === "Ready")?.status === "False";
    });
  });

  test("a node whose agent comes back is Ready again and loses the taints", async () => {
    const node = await getNode("silent");
    const now = formatTimestamp();
    await ctx.client.update(NODES, { ...node, status: { ...node.status, conditions: [{ type: "Ready", status: "True", reason: "NodeagentReady", message: "ready", lastHeartbeatTime: now, lastTransitionTime: now }] } }, { subresource: "status" });
    await renew("silent");
    await eventually("the taints removed", async () => ((await getNode("silent")).spec?.taints ?? []).length === 0);
  });
});
