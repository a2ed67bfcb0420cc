// persistentvolumes (cluster-scoped, `pv`) and persistentvolumeclaims (`pvc`)
// of core/v1, each with a status subresource: upstream's defaults (a volume's
// reclaim policy Retain, both volume modes Filesystem, both phases Pending at
// create), its ValidatePersistentVolume / ValidatePersistentVolumeClaim rules
// and messages, and the columns `kubectl get pv,pvc` shows (v1.33 printers).

import { field, formatTimestamp, type FieldError } from "../../machinery/index.js";
import { defineResource, type ResourceDefinition, type TableColumn } from "../resource.js";
import { status } from "../subresources/index.js";
import { formatAge, NAME_COLUMN, AGE_COLUMN } from "../table-format.js";
import { nodeSelectorTermMatches } from "./node-matching.js";
import type { PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimSpec } from "./persistent-volume-types.js";
import { parseQuantity } from "./quantity.js";
import { CORE_V1 } from "./schemas.js";
import { jsonEqual } from "./validation.js";

/** The access modes, in the order upstream prints them (RWO,ROX,RWX,RWOP). */
export const ACCESS_MODES: readonly string[] = ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"];
const SHORT_MODES = ["RWO", "ROX", "RWX", "RWOP"];
const RECLAIM_POLICIES = ["Delete", "Recycle", "Retain"];
const VOLUME_MODES = ["Block", "Filesystem"];
/** The PV sources served (see persistent-volume-schemas.ts for the ones left out). */
const PV_SOURCES = ["hostPath", "nfs", "local", "csi"] as const;

/** upstream's GetAccessModesAsString: "RWO,RWX". */
export function accessModesString(modes: readonly string[] | null | undefined): string {
  const set = new Set(modes ?? []);
  return ACCESS_MODES.flatMap((m, i) => (set.has(m) ? [SHORT_MODES[i]!] : [])).join(",");
}

/** The bytes a claim asks for (its storage request), 0 when absent. */
export function claimRequest(pvc: PersistentVolumeClaim): number {
  return parseQuantity(pvc.spec?.resources?.requests?.["storage"]) ?? 0;
}

/** Whether a volume can be reached from this node: no node affinity, or one of its terms matches. */
export function volumeReachableFrom(pv: PersistentVolume, node: { name: string; labels: Readonly<Record<string, string>> }): boolean {
  const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms;
  if (terms == null) return true;
  return terms.some((t) => nodeSelectorTermMatches(t, node.labels, node.name));
}

/** The path a node mounts for a volume of a hostPath or local source (the two a node serves itself). */
export function localVolumePath(pv: PersistentVolume): string | undefined {
  return pv.spec?.hostPath?.path ?? pv.spec?.local?.path ?? undefined;
}

function validateAccessModes(modes: readonly string[] | null | undefined, path: string, requiredMsg: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!modes || modes.length === 0) return [field.required(path, requiredMsg)];
  for (const m of modes) if (!ACCESS_MODES.includes(m)) errs.push(field.notSupported(path, m, ACCESS_MODES));
  if (modes.includes("ReadWriteOncePod") && modes.length > 1) errs.push(field.forbidden(path, "may not use ReadWriteOncePod with other access modes"));
  return errs;
}

