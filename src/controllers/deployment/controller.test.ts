// The Deployment controller with the ReplicaSet controller against a real API
// server. No node agent or scheduler runs here: the test plays the node
// agent, marking pods Running and Ready through pods/status when a rollout
// needs them ready.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Deployment, ReplicaSet } from "../../api/apps/types.js";
import { eventually, type TestContext } from "../testing.js";
import { ReplicaSetController } from "../replicaset/controller.js";
import { type Pod } from "../workload/index.js";
import { markAllReady, scaleTo, useControllers } from "../workload/testing.js";
import { DeploymentController } from "./controller.js";
import { DEPLOYMENTS, PODS, REPLICASETS } from "../../api/resource-refs.js";

const deployment = (name: string, extra: Partial<NonNullable<Deployment["spec"]>> = {}): Deployment => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "default" },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } },
    ...extra,
  },
});

describe("deployment controller", () => {
  let ctx: TestContext;
  useControllers((c) => {
    ctx = c;
    return [new ReplicaSetController(c).run(), new DeploymentController(c).run()];
  });

  const get = (name: string) => ctx.client.get<Deployment>(DEPLOYMENTS, { namespace: "default", name });
  const setsOf = async (d: Deployment) =>
    (await ctx.client.list<ReplicaSet>(REPLICASETS, { namespace: "default" })).items.filter((rs) => rs.metadata.ownerReferences?.some((r) => r.uid === d.metadata.uid && r.controller));
  const podsOf = async (app: string) => (await ctx.client.list<Pod>(PODS, { namespace: "default", labelSelector: { app } })).items.filter((p) => !p.metadata.deletionTimestamp);
  const setImage = (name: string, image: string) => ctx.client.patch(DEPLOYMENTS, { namespace: "default", name, type: "strategic", patch: { spec: { template: { spec: { containers: [{ name: "main", image }] } } } } });
  const scale = (name: string, replicas: number) => scaleTo(ctx.client, DEPLOYMENTS, name, replicas);
  /** Marks pods ready as they come (the node agent's part) until the deployment has rolled out. */
  const rolledOut = (name: string, ms = 10_000) =>
    eventually(`${name} rolled out`, async () => {
      await markAllReady(ctx.client, "default");
      const d = await get(name);
      const s = d.status ?? {};
      const progressing = s.conditions?.find((c) => c.type === "Progressing");
      const n = d.spec?.replicas ?? 1;
      return (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) && s.updatedReplicas === n && s.replicas === n && s.availableReplicas === n && progressing?.reason === "NewReplicaSetAvailable" ? d : undefined;
    }, ms);

  test("creates a ReplicaSet <name>-<pod-template-hash> at revision 1 with the pods, and reports Available and Progressing", async () => {
    const created = await ctx.client.create(DEPLOYMENTS, deployment("web"));
    const d = await rolledOut("web");
    const [rs, ...more] = await setsOf(created);
    assert.equal(more.length, 0);
    const hash = rs!.metadata.labels?.["pod-template-hash"];
    assert.ok(hash);
    assert.equal(rs!.metadata.name, `web-${hash}`);
    assert.equal(rs!.spec?.selector?.matchLabels?.["pod-template-hash"], hash);
    assert.equal(rs!.spec?.template?.metadata?.labels?.["pod-template-hash"], hash);
    assert.equal(rs!.metadata.annotations?.["deployment.orch.io/revision"], "1");
    assert.equal(rs!.metadata.annotations?.["deployment.kubernetes.io/revision"], "1", "kubectl rollout history/undo read this key");
    assert.equal(rs!.metadata.annotations?.["deployment.orch.io/desired-replicas"], "3");
    assert.equal(rs!.metadata.annotations?.["deployment.orch.io/max-replicas"], "4");
    assert.equal(d.metadata.annotations?.["deployment.orch.io/revision"], "1");
    const pods = await podsOf("web");
    assert.equal(pods.length, 3);
    for (const p of pods) assert.equal(p.metadata.ownerReferences?.[0]?.name, rs!.metadata.name);
    const available = d.status?.conditions?.find((c) => c.type === "Available");
    assert.equal(available?.status, "True");
    assert.equal(available?.reason, "MinimumReplicasAvailable");
    assert.equal(d.status?.conditions?.find((c) => c.type === "Progressing")?.message, `ReplicaSet "${rs!.metadata.name}" has successfully progressed.`);
  });

  test("a rolled-out Deployment's syncs do not write its ReplicaSet (minReadySeconds unset is 0)", async () => {
    const rsPuts = async () => {
      const text = (await ctx.client.request({ method: "GET", path: "/metrics" })).body.toString();
      const line = text.split("\n").find((l) => l.startsWith("apiserver_request_total{") && l.includes('resource="replicasets"') && l.includes('subresource=""') && l.includes('verb="PUT"') && l.includes('code="200"'));
      return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
    };
    const before = await rsPuts();
    const controller = new DeploymentController(ctx);
    for (let i = 0; i < 3; i++) await controller.sync("default/web");
    assert.equal(await rsPuts(), before, "no ReplicaSet PUT from syncs with nothing to change");
  });

  test("a rolling update stays within maxSurge and maxUnavailable and ends on revision 2", async () => {
    await setImage("web", "nginx:1.28");
    let most = 0;
    let fewestReady = Infinity;
    const d = await eventually("web rolled out to nginx:1.28", async () => {
      const pods = await podsOf("web");
      most = Math.max(most, pods.length);
      fewestReady = Math.min(fewestReady, pods.filter((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")).length);
      await markAllReady(ctx.client, "default");
      const dep = await get("web");
      const s = dep.status ?? {};
      return (s.observedGeneration ?? 0) >= (dep.metadata.generation ?? 0) && s.updatedReplicas === 3 && s.replicas === 3 && s.availableReplicas === 3 ? dep : undefined;
    });
    assert.ok(most <= 4, `at most replicas + maxSurge (1) pods at once, saw ${most}`);
    assert.ok(fewestReady >= 3 - 0, `maxUnavailable 25% of 3 rounds down to 0: saw ${fewestReady} ready`);
    assert.equal(d.metadata.annotations?.["deployment.orch.io/revision"], "2");
    const sets = await setsOf(d);
    assert.equal(sets.length, 2);
    const newest = sets.find((rs) => rs.spec?.template?.spec?.containers?.[0]?.image === "nginx:1.28")!;
    const oldest = sets.find((rs) => rs !== newest)!;
    assert.equal(newest.spec?.replicas, 3);
    assert.equal(oldest.spec?.replicas, 0);
    assert.equal(newest.metadata.annotations?.["deployment.orch.io/revision"], "2");
    for (const p of await podsOf("web")) assert.equal(p.metadata.labels?.["pod-template-hash"], newest.metadata.labels?.["pod-template-hash"]);
  });

  test("scaling resizes the ReplicaSet", async () => {
    await scale("web", 5);
    await eventually("5 pods", async () => (await podsOf("web")).length === 5);
    await rolledOut("web");
  });

  test("going back to an old template reuses its ReplicaSet with a new revision", async () => {
    await setImage("web", "nginx:1.27");
    const d = await rolledOut("web");
    const sets = await setsOf(d);
    assert.equal(sets.length, 2, "no third ReplicaSet");
    const current = sets.find((rs) => rs.spec?.template?.spec?.containers?.[0]?.image === "nginx:1.27")!;
    assert.equal(current.metadata.annotations?.["deployment.orch.io/revision"], "3");
    assert.equal(d.metadata.annotations?.["deployment.orch.io/revision"], "3");
  });

  test("an adopted ReplicaSet's int64 revision is carried on exactly (no float rounding): the new one gets revision + 1", async () => {
    // As conformance's RollingUpdateDeployment: 3546343826724305832 is above 2^53.
    const labels = { app: "big", pod: "httpd" };
    await ctx.client.create<ReplicaSet>(REPLICASETS, {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "big-old", namespace: "default", labels, annotations: { "deployment.orch.io/revision": "3546343826724305832" } },
      spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: "httpd", image: "httpd:2.4" }] } } },
    });
    const created = await ctx.client.create(DEPLOYMENTS, deployment("big", { replicas: 1 }));
    const d = await rolledOut("big");
    assert.equal(d.metadata.annotations?.["deployment.orch.io/revision"], "3546343826724305833");
    const sets = await setsOf(created);
    assert.equal(sets.length, 2, "the old ReplicaSet is adopted");
    const newest = sets.find((rs) => rs.metadata.name !== "big-old")!;
    assert.equal(newest.metadata.annotations?.["deployment.orch.io/revision"], "3546343826724305833");
    assert.equal(sets.find((rs) => rs.metadata.name === "big-old")?.spec?.replicas, 0);
  });

  test("Recreate scales the old ReplicaSet to zero before the new one gets pods", async () => {
    await ctx.client.create(DEPLOYMENTS, deployment("rec", { replicas: 2, strategy: { type: "Recreate" } }));
    await rolledOut("rec");
    await setImage("rec", "nginx:1.28");
    let mixed = false;
    await eventually("rec rolled out", async () => {
      const images = new Set((await podsOf("rec")).map((p) => p.spec?.containers?.[0]?.image));
      if (images.size > 1) mixed = true;
      await markAllReady(ctx.client, "default");
      const dep = await get("rec");
      return dep.status?.updatedReplicas === 2 && dep.status.availableReplicas === 2 && dep.status.replicas === 2 && (dep.status.observedGeneration ?? 0) >= (dep.metadata.generation ?? 0);
    });
    assert.equal(mixed, false, "old and new pods never run together");
  });

  test("a paused deployment does not roll out until resumed", async () => {
    await ctx.client.create(DEPLOYMENTS, deployment("paused", { replicas: 1 }));
    const d = await rolledOut("paused");
    await ctx.client.patch(DEPLOYMENTS, { namespace: "default", name: "paused", patch: { spec: { paused: true } } });
    await eventually("the DeploymentPaused condition", async () => (await get("paused")).status?.conditions?.some((c) => c.type === "Progressing" && c.reason === "DeploymentPaused"));
    await setImage("paused", "nginx:1.28");
    await eventually("the change observed", async () => {
      const dep = await get("paused");
      return (dep.status?.observedGeneration ?? 0) >= (dep.metadata.generation ?? 0);
    });
    assert.equal((await setsOf(d)).length, 1, "no new ReplicaSet while paused");
    await ctx.client.patch(DEPLOYMENTS, { namespace: "default", name: "paused", patch: { spec: { paused: false } } });
    await rolledOut("paused");
    assert.equal((await setsOf(d)).length, 2);
  });

  test("revisionHistoryLimit deletes the oldest empty ReplicaSets", async () => {
    const created = await ctx.client.create(DEPLOYMENTS, deployment("hist", { replicas: 1, revisionHistoryLimit: 1 }));
    await rolledOut("hist");
    for (const image of ["nginx:1.28", "nginx:1.29"]) {
      await setImage("hist", image);
      await rolledOut("hist");
    }
    const sets = await eventually("two ReplicaSets left", async () => {
      const s = await setsOf(created);
      return s.length === 2 ? s : undefined;
    });
    assert.deepEqual(sets.map((rs) => rs.metadata.annotations?.["deployment.orch.io/revision"]).sort(), ["2", "3"]);
  });

  test("pods that never become ready exceed progressDeadlineSeconds", async () => {
    await ctx.client.create(DEPLOYMENTS, deployment("stuck", { replicas: 1, progressDeadlineSeconds: 1 }));
    const d = await eventually("ProgressDeadlineExceeded", async () => {
      const dep = await get("stuck");
      return dep.status?.conditions?.some((c) => c.type === "Progressing" && c.status === "False" && c.reason === "ProgressDeadlineExceeded") ? dep : undefined;
    }, 6000);
    const rs = (await setsOf(d))[0]!;
    assert.equal(d.status?.conditions?.find((c) => c.type === "Progressing")?.message, `ReplicaSet "${rs.metadata.name}" has timed out progressing.`);
    assert.equal(d.status?.conditions?.find((c) => c.type === "Available")?.status, "False");
  });

  test("scaling mid-rollout grows the old and the new ReplicaSet in proportion", async () => {
    const created = await ctx.client.create(DEPLOYMENTS, deployment("prop", { replicas: 10, strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 3, maxUnavailable: 2 } } }));
    await rolledOut("prop");
    // New pods are never marked ready from here on: the rollout stops half-way.
    await setImage("prop", "nginx:1.28");
    const stalled = await eventually("old and new ReplicaSets both holding pods", async () => {
      const sets = await setsOf(created);
      const newest = sets.find((rs) => rs.spec?.template?.spec?.containers?.[0]?.image === "nginx:1.28");
      const old = sets.find((rs) => rs !== newest);
      const d = await get("prop");
      return newest?.spec?.replicas === 5 && old?.spec?.replicas === 8 && (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) ? { newest, old } : undefined;
    });
    assert.ok(stalled, "new 5 (surge 3 + the 2 unavailable allowed), old 8");
    await scale("prop", 20);
    const grown = await eventually("both grown to 23 in all", async () => {
      const sets = await setsOf(created);
      const total = sets.reduce((n, rs) => n + (rs.spec?.replicas ?? 0), 0);
      return total === 23 ? sets : undefined;
    });
    const size = (name: string | undefined) => grown.find((rs) => rs.metadata.name === name)?.spec?.replicas ?? 0;
    // Each keeps its share of the 13 it had: 8/13 and 5/13 of 23, rounded (14 and 9).
    assert.equal(size(stalled.old!.metadata.name), 14);
    assert.equal(size(stalled.newest!.metadata.name), 9);
  });
});
