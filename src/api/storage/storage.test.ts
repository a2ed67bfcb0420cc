import { test } from "node:test";
import assert from "node:assert/strict";
import { formatFieldError, type ApiObject } from "../../machinery/index.js";
import { namingFor } from "../../machinery/naming.js";
import { SchemaRegistry } from "../../machinery/schema.js";
import { SchemaDefaulter } from "../../apiserver/registry/defaults.js";
import { coreModule } from "../core/index.js";
import { NOW, ctx } from "../core/testing.js";
import { storageModule } from "./index.js";

const registry = new SchemaRegistry();
coreModule.registerSchemas(registry);
storageModule.registerSchemas(registry);
const defaulter = new SchemaDefaulter(registry);
const defs = storageModule.resources(namingFor());
const def = (r: string) => defs.find((d) => d.resource === r)!;

function create(resource: string, input: object): { obj: ApiObject; errors: string[] } {
  const d = def(resource);
  const obj = structuredClone(input) as ApiObject;
  obj.metadata ??= {};
  obj.metadata.creationTimestamp ??= "2026-01-02T03:00:00Z";
  defaulter.apply(d.schema, obj);
  d.defaults?.(obj, ctx);
  d.prepareForCreate?.(obj, ctx);
  return { obj, errors: (d.validate?.(obj, ctx) ?? []).map(formatFieldError) };
}

function update(resource: string, next: object, old: ApiObject): string[] {
  const d = def(resource);
  const obj = structuredClone(next) as ApiObject;
  defaulter.apply(d.schema, obj);
  d.defaults?.(obj, ctx);
  return (d.validateUpdate?.(obj, old, ctx) ?? []).map(formatFieldError);
}

test("storage: the group's kinds, names and scopes on both naming profiles", () => {
  assert.deepEqual(
    defs.map((d) => [d.group, d.resource, d.kind, d.namespaced, d.versions, d.shortNames ?? []]),
    [
      ["storage.orch.io", "storageclasses", "StorageClass", false, ["v1"], ["sc"]],
      ["storage.orch.io", "csidrivers", "CSIDriver", false, ["v1"], []],
      ["storage.orch.io", "csinodes", "CSINode", false, ["v1"], []],
      ["storage.orch.io", "volumeattachments", "VolumeAttachment", false, ["v1"], []],
      ["storage.orch.io", "csistoragecapacities", "CSIStorageCapacity", true, ["v1", "v1beta1"], []],
    ],
  );
  assert.ok(storageModule.resources(namingFor("k8s.io")).every((d) => d.group === "storage.k8s.io"));
  assert.deepEqual(registry.checkRefs(), []);
});

const sc = (extra: object = {}, annotations: Record<string, string> = {}) => ({ apiVersion: "storage.orch.io/v1", kind: "StorageClass", metadata: { name: "fast", annotations }, provisioner: "orch.io/local-path", ...extra });

test("storageclasses: defaults, validation and the immutable fields with upstream's messages", () => {
  const { obj, errors } = create("storageclasses", sc());
  assert.deepEqual(errors, []);
  assert.equal(obj["reclaimPolicy"], "Delete");
  assert.equal(obj["volumeBindingMode"], "Immediate");
  assert.deepEqual(create("storageclasses", sc({ provisioner: "", reclaimPolicy: "Recycle", volumeBindingMode: "Later" })).errors, [
    "provisioner: Required value",
    'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
    'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
  ]);
  assert.deepEqual(update("storageclasses", sc({ provisioner: "other.io/x", parameters: { a: "b" }, reclaimPolicy: "Retain", volumeBindingMode: "WaitForFirstConsumer" }), obj), [
    "parameters: Forbidden: updates to parameters are forbidden.",
    "provisioner: Forbidden: updates to provisioner are forbidden.",
    "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
    'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
  ]);
  assert.deepEqual(update("storageclasses", sc({ allowVolumeExpansion: true }), obj), []);
});

test("storageclasses: the default class shows as NAME (default)", () => {
  const d = def("storageclasses");
  assert.deepEqual(d.table!.columns.map((c) => c.name), ["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"]);
  const { obj } = create("storageclasses", sc({ volumeBindingMode: "WaitForFirstConsumer" }, { "storageclass.orch.io/is-default-class": "true" }));
  assert.deepEqual(d.table!.cells(obj, NOW), ["fast (default)", "orch.io/local-path", "Delete", "WaitForFirstConsumer", false, "4m5s"]);
  assert.equal(d.table!.cells(create("storageclasses", sc()).obj, NOW)[0], "fast");
});

test("csidrivers: upstream's defaults and table", () => {
  const { obj, errors } = create("csidrivers", { apiVersion: "storage.orch.io/v1", kind: "CSIDriver", metadata: { name: "hostpath.csi.io" }, spec: {} });
  assert.deepEqual(errors, []);
  assert.deepEqual(obj["spec"], { attachRequired: true, podInfoOnMount: false, storageCapacity: false, requiresRepublish: false, fsGroupPolicy: "ReadWriteOnceWithFSType", volumeLifecycleModes: ["Persistent"] });
  assert.deepEqual(def("csidrivers").table!.cells(obj, NOW), ["hostpath.csi.io", true, false, false, "<unset>", false, "Persistent", "4m5s"]);
  assert.deepEqual(create("csidrivers", { metadata: { name: "d" }, spec: { volumeLifecycleModes: ["Forever"], fsGroupPolicy: "Some" } }).errors, [
    'spec.fsGroupPolicy: Unsupported value: "Some": supported values: "File", "None", "ReadWriteOnceWithFSType"',
    'spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Ephemeral", "Persistent"',
  ]);
});

test("csinodes, volumeattachments, csistoragecapacities: validation and tables", () => {
  assert.deepEqual(create("csinodes", { metadata: { name: "n1" }, spec: { drivers: [{ name: "a", nodeID: "n1" }, { name: "a", nodeID: "" }] } }).errors, [
    'spec.drivers[1].name: Duplicate value: "a"',
    "spec.drivers[1].nodeID: Required value",
  ]);
  const one = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";
  assert.deepEqual(create("volumeattachments", { metadata: { name: "va" }, spec: { source: {} } }).errors, [
    "spec.attacher: Required value",
    "spec.nodeName: Required value",
    `spec.source: Required value: ${one}`,
  ]);
  const va = create("volumeattachments", { metadata: { name: "va" }, spec: { attacher: "csi.io", nodeName: "n1", source: { persistentVolumeName: "pv1" } } });
  assert.deepEqual(va.errors, []);
  assert.deepEqual(def("volumeattachments").table!.cells(va.obj, NOW), ["va", "csi.io", "pv1", "n1", false, "4m5s"]);
  assert.match(update("volumeattachments", { metadata: { name: "va" }, spec: { attacher: "csi.io", nodeName: "n2", source: { persistentVolumeName: "pv1" } } }, va.obj)[0]!, /^spec: Invalid value: .*field is immutable$/);
  assert.deepEqual(create("csistoragecapacities", { metadata: { name: "c", namespace: "default" }, capacity: "-1Gi" }).errors, [
    "storageClassName: Required value",
    'capacity: Invalid value: "-1Gi": must be greater than or equal to 0',
  ]);
});
