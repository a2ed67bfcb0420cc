// The CSI kinds of storage.<suffix>/v1: csidrivers and csinodes (cluster-scoped)
// and csistoragecapacities (namespaced; v1, and v1beta1 for upstream's v1.23
// scheduler). Stored and validated for the clients that read them (the
// scheduler's informers wait for all three); orch runs no CSI driver itself.

import { field, isDNS1123Subdomain, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { parseQuantity } from "../core/quantity.js";
import { jsonEqual } from "../core/validation.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { STORAGE_V1 } from "./schemas.js";
import type { CSIDriver, CSINode, CSIStorageCapacity } from "./types.js";

const LIFECYCLE_MODES = ["Ephemeral", "Persistent"];
const FS_GROUP_POLICIES = ["File", "None", "ReadWriteOnceWithFSType"];

function validateDriver(d: CSIDriver): FieldError[] {
  const spec = d.spec ?? {};
  const errs: FieldError[] = [];
  for (const key of ["attachRequired", "podInfoOnMount", "storageCapacity", "requiresRepublish"] as const) {
    if (spec[key] == null) errs.push(field.required(`spec.${key}`, ""));
  }
  if (spec.fsGroupPolicy != null && !FS_GROUP_POLICIES.includes(spec.fsGroupPolicy)) errs.push(field.notSupported("spec.fsGroupPolicy", spec.fsGroupPolicy, FS_GROUP_POLICIES));
  for (const m of spec.volumeLifecycleModes ?? []) if (!LIFECYCLE_MODES.includes(m)) errs.push(field.notSupported("spec.volumeLifecycleModes", m, LIFECYCLE_MODES));
  const audiences = new Set<string>();
  (spec.tokenRequests ?? []).forEach((r, i) => {
    const aud = r?.audience ?? "";
    if (audiences.has(aud)) errs.push(field.duplicate(`spec.tokenRequests[${i}].audience`, aud));
    audiences.add(aud);
    if (r?.expirationSeconds != null && r.expirationSeconds < 600) errs.push(field.invalid(`spec.tokenRequests[${i}].expirationSeconds`, r.expirationSeconds, "may not specify a duration less than 10 minutes"));
  });
  return errs;
}

export function csiDrivers(naming: Naming): ResourceDefinition {
  return defineResource<CSIDriver>({
    group: naming.storageGroup,
    versions: ["v1"],
    resource: "csidrivers",
    singular: "csidriver",
    kind: "CSIDriver",
    namespaced: false,
    schema: `${STORAGE_V1}.CSIDriver`,
    defaults(d) {
      const spec = (d.spec ??= {});
      spec.attachRequired ??= true;
      spec.podInfoOnMount ??= false;
      spec.storageCapacity ??= false;
      spec.requiresRepublish ??= false;
      spec.fsGroupPolicy ??= "ReadWriteOnceWithFSType";
      if (!spec.volumeLifecycleModes || spec.volumeLifecycleModes.length === 0) spec.volumeLifecycleModes = ["Persistent"];
    },
    validate: validateDriver,
    validateUpdate(d, old) {
      const errs = validateDriver(d);
      if (d.spec?.attachRequired !== old.spec?.attachRequired) errs.push(field.immutable("spec.attachRequired", d.spec?.attachRequired));
      if (!jsonEqual(d.spec?.volumeLifecycleModes ?? [], old.spec?.volumeLifecycleModes ?? [])) errs.push(field.immutable("spec.volumeLifecycleModes", d.spec?.volumeLifecycleModes));
      return errs;
    },
    table: nameAgeTable<CSIDriver>({
      columns: [
        { name: "AttachRequired", type: "boolean", description: "Whether volumes need an attach step.", priority: 0 },
        { name: "PodInfoOnMount", type: "boolean", description: "Whether mounts get the pod's identity.", priority: 0 },
        { name: "StorageCapacity", type: "boolean", description: "Whether the driver reports capacity.", priority: 0 },
        { name: "TokenRequests", type: "string", description: "Audiences of the tokens passed to the driver.", priority: 0 },
        { name: "RequiresRepublish", type: "boolean", description: "Whether volumes are published again periodically.", priority: 0 },
        { name: "Modes", type: "string", description: "Volume lifecycle modes.", priority: 0 },
      ],
      cells: (d) => [
        d.spec?.attachRequired ?? true,
        d.spec?.podInfoOnMount ?? false,
        d.spec?.storageCapacity ?? false,
        d.spec?.tokenRequests == null ? "<unset>" : d.spec.tokenRequests.map((r) => r.audience ?? "").join(","),
        d.spec?.requiresRepublish ?? false,
        (d.spec?.volumeLifecycleModes ?? []).join(",") || "<none>",
      ],
    }),
  });
}

function validateCSINode(n: CSINode): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (n.spec?.drivers ?? []).forEach((d, i) => {
    const p = `spec.drivers[${i}]`;
    if (!d?.name) errs.push(field.required(`${p}.name`, ""));
    else if (names.has(d.name)) errs.push(field.duplicate(`${p}.name`, d.name));
    else names.add(d.name);
    if (!d?.nodeID) errs.push(field.required(`${p}.nodeID`, ""));
    if (d?.allocatable?.count != null && d.allocatable.count < 0) errs.push(field.invalid(`${p}.allocatable.count`, d.allocatable.count, "must be greater than or equal to 0"));
  });
  return errs;
}

