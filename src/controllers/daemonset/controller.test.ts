// The DaemonSet controller against a real API server, with Node objects
// created by the test. No node agent or scheduler runs here: daemon pods stay
// unbound (pinned to their node by node affinity), and the test plays the
// node agent, marking them Running and Ready through pods/status.

import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { ControllerRevision, DaemonSet } from "../../api/apps/types.js";
import type { Node } from "../../api/core/types.js";
import { eventually, type TestContext } from "../testing.js";
import { type Pod } from "../workload/index.js";
import { markAllReady, useControllers } from "../workload/testing.js";
import { DaemonSetController } from "./controller.js";
import { nodeNameOf } from "./node-eligibility.js";
import { CONTROLLERREVISIONS, DAEMONSETS, NODES, PODS } from "../../api/resource-refs.js";

const node = (name: string, labels: Record<string, string>, taints: NonNullable<Node["spec"]>["taints"] = [], unschedulable = false): Node => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name, labels },
  spec: { taints, unschedulable },
});

const daemonSet = (name: string, extra: Partial<NonNullable<DaemonSet["spec"]>> = {}, nodeSelector?: Record<string, string>): DaemonSet => ({
  apiVersion: "apps/v1",
  kind: "DaemonSet",
  metadata: { name, namespace: "default" },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "agent:1" }], ...(nodeSelector ? { nodeSelector } : {}) } },
    ...extra,
  },
});

