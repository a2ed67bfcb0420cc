import { test } from "node:test";
import assert from "node:assert/strict";
import type { ApiObject } from "../../machinery/index.js";
import { NOW, create, def, update } from "./testing.js";

const pvs = def("persistentvolumes");
const pvcs = def("persistentvolumeclaims");
const pv = (spec: object, name = "pv1") => ({ apiVersion: "v1", kind: "PersistentVolume", metadata: { name }, spec });
const pvc = (spec: object, name = "data") => ({ apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name, namespace: "default" }, spec });
const hostPathPV = { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"], hostPath: { path: "/srv/pv1" } };
const claim = { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } };

test("persistentvolumes: defaults (Retain, Filesystem) and a Pending phase at create", () => {
  const { obj, errors } = create(pvs, pv(hostPathPV));
  assert.deepEqual(errors, []);
  const spec = obj["spec"] as Record<string, unknown>;
  assert.equal(spec["persistentVolumeReclaimPolicy"], "Retain");
  assert.equal(spec["volumeMode"], "Filesystem");
  assert.deepEqual(obj["status"], { phase: "Pending", lastPhaseTransitionTime: "2026-01-02T03:04:05Z" });
});

test("persistentvolumes: upstream's messages for a malformed volume", () => {
  assert.deepEqual(create(pvs, pv({})).errors, [
    "spec.accessModes: Required value",
    "spec.capacity: Required value",
    "spec: Required value: must specify a volume type",
  ]);
  assert.deepEqual(create(pvs, pv({ ...hostPathPV, accessModes: ["ReadWriteSometimes"], capacity: { cpu: "1" } })).errors, [
    'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"',
    'spec.capacity: Unsupported value: {"cpu":"1"}: supported values: "storage"',
  ]);
  assert.deepEqual(create(pvs, pv({ ...hostPathPV, nfs: { server: "s", path: "/x" } })).errors, ["spec.nfs: Forbidden: may not specify more than 1 volume type"]);
  assert.deepEqual(create(pvs, pv({ capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"], local: { path: "/mnt" } })).errors, [
    "spec.nodeAffinity: Required value: Local volume requires node affinity",
  ]);
  assert.deepEqual(create(pvs, pv({ ...hostPathPV, persistentVolumeReclaimPolicy: "Shred" })).errors, [
    'spec.persistentVolumeReclaimPolicy: Unsupported value: "Shred": supported values: "Delete", "Recycle", "Retain"',
  ]);
});

test("persistentvolumes: the source is immutable; a claimRef may be set", () => {
  const old = create(pvs, pv(hostPathPV)).obj;
  assert.deepEqual(update(pvs, pv({ ...hostPathPV, hostPath: { path: "/elsewhere" } }), old).errors, [
    "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation",
  ]);
  assert.deepEqual(update(pvs, pv({ ...hostPathPV, claimRef: { namespace: "default", name: "data" } }), old).errors, []);
});

test("persistentvolumes: table columns as kubectl 1.33 shows them", () => {
  const { obj } = create(pvs, pv({ ...hostPathPV, accessModes: ["ReadWriteMany", "ReadWriteOnce"], storageClassName: "local-path", claimRef: { namespace: "default", name: "data" } }));
  obj["status"] = { phase: "Bound" };
  assert.deepEqual(pvs.table!.columns.map((c) => c.name), ["Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass", "VolumeAttributesClass", "Reason", "Age", "VolumeMode"]);
  assert.deepEqual(pvs.table!.cells(obj, NOW), ["pv1", "1Gi", "RWO,RWX", "Retain", "Bound", "default/data", "local-path", "<unset>", "", "4m5s", "Filesystem"]);
});

test("persistentvolumeclaims: defaults, a Pending phase, upstream's messages", () => {
  const { obj, errors } = create(pvcs, pvc(claim));
  assert.deepEqual(errors, []);
  assert.equal((obj["spec"] as Record<string, unknown>)["volumeMode"], "Filesystem");
  assert.deepEqual(obj["status"], { phase: "Pending" });
  assert.deepEqual(create(pvcs, pvc({})).errors, ["spec.accessModes: Required value: at least 1 access mode is required", "spec.resources[storage]: Required value"]);
  assert.deepEqual(create(pvcs, pvc({ ...claim, volumeMode: "Tape" })).errors, ['spec.volumeMode: Unsupported value: "Tape": supported values: "Block", "Filesystem"']);
});

test("persistentvolumeclaims: the spec is immutable but for a bound claim's size, which may only grow", () => {
  const old = create(pvcs, pvc(claim)).obj;
  const immutable = "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims";
  assert.deepEqual(update(pvcs, pvc({ ...claim, accessModes: ["ReadWriteMany"] }), old).errors, [immutable]);
  assert.deepEqual(update(pvcs, pvc({ ...claim, resources: { requests: { storage: "2Gi" } } }), old).errors, [immutable]);
  // The binder's pre-bind: volumeName set once.
  assert.deepEqual(update(pvcs, pvc({ ...claim, volumeName: "pv1" }), old).errors, []);
  const bound = { ...old, spec: { ...(old["spec"] as object), volumeName: "pv1" }, status: { phase: "Bound" } } as ApiObject;
  assert.deepEqual(update(pvcs, pvc({ ...claim, volumeName: "pv1", resources: { requests: { storage: "2Gi" } } }), bound).errors, []);
  assert.deepEqual(update(pvcs, pvc({ ...claim, volumeName: "pv1", resources: { requests: { storage: "1Mi" } } }), bound).errors, [
    "spec.resources.requests.storage: Forbidden: field can not be less than previous value",
  ]);
});

test("persistentvolumeclaims: table columns; capacity and modes once bound", () => {
  const { obj } = create(pvcs, pvc({ ...claim, storageClassName: "local-path" }));
  assert.deepEqual(pvcs.table!.columns.map((c) => c.name), ["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode"]);
  assert.deepEqual(pvcs.table!.cells(obj, NOW), ["data", "Pending", "", "", "", "local-path", "<unset>", "4m5s", "Filesystem"]);
  (obj["spec"] as Record<string, unknown>)["volumeName"] = "pv1";
  obj["status"] = { phase: "Bound", capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"] };
  assert.deepEqual(pvcs.table!.cells(obj, NOW).slice(1, 5), ["Bound", "pv1", "1Gi", "RWO"]);
});

test("persistentvolumes: Protobuf puts the source inside PersistentVolumeSource (spec field 2), as upstream's generated code", async () => {
  const { ProtobufCodec } = await import("../../machinery/codec/protobuf/message.js");
  const { builtinRegistry, toHex } = await import("../../machinery/codec/protobuf/testing.js");
  const codec = new ProtobufCodec(builtinRegistry());
  const spec = { hostPath: { path: "/x" }, storageClassName: "s" };
  // spec: 0x12 len [ persistentVolumeSource (2): 0x12 len [ hostPath (3): 0x1a len [ path (1): 0x0a 02 "/x" ] ], storageClassName (6): 0x32 01 "s" ]
  assert.equal(toHex(codec.encode(spec, "io.k8s.api.core.v1.PersistentVolumeSpec")), "12061a040a022f783201" + "73");
  assert.deepEqual(codec.decode(codec.encode(spec, "io.k8s.api.core.v1.PersistentVolumeSpec"), "io.k8s.api.core.v1.PersistentVolumeSpec"), spec);
});
