// The ReplicaSet loop running core/v1 ReplicationControllers against a real
// API server: pods from the template owned by the RC (apiVersion v1), the
// plain-map selector adopts orphans and ignores other pods, status and the
// scale subresource follow.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { ReplicationController } from "../../api/core/index.js";
import type { ApiObject } from "../../machinery/index.js";
import { eventually, type TestContext } from "../testing.js";
import { markPodReady, podsOwnedBy, scaleTo, useControllers } from "../workload/testing.js";
import { REPLICATION_CONTROLLER_KIND, ReplicaSetController } from "./controller.js";
import { PODS, REPLICATIONCONTROLLERS } from "../../api/resource-refs.js";

const rc = (name: string, replicas: number): ReplicationController => ({
  apiVersion: "v1",
  kind: "ReplicationController",
  metadata: { name, namespace: "default" },
  spec: { replicas, selector: { app: name }, template: { metadata: { labels: { app: name, extra: "y" } }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } } },
});

describe("replication controller (the ReplicaSet loop over core/v1)", () => {
  let ctx: TestContext;
  useControllers((c) => {
    ctx = c;
    return [new ReplicaSetController(c, { kind: REPLICATION_CONTROLLER_KIND }).run()];
  });

  test("creates its pods, owned by the RC, adopts a matching orphan, leaves other pods alone, reports status", async () => {
    // An orphan with the selected labels and one without.
    const orphan = await ctx.client.create<ApiObject>(PODS, { apiVersion: "v1", kind: "Pod", metadata: { name: "orphan", namespace: "default", labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "x" }] } });
    await ctx.client.create(PODS, { apiVersion: "v1", kind: "Pod", metadata: { name: "other", namespace: "default", labels: { app: "else" } }, spec: { containers: [{ name: "c", image: "x" }] } });
    const created = await ctx.client.create(REPLICATIONCONTROLLERS, rc("web", 3));
    const pods = await eventually("3 pods", async () => {
      const p = await podsOwnedBy(ctx.client, "default", created.metadata.uid);
      return p.length === 3 ? p : undefined;
    });
    assert.ok(pods.some((p) => p.metadata.uid === orphan.metadata.uid), "the orphan is adopted");
    for (const p of pods) {
      assert.deepEqual(p.metadata.ownerReferences, [{ apiVersion: "v1", kind: "ReplicationController", name: "web", uid: created.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    }
    const other = await ctx.client.get(PODS, { namespace: "default", name: "other" });
    assert.equal(other.metadata.ownerReferences, undefined);
    for (const p of pods) await markPodReady(ctx.client, p);
    const st = await eventually("status", async () => {
      const s = (await ctx.client.get<ReplicationController>(REPLICATIONCONTROLLERS, { namespace: "default", name: "web" })).status;
      return s?.replicas === 3 && s.readyReplicas === 3 && s.availableReplicas === 3 ? s : undefined;
    });
    // The adopted orphan lacks the template's "extra" label.
    assert.equal(st.fullyLabeledReplicas, 2);
    assert.equal(st.observedGeneration, 1);
  });

  test("scale down through the scale subresource", async () => {
    await scaleTo(ctx.client, REPLICATIONCONTROLLERS, "web", 1);
    const rcObj = await ctx.client.get<ReplicationController>(REPLICATIONCONTROLLERS, { namespace: "default", name: "web" });
    await eventually("1 pod", async () => (await podsOwnedBy(ctx.client, "default", rcObj.metadata.uid)).filter((p) => !p.metadata.deletionTimestamp).length === 1);
    const scale = await ctx.client.get(REPLICATIONCONTROLLERS, { namespace: "default", name: "web", subresource: "scale" });
    assert.deepEqual((scale as unknown as { spec: object }).spec, { replicas: 1 });
    assert.equal((scale as unknown as { status: { selector: string } }).status.selector, "app=web");
  });
});