function validatePersistentVolume(pv: PersistentVolume): FieldError[] {
  const spec = pv.spec ?? {};
  const errs = validateAccessModes(spec.accessModes, "spec.accessModes", "");
  const capacity = spec.capacity ?? {};
  if (Object.keys(capacity).length === 0) errs.push(field.required("spec.capacity", ""));
  else if (!("storage" in capacity) || Object.keys(capacity).length > 1) errs.push(field.notSupported("spec.capacity", capacity, ["storage"]));
  else if ((parseQuantity(capacity["storage"]) ?? -1) <= 0) errs.push(field.invalid("spec.capacity[storage]", capacity["storage"], "must be greater than zero"));
  if (spec.persistentVolumeReclaimPolicy && !RECLAIM_POLICIES.includes(spec.persistentVolumeReclaimPolicy)) {
    errs.push(field.notSupported("spec.persistentVolumeReclaimPolicy", spec.persistentVolumeReclaimPolicy, RECLAIM_POLICIES));
  }
  if (spec.volumeMode && !VOLUME_MODES.includes(spec.volumeMode)) errs.push(field.notSupported("spec.volumeMode", spec.volumeMode, VOLUME_MODES));
  const sources = PV_SOURCES.filter((s) => spec[s] != null);
  if (sources.length === 0) errs.push(field.required("spec", "must specify a volume type"));
  for (const extra of sources.slice(1)) errs.push(field.forbidden(`spec.${extra}`, "may not specify more than 1 volume type"));
  if (spec.hostPath && !spec.hostPath.path) errs.push(field.required("spec.hostPath.path", ""));
  if (spec.nfs) {
    if (!spec.nfs.server) errs.push(field.required("spec.nfs.server", ""));
    if (!spec.nfs.path) errs.push(field.required("spec.nfs.path", ""));
    else if (!spec.nfs.path.startsWith("/")) errs.push(field.invalid("spec.nfs.path", spec.nfs.path, "must be an absolute path"));
  }
  if (spec.local) {
    if (!spec.local.path) errs.push(field.required("spec.local.path", ""));
    if (spec.nodeAffinity == null) errs.push(field.required("spec.nodeAffinity", "Local volume requires node affinity"));
  }
  if (spec.csi) {
    if (!spec.csi.driver) errs.push(field.required("spec.csi.driver", ""));
    if (!spec.csi.volumeHandle) errs.push(field.required("spec.csi.volumeHandle", ""));
  }
  if (spec.nodeAffinity != null) {
    const terms = spec.nodeAffinity.required?.nodeSelectorTerms;
    if (spec.nodeAffinity.required == null) errs.push(field.required("spec.nodeAffinity.required", "must specify required node constraints"));
    else if (!terms || terms.length === 0) errs.push(field.required("spec.nodeAffinity.required.nodeSelectorTerms", "must have at least one node selector term"));
  }
  return errs;
}

function validatePersistentVolumeUpdate(pv: PersistentVolume, old: PersistentVolume): FieldError[] {
  const errs = validatePersistentVolume(pv);
  const source = (v: PersistentVolume) => Object.fromEntries(PV_SOURCES.map((s) => [s, v.spec?.[s] ?? null]));
  if (!jsonEqual(source(pv), source(old))) errs.push(field.forbidden("spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation"));
  if ((pv.spec?.volumeMode ?? null) !== (old.spec?.volumeMode ?? null)) errs.push(field.immutable("spec.volumeMode", pv.spec?.volumeMode));
  // Node affinity may be set once; after that it stays.
  if (old.spec?.nodeAffinity != null && !jsonEqual(pv.spec?.nodeAffinity ?? null, old.spec.nodeAffinity)) {
    errs.push(field.immutable("spec.nodeAffinity", pv.spec?.nodeAffinity));
  }
  return errs;
}

export function validateClaimSpec(spec: PersistentVolumeClaimSpec, path = "spec"): FieldError[] {
  const errs = validateAccessModes(spec.accessModes, `${path}.accessModes`, "at least 1 access mode is required");
  const storage = spec.resources?.requests?.["storage"];
  if (storage === undefined) errs.push(field.required(`${path}.resources[storage]`, ""));
  else if ((parseQuantity(storage) ?? -1) <= 0) errs.push(field.invalid(`${path}.resources[storage]`, storage, "must be greater than zero"));
  if (spec.volumeMode && !VOLUME_MODES.includes(spec.volumeMode)) errs.push(field.notSupported(`${path}.volumeMode`, spec.volumeMode, VOLUME_MODES));
  return errs;
}

function validateClaimUpdate(pvc: PersistentVolumeClaim, old: PersistentVolumeClaim): FieldError[] {
  const errs = validateClaimSpec(pvc.spec ?? {});
  // Only the size may change, and only of a bound claim; everything else is as created.
  const rest = (c: PersistentVolumeClaim) => {
    const spec = structuredClone(c.spec ?? {});
    if (spec.resources) delete spec.resources.requests;
    // Setting volumeName once (the binder's pre-bind) is allowed, as upstream.
    if (!old.spec?.volumeName) delete spec.volumeName;
    delete spec.volumeAttributesClassName;
    return spec;
  };
  const bound = old.status?.phase === "Bound";
  if (!jsonEqual(rest(pvc), rest(old)) || (!bound && !jsonEqual(pvc.spec?.resources?.requests ?? null, old.spec?.resources?.requests ?? null))) {
    errs.push(field.forbidden("spec", "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"));
  } else if (bound && claimRequest(pvc) < claimRequest(old)) {
    errs.push(field.forbidden("spec.resources.requests.storage", "field can not be less than previous value"));
  }
  return errs;
}

