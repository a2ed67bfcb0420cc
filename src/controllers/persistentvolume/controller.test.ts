// The storage admission plugins, the PV binder, the protection controllers and
// the local-path provisioner against a real API server. No scheduler runs: the
// test sets the selected-node annotation as the scheduler's VolumeBinding does.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import type { PersistentVolume, PersistentVolumeClaim } from "../../api/core/index.js";
import type { Pod } from "../../api/core/types.js";
import type { StorageClass } from "../../api/storage/index.js";
import { NODES, PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS, storageClassResource } from "../../api/resource-refs.js";
import { controllerContext, eventually, type TestContext } from "../testing.js";
import { getIfExists } from "../resources.js";
import { LocalPathProvisioner, localPathStorageClass } from "../local-path-provisioner/controller.js";
import { PersistentVolumeBinder } from "./binder.js";
import { PvcProtectionController, PvProtectionController } from "./protection.js";

describe("persistent volumes: admission, binder, protection, local-path provisioner", () => {
  let t: TestServer;
  let ctx: TestContext;
  let running: Promise<void>[];
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "orch-local-path-"));
    t = await startTestServer({ modules: builtinModules() });
    ctx = controllerContext(t);
    running = [new PersistentVolumeBinder(ctx).run(), new PvcProtectionController(ctx).run(), new PvProtectionController(ctx).run(), new LocalPathProvisioner(ctx, dir).run()];
    ctx.start();
    await ctx.client.create(NODES, { apiVersion: "v1", kind: "Node", metadata: { name: "node-a" } });
  });
  after(async () => {
    await ctx.stop(...running);
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const SC = () => storageClassResource(ctx.naming);
  const claim = (name: string, spec: object = {}) =>
    ctx.client.create<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS, {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name, namespace: "default" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } }, ...spec },
    });
  const getClaim = (name: string) => getIfExists<PersistentVolumeClaim>(ctx.client, PERSISTENT_VOLUME_CLAIMS, { namespace: "default", name });
  const getVolume = (name: string) => getIfExists<PersistentVolume>(ctx.client, PERSISTENT_VOLUMES, { name });
  const volume = (name: string, spec: object) =>
    ctx.client.create<PersistentVolume>(PERSISTENT_VOLUMES, {
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: { name },
      spec: { capacity: { storage: "2Gi" }, accessModes: ["ReadWriteOnce"], hostPath: { path: `/tmp/${name}` }, ...spec },
    });

  test("a claim with no class gets the default one; claims and volumes get the protection finalizers", async () => {
    await ctx.client.create<StorageClass>(SC(), localPathStorageClass(ctx.naming));
    const made = await claim("defaulted");
    assert.equal(made.spec?.storageClassName, "local-path");
    assert.deepEqual(made.metadata.finalizers, ["orch.io/pvc-protection"]);
    // An explicit "" means no class and is kept.
    assert.equal((await claim("classless", { storageClassName: "" })).spec?.storageClassName, "");
    assert.deepEqual((await volume("protected", { storageClassName: "nothing" })).metadata.finalizers, ["orch.io/pv-protection"]);
  });

  test("Immediate: a claim binds to the smallest matching volume, both sides Bound", async () => {
    await ctx.client.create<StorageClass>(SC(), { apiVersion: "storage.orch.io/v1", kind: "StorageClass", metadata: { name: "manual" }, provisioner: "kubernetes.io/no-provisioner" });
    await volume("big", { storageClassName: "manual", capacity: { storage: "10Gi" } });
    await volume("small", { storageClassName: "manual", capacity: { storage: "1Gi" } });
    await volume("rwx-only", { storageClassName: "manual", capacity: { storage: "1Gi" }, accessModes: ["ReadWriteMany"] });
    const made = await claim("manual-claim", { storageClassName: "manual" });
    const bound = await eventually("claim bound", async () => {
      const c = await getClaim("manual-claim");
      return c?.status?.phase === "Bound" ? c : undefined;
    });
    assert.equal(bound.spec?.volumeName, "small");
    assert.deepEqual(bound.status?.capacity, { storage: "1Gi" });
    assert.deepEqual(bound.status?.accessModes, ["ReadWriteOnce"]);
    assert.equal(bound.metadata.annotations?.["pv.orch.io/bind-completed"], "yes");
    const pv = await eventually("volume bound", async () => {
      const v = await getVolume("small");
      return v?.status?.phase === "Bound" ? v : undefined;
    });
    assert.equal(pv.spec?.claimRef?.uid, made.metadata.uid);
    assert.equal((await getVolume("big"))?.status?.phase, "Available");
  });

  test("resize: refused unless the claim is bound and its class allows expansion", async () => {
    const grow = async (name: string) => {
      const c = (await getClaim(name))!;
      return t.request("PUT", `/api/v1/namespaces/default/persistentvolumeclaims/${name}`, { body: { ...c, spec: { ...c.spec, resources: { requests: { storage: "5Gi" } } } } });
    };
    const res = await grow("manual-claim");
    assert.equal(res.status, 403);
    assert.equal(res.json.message, 'persistentvolumeclaims "manual-claim" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    await ctx.client.create<StorageClass>(SC(), { apiVersion: "storage.orch.io/v1", kind: "StorageClass", metadata: { name: "expandable" }, provisioner: "x.io/none", allowVolumeExpansion: true });
    await volume("roomy", { storageClassName: "expandable" });
    await claim("growing", { storageClassName: "expandable" });
    await eventually("growing bound", async () => (await getClaim("growing"))?.status?.phase === "Bound");
    const grown = await grow("growing");
    assert.equal(grown.status, 200, grown.text);
    assert.equal(grown.json.spec.resources.requests.storage, "5Gi");
  });

  test("Retain: a deleted claim's volume is Released and kept", async () => {
    await volume("kept", { storageClassName: "retained", persistentVolumeReclaimPolicy: "Retain" });
    await claim("short", { storageClassName: "retained" });
    await eventually("bound", async () => (await getVolume("kept"))?.status?.phase === "Bound");
    await ctx.client.delete(PERSISTENT_VOLUME_CLAIMS, { namespace: "default", name: "short" });
    await eventually("claim gone (no pod used it)", async () => (await getClaim("short")) === undefined);
    await eventually("volume released", async () => (await getVolume("kept"))?.status?.phase === "Released");
    assert.ok(await getVolume("kept"));
  });

  test("WaitForFirstConsumer + local-path: provisioned on the selected node, bound; deleted with its directory", async () => {
    const made = await claim("data");
    assert.equal(made.spec?.storageClassName, "local-path");
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await getClaim("data"))?.status?.phase, "Pending", "waits for a consumer");
    assert.equal((await getClaim("data"))?.spec?.volumeName, undefined);
    await ctx.client.patch(PERSISTENT_VOLUME_CLAIMS, { namespace: "default", name: "data", patch: { metadata: { annotations: { "volume.orch.io/selected-node": "node-a" } } } });
    const bound = await eventually("claim bound", async () => {
      const c = await getClaim("data");
      return c?.status?.phase === "Bound" ? c : undefined;
    });
    const name = `pvc-${made.metadata.uid}`;
    assert.equal(bound.spec?.volumeName, name);
    assert.equal(bound.metadata.annotations?.["volume.orch.io/storage-provisioner"], "orch.io/local-path");
    const pv = (await getVolume(name))!;
    assert.equal(pv.spec?.hostPath?.path, join(dir, name));
    assert.ok(existsSync(join(dir, name)));
    assert.deepEqual(pv.spec?.nodeAffinity, { required: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["node-a"] }] }] } });
    assert.equal(pv.spec?.persistentVolumeReclaimPolicy, "Delete");
    assert.equal(pv.metadata.annotations?.["pv.orch.io/provisioned-by"], "orch.io/local-path");

    // A pod using the claim holds it while it runs.
    await ctx.client.create<Pod>(PODS, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "user", namespace: "default" },
      spec: { nodeName: "node-a", containers: [{ name: "c", image: "busybox" }], volumes: [{ name: "d", persistentVolumeClaim: { claimName: "data" } }] },
    });
    await ctx.client.delete(PERSISTENT_VOLUME_CLAIMS, { namespace: "default", name: "data" });
    await new Promise((r) => setTimeout(r, 300));
    const held = await getClaim("data");
    assert.ok(held?.metadata.deletionTimestamp, "marked for deletion");
    assert.deepEqual(held?.metadata.finalizers, ["orch.io/pvc-protection"], "kept while the pod uses it");
    await ctx.client.delete(PODS, { namespace: "default", name: "user", gracePeriodSeconds: 0 });
    await eventually("claim gone once the pod is", async () => (await getClaim("data")) === undefined);
    await eventually("volume and directory gone (reclaim Delete)", async () => (await getVolume(name)) === undefined && !existsSync(join(dir, name)));
  });

  test("a volume nobody provisioned with reclaim Delete fails as upstream's does", async () => {
    await volume("orphan", { storageClassName: "gone", persistentVolumeReclaimPolicy: "Delete" });
    await claim("orphan-claim", { storageClassName: "gone" });
    await eventually("bound", async () => (await getVolume("orphan"))?.status?.phase === "Bound");
    await ctx.client.delete(PERSISTENT_VOLUME_CLAIMS, { namespace: "default", name: "orphan-claim" });
    const failed = await eventually("failed", async () => {
      const v = await getVolume("orphan");
      return v?.status?.phase === "Failed" ? v : undefined;
    });
    assert.equal(failed.status?.message, 'error getting deleter volume plugin for volume "orphan": no deletable volume plugin matched');
  });
});
