import { test } from "node:test";
import assert from "node:assert/strict";
import type { Pod } from "../../api/core/types.js";
import type { RestClient } from "../../client/index.js";
import { alreadyExists } from "../../machinery/index.js";
import { MirrorPods, mirrorPodOf } from "./mirror-pods.js";

const annotations = { mirror: "orch.io/config.mirror", hash: "orch.io/config.hash" };
const staticPod = (name: string): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "kube-system", uid: `uid-${name}`, labels: { app: name }, annotations: { [annotations.hash]: `hash-${name}`, "orch.io/config.source": "file" } },
  spec: { containers: [{ name: "main", image: "busybox" }] },
});

test("mirrorPodOf: the static pod's name, labels and spec, its hash as the mirror annotation, owned by the Node once registered", () => {
  const mirror = mirrorPodOf(staticPod("etcd-n1"), { annotations, nodeName: "n1", nodeUid: "node-uid" });
  assert.deepStrictEqual(mirror.metadata, {
    name: "etcd-n1",
    namespace: "kube-system",
    labels: { app: "etcd-n1" },
    annotations: { [annotations.hash]: "hash-etcd-n1", "orch.io/config.source": "file", [annotations.mirror]: "hash-etcd-n1" },
    ownerReferences: [{ apiVersion: "v1", kind: "Node", name: "n1", uid: "node-uid", controller: true }],
  });
  assert.deepStrictEqual(mirror.spec, staticPod("etcd-n1").spec);
  assert.deepStrictEqual(mirrorPodOf(staticPod("etcd-n1"), { annotations, nodeName: "n1", nodeUid: undefined }).metadata.ownerReferences, []);
});

test("MirrorPods.sync: creates the missing mirrors only, wakes their static pods, and takes a conflict as already there", async () => {
  const created: string[] = [];
  const woken: string[] = [];
  const logs: string[] = [];
  const client = {
    create: async (_ref: unknown, pod: Pod) => {
      if (pod.metadata.name === "raced-n1") throw alreadyExists({ group: "", resource: "pods" }, "raced-n1");
      if (pod.metadata.name === "broken-n1") throw new Error("connection refused");
      created.push(pod.metadata.name!);
      return pod;
    },
  } as unknown as Pick<RestClient, "create">;
  const mirrors = new MirrorPods({
    client,
    staticPods: () => ["etcd-n1", "shown-n1", "raced-n1", "broken-n1"].map(staticPod),
    inApi: (key) => (key === "kube-system/shown-n1" ? staticPod("shown-n1") : undefined),
    annotations,
    nodeName: "n1",
    nodeUid: () => "node-uid",
    onCreated: (uid) => woken.push(uid),
    periodMs: 60_000,
    log: (l) => logs.push(l),
  });
  await mirrors.sync();
  assert.deepStrictEqual(created, ["etcd-n1"]);
  assert.deepStrictEqual(woken, ["uid-etcd-n1"]);
  assert.deepStrictEqual(logs, ["mirror pod kube-system/broken-n1: connection refused"]);
});