describe("daemonset controller", () => {
  let ctx: TestContext;
  useControllers((c) => {
    ctx = c;
    return [new DaemonSetController(c).run()];
  });
  before(async () => {
    await ctx.client.create(NODES, node("n1", { disk: "ssd" }));
    await ctx.client.create(NODES, node("n2", { disk: "ssd" }, [{ key: "dedicated", value: "db", effect: "NoSchedule" }]));
    await ctx.client.create(NODES, node("n3", {}));
    await ctx.client.create(NODES, node("n4", { disk: "ssd" }, [{ key: "node.orch.io/not-ready", effect: "NoExecute" }, { key: "node.orch.io/unschedulable", effect: "NoSchedule" }], true));
  });

  const podsOf = async (app: string) => (await ctx.client.list<Pod>(PODS, { namespace: "default", labelSelector: { app } })).items.filter((p) => !p.metadata.deletionTimestamp);
  const placement = async (app: string) => (await podsOf(app)).map((p) => nodeNameOf(p.spec)).sort().join(",");
  const status = async (name: string) => (await ctx.client.get<DaemonSet>(DAEMONSETS, { namespace: "default", name })).status ?? {};

  test("one pod per matching node, tolerating upstream's default taints, pinned by node affinity", async () => {
    const ds = await ctx.client.create(DAEMONSETS, daemonSet("ssd", {}, { disk: "ssd" }));
    await eventually("pods on n1 and n4 (n2's taint is not tolerated, n3 lacks the label)", async () => (await placement("ssd")) === "n1,n4");
    const pod = (await podsOf("ssd")).find((p) => nodeNameOf(p.spec) === "n1")!;
    assert.deepEqual((pod.spec?.affinity as { nodeAffinity?: unknown }).nodeAffinity, {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["n1"] }] }] },
    });
    const tolerations = (pod.spec?.tolerations ?? []).map((t) => `${t.key}:${t.effect}`);
    for (const t of ["node.orch.io/not-ready:NoExecute", "node.orch.io/unreachable:NoExecute", "node.orch.io/disk-pressure:NoSchedule", "node.orch.io/memory-pressure:NoSchedule", "node.orch.io/pid-pressure:NoSchedule", "node.orch.io/unschedulable:NoSchedule"]) {
      assert.ok(tolerations.includes(t), `${t} in ${tolerations.join(" ")}`);
    }
    assert.deepEqual(pod.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]), [["DaemonSet", "ssd", ds.metadata.uid, true]]);
    const revisions = (await ctx.client.list<ControllerRevision>(CONTROLLERREVISIONS, { namespace: "default", labelSelector: { app: "ssd" } })).items;
    assert.equal(revisions.length, 1);
    assert.equal(pod.metadata.labels?.["controller-revision-hash"], revisions[0]!.metadata.labels?.["controller-revision-hash"]);
    assert.equal(pod.metadata.labels?.["pod-template-generation"], "1");

    await markAllReady(ctx.client, "default");
    const s = await eventually("status", async () => {
      const st = await status("ssd");
      return st.numberReady === 2 ? st : undefined;
    });
    assert.deepEqual([s.desiredNumberScheduled, s.currentNumberScheduled, s.numberAvailable, s.updatedNumberScheduled, s.numberUnavailable ?? 0, s.numberMisscheduled ?? 0], [2, 2, 2, 2, 0, 0]);
  });

  test("a revision's data is the bytes upstream's getPatch makes of the template (Go's typed JSON, keys sorted), which clients compare byte for byte", async () => {
    // As conformance's DaemonSet specs (daemon.Match: bytes.Equal of getPatch(ds) and the revision's data).
    const ds = {
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: { name: "gobytes", namespace: "default" },
      spec: {
        selector: { matchLabels: { "daemonset-name": "gobytes" } },
        template: {
          metadata: { labels: { "daemonset-name": "gobytes" } },
          spec: { containers: [{ name: "app", image: "k8s.gcr.io/e2e-test-images/httpd:2.4.38-2", ports: [{ containerPort: 9376 }], stdin: false, env: [] }], hostNetwork: false },
        },
      },
    } as unknown as DaemonSet;
    await ctx.client.create(DAEMONSETS, ds);
    const [revision] = await eventually("a revision", async () => {
      const r = (await ctx.client.list<ControllerRevision>(CONTROLLERREVISIONS, { namespace: "default", labelSelector: { "daemonset-name": "gobytes" } })).items;
      return r.length === 1 ? r : undefined;
    });
    const text =
      '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"daemonset-name":"gobytes"}},' +
      '"spec":{"containers":[{"image":"k8s.gcr.io/e2e-test-images/httpd:2.4.38-2","imagePullPolicy":"IfNotPresent","name":"app","ports":[{"containerPort":9376,"protocol":"TCP"}],' +
      '"resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","enableServiceLinks":true,' +
      '"restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}}}';
    assert.equal(JSON.stringify(revision!.data), text);
  });

  test("nodes that start matching get a pod; nodes that stop matching, or go, lose theirs", async () => {
    await ctx.client.patch(NODES, { name: "n3", patch: { metadata: { labels: { disk: "ssd" } } } });
    await eventually("a pod on n3", async () => (await placement("ssd")) === "n1,n3,n4");
    await ctx.client.patch(NODES, { name: "n1", patch: { metadata: { labels: { disk: null } } } });
    await eventually("n1's pod gone", async () => (await placement("ssd")) === "n3,n4");
    // A node that goes away takes its daemon pod with it (put back for the tests below).
    await ctx.client.delete(NODES, { name: "n4" });
    await eventually("n4's pod gone", async () => (await placement("ssd")) === "n3");
    await ctx.client.create(NODES, node("n4", { disk: "ssd" }, [{ key: "node.orch.io/not-ready", effect: "NoExecute" }, { key: "node.orch.io/unschedulable", effect: "NoSchedule" }], true));
    await eventually("n4's pod back", async () => (await placement("ssd")) === "n3,n4");
  });

  test("RollingUpdate replaces pods no more than maxUnavailable (1) at a time", async () => {
    await ctx.client.create(DAEMONSETS, daemonSet("roll"));
    await eventually("3 pods", async () => (await placement("roll")) === "n1,n3,n4");
    await markAllReady(ctx.client, "default");
    await eventually("all available", async () => (await status("roll")).numberAvailable === 3);
    await ctx.client.patch(DAEMONSETS, { namespace: "default", name: "roll", type: "strategic", patch: { spec: { template: { spec: { containers: [{ name: "main", image: "agent:2" }] } } } } });
    let worst = 0;
    await eventually("all on agent:2 and available", async () => {
      const pods = await podsOf("roll");
      const availableOnNodes = new Set(pods.filter((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")).map((p) => nodeNameOf(p.spec)));
      worst = Math.max(worst, 3 - availableOnNodes.size);
      await markAllReady(ctx.client, "default");
      const st = await status("roll");
      return pods.length === 3 && pods.every((p) => p.spec?.containers?.[0]?.image === "agent:2") && st.updatedNumberScheduled === 3 && st.numberAvailable === 3;
    });
    assert.ok(worst <= 1, `at most one node without an available pod, saw ${worst}`);
    const revisions = (await ctx.client.list<ControllerRevision>(CONTROLLERREVISIONS, { namespace: "default", labelSelector: { app: "roll" } })).items;
    assert.deepEqual(revisions.map((r) => r.revision).sort(), [1, 2]);
  });

  test("OnDelete replaces a pod only once it is deleted", async () => {
    await ctx.client.create(DAEMONSETS, daemonSet("manual", { updateStrategy: { type: "OnDelete" } }));
    await eventually("3 pods", async () => (await placement("manual")) === "n1,n3,n4");
    await ctx.client.patch(DAEMONSETS, { namespace: "default", name: "manual", type: "strategic", patch: { spec: { template: { spec: { containers: [{ name: "main", image: "agent:2" }] } } } } });
    await eventually("the new revision observed", async () => (await status("manual")).observedGeneration === 2);
    assert.ok((await podsOf("manual")).every((p) => p.spec?.containers?.[0]?.image === "agent:1"), "no pod replaced");
    const victim = (await podsOf("manual")).find((p) => nodeNameOf(p.spec) === "n3")!;
    await ctx.client.delete(PODS, { namespace: "default", name: victim.metadata.name! });
    await eventually("n3's pod on agent:2", async () => (await podsOf("manual")).some((p) => nodeNameOf(p.spec) === "n3" && p.spec?.containers?.[0]?.image === "agent:2"));
    assert.equal((await podsOf("manual")).filter((p) => p.spec?.containers?.[0]?.image === "agent:1").length, 2);
  });

  test("RollingUpdate with maxSurge starts the new pod beside the old one and removes the old once the new is available", async () => {
    await ctx.client.create(DAEMONSETS, daemonSet("surge", { updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } }));
    await eventually("3 pods", async () => (await placement("surge")) === "n1,n3,n4");
    await markAllReady(ctx.client, "default");
    await eventually("all available", async () => (await status("surge")).numberAvailable === 3);
    await ctx.client.patch(DAEMONSETS, { namespace: "default", name: "surge", type: "strategic", patch: { spec: { template: { spec: { containers: [{ name: "main", image: "agent:2" }] } } } } });
    const doubled = await eventually("one node with both pods", async () => {
      const pods = await podsOf("surge");
      return pods.length === 4 ? pods : undefined;
    });
    const twice = doubled.map((p) => nodeNameOf(p.spec)).filter((n, i, all) => all.indexOf(n) !== i);
    assert.equal(twice.length, 1, "maxSurge 1: one node at a time");
    let most = 0;
    await eventually("all on agent:2", async () => {
      const pods = await podsOf("surge");
      most = Math.max(most, pods.length);
      await markAllReady(ctx.client, "default");
      const st = await status("surge");
      return pods.length === 3 && pods.every((p) => p.spec?.containers?.[0]?.image === "agent:2") && st.numberAvailable === 3 && st.updatedNumberScheduled === 3;
    });
    assert.ok(most <= 4, `never more than one surge pod, saw ${most} pods`);
  });

  test("a failed pod is replaced at once, the next failure on that node only after a backoff", async () => {
    await ctx.client.create(DAEMONSETS, daemonSet("flaky", {}, { disk: "ssd" }));
    const onN3 = async () => (await podsOf("flaky")).filter((p) => nodeNameOf(p.spec) === "n3");
    const fail = (p: Pod) => ctx.client.patch(PODS, { namespace: "default", name: p.metadata.name!, subresource: "status", patch: { status: { phase: "Failed" } } });
    const [first] = await eventually("a pod on n3", async () => {
      const p = await onN3();
      return p.length === 1 ? p : undefined;
    });
    const firstFailedAt = Date.now();
    await fail(first!);
    const [second] = await eventually("a replacement", async () => {
      const p = (await onN3()).filter((x) => x.metadata.uid !== first!.metadata.uid);
      return p.length === 1 ? p : undefined;
    });
    await fail(second!);
    await eventually("the second replacement", async () => (await onN3()).some((x) => x.metadata.uid !== first!.metadata.uid && x.metadata.uid !== second!.metadata.uid), 5000);
    // The first replacement (after firstFailedAt) started a 1 s backoff for n3.
    const waited = Date.now() - firstFailedAt;
    assert.ok(waited >= 1000, `second replacement ${waited} ms after the first failure: the backoff held it back`);
  });
});
