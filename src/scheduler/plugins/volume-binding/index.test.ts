import { test } from "node:test";
import assert from "node:assert/strict";
import type { PersistentVolume, PersistentVolumeClaim } from "../../../api/core/index.js";
import type { StorageClass } from "../../../api/storage/index.js";
import { namingFor } from "../../../machinery/naming.js";
import { PodInfo } from "../../framework/pod-info.js";
import { makeNode, makePod } from "../../testing/objects.js";
import { cluster, nodeInfo, reasons } from "../../testing/cluster.js";
import { volumeBinding, type VolumeLister } from "./index.js";

const nodes = [nodeInfo(makeNode("a", { labels: { zone: "z1" } })), nodeInfo(makeNode("b", { labels: { zone: "z2" } }))];
const claims = {
  bound: { metadata: { name: "bound", namespace: "default" }, spec: { volumeName: "on-a", accessModes: ["ReadWriteOnce"] }, status: { phase: "Bound" } },
  free: { metadata: { name: "free", namespace: "default" }, spec: { volumeName: "anywhere" }, status: { phase: "Bound" } },
  immediate: { metadata: { name: "immediate", namespace: "default" }, spec: { storageClassName: "fast", accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } },
  delayed: { metadata: { name: "delayed", namespace: "default" }, spec: { storageClassName: "local", accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } },
  static: { metadata: { name: "static", namespace: "default" }, spec: { storageClassName: "manual-wait", accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } },
  deleting: { metadata: { name: "deleting", namespace: "default", deletionTimestamp: "2026-01-01T00:00:00Z" }, spec: {} },
} as unknown as Record<string, PersistentVolumeClaim>;
const onNode = (node: string) => ({ required: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: [node] }] }] } });
const volumes = [
  { metadata: { name: "on-a" }, spec: { nodeAffinity: onNode("a"), capacity: { storage: "1Gi" } } },
  { metadata: { name: "anywhere" }, spec: { capacity: { storage: "1Gi" } } },
  { metadata: { name: "static-b" }, spec: { storageClassName: "manual-wait", accessModes: ["ReadWriteOnce"], capacity: { storage: "5Gi" }, nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["z2"] }] }] } } } },
] as unknown as PersistentVolume[];
const classes = {
  fast: { metadata: { name: "fast" }, provisioner: "x.io/fast", volumeBindingMode: "Immediate" },
  local: { metadata: { name: "local" }, provisioner: "orch.io/local-path", volumeBindingMode: "WaitForFirstConsumer" },
  "manual-wait": { metadata: { name: "manual-wait" }, provisioner: "kubernetes.io/no-provisioner", volumeBindingMode: "WaitForFirstConsumer" },
} as unknown as Record<string, StorageClass>;
const selected: string[] = [];
const lister: VolumeLister = {
  claim: (_ns, name) => claims[name],
  volume: (name) => volumes.find((v) => v.metadata.name === name),
  volumes: () => volumes,
  storageClass: (name) => classes[name],
  selectNode: async (c, annotation, node) => void selected.push(`${c.metadata.name} ${annotation}=${node}`),
};
const plugin = volumeBinding(namingFor(), lister);
const withClaims = (...names: string[]) => makePod("p", { spec: { volumes: names.map((n) => ({ name: n, persistentVolumeClaim: { claimName: n } })) } });

test("VolumeBinding: pods without claims skip; missing, deleted and unbound immediate claims are unresolvable with upstream's messages", () => {
  assert.deepEqual(reasons(plugin, makePod("p"), nodes), { a: "skip", b: "skip" });
  const all = (msg: string) => ({ a: `UnschedulableAndUnresolvable: ${msg}`, b: `UnschedulableAndUnresolvable: ${msg}` });
  assert.deepEqual(reasons(plugin, withClaims("nope"), nodes), all('persistentvolumeclaim "nope" not found'));
  assert.deepEqual(reasons(plugin, withClaims("deleting"), nodes), all('persistentvolumeclaim "deleting" is being deleted'));
  assert.deepEqual(reasons(plugin, withClaims("free", "immediate"), nodes), all("pod has unbound immediate PersistentVolumeClaims"));
});

test("VolumeBinding: a bound claim's volume node affinity; delayed claims need a volume on the node or a provisioner", () => {
  const conflict = "UnschedulableAndUnresolvable: node(s) had volume node affinity conflict";
  assert.deepEqual(reasons(plugin, withClaims("bound", "free"), nodes), { a: "fits", b: conflict });
  assert.deepEqual(reasons(plugin, withClaims("delayed"), nodes), { a: "fits", b: "fits" });
  assert.deepEqual(reasons(plugin, withClaims("static"), nodes), { a: "UnschedulableAndUnresolvable: node(s) didn't find available persistent volumes to bind", b: "fits" });
});

test("VolumeBinding PreBind: delayed claims get the selected-node annotation", async () => {
  const state = new Map<string, unknown>();
  const pi = new PodInfo(withClaims("bound", "delayed"));
  assert.equal(plugin.preFilter(state, pi, cluster(nodes)), undefined);
  await plugin.preBind(state, pi, "a");
  assert.deepEqual(selected, ["delayed volume.orch.io/selected-node=a"]);
});
