// The StatefulSet controller against a real API server. No node agent or
// scheduler runs here: the test plays the node agent, marking pods Running
// and Ready through pods/status, which is what lets OrderedReady go on.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { ControllerRevision, StatefulSet } from "../../api/apps/types.js";
import { eventually, type TestContext } from "../testing.js";
import { type Pod } from "../workload/index.js";
import { markAllReady, markPodReady, scaleTo, useControllers } from "../workload/testing.js";
import { StatefulSetController } from "./controller.js";
import { CONTROLLERREVISIONS, PODS, STATEFULSETS } from "../../api/resource-refs.js";

const statefulSet = (name: string, extra: Partial<NonNullable<StatefulSet["spec"]>> = {}): StatefulSet => ({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name, namespace: "default" },
  spec: {
    replicas: 3,
    serviceName: name,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } },
    ...extra,
  },
});

describe("statefulset controller", () => {
  let ctx: TestContext;
  useControllers((c) => {
    ctx = c;
    return [new StatefulSetController(c).run()];
  });

  const podsOf = async (app: string) =>
    (await ctx.client.list<Pod>(PODS, { namespace: "default", labelSelector: { app } })).items.filter((p) => !p.metadata.deletionTimestamp).sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
  const names = async (app: string) => (await podsOf(app)).map((p) => p.metadata.name);
  const get = (name: string) => ctx.client.get<StatefulSet>(STATEFULSETS, { namespace: "default", name });

  test("OrderedReady: <set>-0 first, the next only once the previous is Ready; stable identity labels", async () => {
    const set = await ctx.client.create(STATEFULSETS, statefulSet("web"));
    await eventually("web-0", async () => (await names("web")).join() === "web-0");
    // A pass that has seen web-0 (it counts it) and still made no web-1.
    await eventually("status counting web-0", async () => (await get("web")).status?.replicas === 1);
    assert.deepEqual(await names("web"), ["web-0"], "web-1 waits for web-0 to be ready");
    for (const next of ["web-1", "web-2"]) {
      const [last] = (await podsOf("web")).slice(-1);
      await markPodReady(ctx.client, last!);
      await eventually(next, async () => (await names("web")).includes(next));
    }
    await markAllReady(ctx.client, "default");
    const s = await eventually("3 ready", async () => {
      const st = (await get("web")).status;
      return st?.readyReplicas === 3 ? st : undefined;
    });
    const [pod0] = await podsOf("web");
    assert.equal(pod0!.metadata.labels?.["statefulset.orch.io/pod-name"], "web-0");
    assert.equal(pod0!.metadata.labels?.["apps.orch.io/pod-index"], "0");
    assert.equal(pod0!.metadata.labels?.["controller-revision-hash"], s.updateRevision);
    assert.equal(pod0!.spec?.hostname, "web-0");
    assert.equal(pod0!.spec?.subdomain, "web");
    assert.deepEqual(pod0!.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]), [["StatefulSet", "web", set.metadata.uid, true]]);
    assert.equal(s.currentRevision, s.updateRevision);
    assert.equal(s.replicas, 3);
    assert.equal(s.currentReplicas, 3);
    const revisions = (await ctx.client.list<ControllerRevision>(CONTROLLERREVISIONS, { namespace: "default", labelSelector: { app: "web" } })).items;
    assert.deepEqual(revisions.map((r) => [r.metadata.name, r.revision]), [[s.updateRevision, 1]]);
  });

  test("a deleted pod comes back under the same name", async () => {
    const [, pod1] = await podsOf("web");
    await ctx.client.delete(PODS, { namespace: "default", name: "web-1" });
    const back = await eventually("web-1 again", async () => (await podsOf("web")).find((p) => p.metadata.name === "web-1" && p.metadata.uid !== pod1!.metadata.uid));
    await markPodReady(ctx.client, back);
  });

  test("RollingUpdate replaces pods from the highest ordinal down, one at a time", async () => {
    await ctx.client.patch(STATEFULSETS, { namespace: "default", name: "web", type: "strategic", patch: { spec: { template: { spec: { containers: [{ name: "main", image: "nginx:1.28" }] } } } } });
    const order: string[] = [];
    const s = await eventually("all on nginx:1.28", async () => {
      const pods = await podsOf("web");
      for (const p of pods) if (p.spec?.containers?.[0]?.image === "nginx:1.28" && !order.includes(p.metadata.name!)) order.push(p.metadata.name!);
      // Only pods already recorded become ready, so no replacement can slip between two looks.
      for (const p of pods) if (!p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) await markPodReady(ctx.client, p);
      const st = (await get("web")).status;
      return order.length === 3 && st?.updatedReplicas === 3 && st.currentRevision === st.updateRevision && st.readyReplicas === 3 ? st : undefined;
    });
    assert.deepEqual(order, ["web-2", "web-1", "web-0"]);
    const revisions = (await ctx.client.list<ControllerRevision>(CONTROLLERREVISIONS, { namespace: "default", labelSelector: { app: "web" } })).items;
    assert.equal(revisions.length, 2);
    assert.equal(revisions.find((r) => r.metadata.name === s.updateRevision)?.revision, 2);
  });

  test("a partition keeps the ordinals below it on the current revision", async () => {
    await ctx.client.patch(STATEFULSETS, {
      namespace: "default",
      name: "web",
      type: "strategic",
      patch: { spec: { updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 2 } }, template: { spec: { containers: [{ name: "main", image: "nginx:1.29" }] } } } },
    });
    await eventually("web-2 on nginx:1.29", async () => {
      await markAllReady(ctx.client, "default");
      const st = (await get("web")).status;
      return (await podsOf("web")).find((p) => p.metadata.name === "web-2")?.spec?.containers?.[0]?.image === "nginx:1.29" && st?.updatedReplicas === 1 && st.currentReplicas === 2 && st.readyReplicas === 3;
    });
    const images = (await podsOf("web")).map((p) => p.spec?.containers?.[0]?.image);
    assert.deepEqual(images, ["nginx:1.28", "nginx:1.28", "nginx:1.29"]);
  });

  test("scaling down removes the highest ordinals first", async () => {
    await scaleTo(ctx.client, STATEFULSETS, "web", 1);
    const seen: string[][] = [];
    await eventually("only web-0", async () => {
      const n = await names("web");
      if (seen.at(-1)?.join() !== n.join()) seen.push(n as string[]);
      return n.join() === "web-0";
    });
    assert.ok(seen.every((n) => !(n.includes("web-2") && !n.includes("web-1"))), "web-1 never goes before web-2");
  });

  test("OrderedReady scale-down halts while a pod is unhealthy, and goes on once it is healthy again (upstream's conformance spec)", async () => {
    await ctx.client.create(STATEFULSETS, statefulSet("halt"));
    await eventually("halt-0", async () => (await names("halt")).join() === "halt-0");
    for (const next of ["halt-1", "halt-2"]) {
      const [last] = (await podsOf("halt")).slice(-1);
      await markPodReady(ctx.client, last!);
      await eventually(next, async () => (await names("halt")).includes(next));
    }
    await markAllReady(ctx.client, "default");
    await eventually("3 ready", async () => (await get("halt")).status?.readyReplicas === 3);
    for (const pod of await podsOf("halt")) await markPodReady(ctx.client, pod, { ready: false });
    await eventually("0 ready", async () => (await get("halt")).status?.readyReplicas === 0);
    await scaleTo(ctx.client, STATEFULSETS, "halt", 0);
    await eventually("the scale seen", async () => (await get("halt")).status?.observedGeneration === (await get("halt")).metadata.generation);
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual(await names("halt"), ["halt-0", "halt-1", "halt-2"], "no pod deleted while they are unhealthy");
    await markAllReady(ctx.client, "default");
    await eventually("every pod gone", async () => (await names("halt")).length === 0, 15_000);
  });

  test("Parallel creates every pod at once, without waiting for readiness", async () => {
    await ctx.client.create(STATEFULSETS, statefulSet("par", { podManagementPolicy: "Parallel" }));
    await eventually("par-0..2", async () => (await names("par")).join() === "par-0,par-1,par-2");
  });

  test("OnDelete: a new template reaches a pod only when that pod is deleted", async () => {
    await ctx.client.create(STATEFULSETS, statefulSet("od", { replicas: 2, podManagementPolicy: "Parallel", updateStrategy: { type: "OnDelete" } }));
    await eventually("od-0, od-1", async () => (await names("od")).join() === "od-0,od-1");
    await markAllReady(ctx.client, "default");
    const first = await eventually("2 ready", async () => {
      const st = (await get("od")).status;
      return st?.readyReplicas === 2 ? st : undefined;
    });
    await ctx.client.patch(STATEFULSETS, { namespace: "default", name: "od", type: "strategic", patch: { spec: { template: { spec: { containers: [{ name: "main", image: "nginx:1.28" }] } } } } });
    const pending = await eventually("a new update revision", async () => {
      const st = (await get("od")).status;
      return st?.updateRevision !== first.updateRevision ? st : undefined;
    });
    assert.equal(pending.currentRevision, first.currentRevision);
    assert.equal(pending.updatedReplicas ?? 0, 0);
    assert.ok((await podsOf("od")).every((p) => p.spec?.containers?.[0]?.image === "nginx:1.27"), "no pod replaced");
    const old = (await podsOf("od")).find((p) => p.metadata.name === "od-1")!;
    await ctx.client.delete(PODS, { namespace: "default", name: "od-1" });
    const fresh = await eventually("od-1 again, from the new template", async () => (await podsOf("od")).find((p) => p.metadata.name === "od-1" && p.metadata.uid !== old.metadata.uid));
    assert.equal(fresh.spec?.containers?.[0]?.image, "nginx:1.28");
    assert.equal(fresh.metadata.labels?.["controller-revision-hash"], pending.updateRevision);
    assert.equal((await podsOf("od")).find((p) => p.metadata.name === "od-0")?.spec?.containers?.[0]?.image, "nginx:1.27");
  });
});