export function csiNodes(naming: Naming): ResourceDefinition {
  return defineResource<CSINode>({
    group: naming.storageGroup,
    versions: ["v1"],
    resource: "csinodes",
    singular: "csinode",
    kind: "CSINode",
    namespaced: false,
    schema: `${STORAGE_V1}.CSINode`,
    defaults(n) {
      (n.spec ??= {}).drivers ??= [];
    },
    validate: validateCSINode,
    validateUpdate: validateCSINode,
    table: nameAgeTable<CSINode>({
      columns: [{ name: "Drivers", type: "integer", description: "The number of CSI drivers on the node.", priority: 0 }],
      cells: (n) => [(n.spec?.drivers ?? []).length],
    }),
  });
}

function validateCapacity(c: CSIStorageCapacity): FieldError[] {
  const errs: FieldError[] = [];
  if (!c.storageClassName) errs.push(field.required("storageClassName", ""));
  else for (const msg of isDNS1123Subdomain(c.storageClassName)) errs.push(field.invalid("storageClassName", c.storageClassName, msg));
  for (const key of ["capacity", "maximumVolumeSize"] as const) {
    if (c[key] != null && (parseQuantity(c[key]) ?? 0) < 0) errs.push(field.invalid(key, c[key], "must be greater than or equal to 0"));
  }
  return errs;
}

export function csiStorageCapacities(naming: Naming): ResourceDefinition {
  return defineResource<CSIStorageCapacity>({
    group: naming.storageGroup,
    versions: ["v1", "v1beta1"],
    resource: "csistoragecapacities",
    singular: "csistoragecapacity",
    kind: "CSIStorageCapacity",
    namespaced: true,
    schema: `${STORAGE_V1}.CSIStorageCapacity`,
    validate: validateCapacity,
    validateUpdate(c, old) {
      const errs = validateCapacity(c);
      if (c.storageClassName !== old.storageClassName) errs.push(field.immutable("storageClassName", c.storageClassName));
      if (!jsonEqual(c.nodeTopology ?? null, old.nodeTopology ?? null)) errs.push(field.immutable("nodeTopology", c.nodeTopology));
      return errs;
    },
    table: nameAgeTable<CSIStorageCapacity>({
      columns: [
        { name: "StorageClassName", type: "string", description: "The class this capacity is for.", priority: 0 },
        { name: "Capacity", type: "string", description: "The space available for new volumes.", priority: 0 },
      ],
      cells: (c) => [c.storageClassName ?? "", c.capacity == null ? "" : String(c.capacity)],
    }),
  });
}