const col = (name: string, description: string, priority = 0): TableColumn => ({ name, type: "string", description, priority });
const phaseOf = (obj: PersistentVolume | PersistentVolumeClaim): string => (obj.metadata.deletionTimestamp ? "Terminating" : obj.status?.phase ?? "");
const unset = (value: string | null | undefined): string => value || "<unset>";

export function persistentVolumesResource(): ResourceDefinition {
  return defineResource<PersistentVolume>({
    group: "",
    versions: ["v1"],
    resource: "persistentvolumes",
    singular: "persistentvolume",
    kind: "PersistentVolume",
    namespaced: false,
    shortNames: ["pv"],
    schema: `${CORE_V1}.PersistentVolume`,
    subresources: [status({ validate: (pv) => validatePersistentVolume(pv) })],
    prepareForCreate(pv, ctx) {
      pv.status = { phase: "Pending", lastPhaseTransitionTime: formatTimestamp(ctx.now) };
    },
    validate: validatePersistentVolume,
    validateUpdate: validatePersistentVolumeUpdate,
    table: {
      columns: [
        NAME_COLUMN,
        col("Capacity", "The size of the volume."),
        col("Access Modes", "The volume's access modes."),
        col("Reclaim Policy", "What happens when its claim is released."),
        col("Status", "The volume's phase."),
        col("Claim", "The claim bound to it."),
        col("StorageClass", "The volume's storage class."),
        col("VolumeAttributesClass", "The volume's attributes class."),
        col("Reason", "Why it is in this phase."),
        AGE_COLUMN,
        col("VolumeMode", "Filesystem or Block.", 1),
      ],
      cells: (pv, now) => {
        const ref = pv.spec?.claimRef;
        return [
          pv.metadata.name ?? "",
          String(pv.spec?.capacity?.["storage"] ?? ""),
          accessModesString(pv.spec?.accessModes),
          pv.spec?.persistentVolumeReclaimPolicy ?? "",
          phaseOf(pv),
          ref?.name ? `${ref.namespace ?? ""}/${ref.name}` : "",
          pv.spec?.storageClassName ?? "",
          unset(pv.spec?.volumeAttributesClassName),
          pv.status?.reason ?? "",
          formatAge(pv.metadata.creationTimestamp, now),
          unset(pv.spec?.volumeMode),
        ];
      },
    },
  });
}

export function persistentVolumeClaimsResource(): ResourceDefinition {
  return defineResource<PersistentVolumeClaim>({
    group: "",
    versions: ["v1"],
    resource: "persistentvolumeclaims",
    singular: "persistentvolumeclaim",
    kind: "PersistentVolumeClaim",
    namespaced: true,
    shortNames: ["pvc"],
    schema: `${CORE_V1}.PersistentVolumeClaim`,
    subresources: [status({ validate: (pvc) => validateClaimSpec(pvc.spec ?? {}) })],
    defaults(pvc) {
      const spec = (pvc.spec ??= {});
      spec.volumeMode ??= "Filesystem";
    },
    prepareForCreate(pvc) {
      pvc.status = { phase: "Pending" };
    },
    validate: (pvc) => validateClaimSpec(pvc.spec ?? {}),
    validateUpdate: validateClaimUpdate,
    table: {
      columns: [
        NAME_COLUMN,
        col("Status", "The claim's phase."),
        col("Volume", "The volume bound to it."),
        col("Capacity", "The size of the bound volume."),
        col("Access Modes", "The bound volume's access modes."),
        col("StorageClass", "The claim's storage class."),
        col("VolumeAttributesClass", "The claim's attributes class."),
        AGE_COLUMN,
        col("VolumeMode", "Filesystem or Block.", 1),
      ],
      cells: (pvc, now) => {
        // Capacity and modes are the bound volume's, shown once bound (as upstream).
        const bound = pvc.spec?.volumeName ? pvc.status : undefined;
        return [
          pvc.metadata.name ?? "",
          phaseOf(pvc),
          pvc.spec?.volumeName ?? "",
          String(bound?.capacity?.["storage"] ?? ""),
          accessModesString(bound?.accessModes),
          pvc.spec?.storageClassName ?? "",
          unset(pvc.spec?.volumeAttributesClassName),
          formatAge(pvc.metadata.creationTimestamp, now),
          unset(pvc.spec?.volumeMode),
        ];
      },
    },
  });
}
