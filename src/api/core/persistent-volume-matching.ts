// Which volume a claim may bind to (upstream's FindMatchingVolume, simplified):
// the same class ("" matches ""), the same volume mode, every access mode the
// claim asks for, at least its size, its label selector, reachable from the
// selected node when one is given, and either free or pre-bound to this claim.
// Of those that fit, the smallest wins. The binder controller binds by it; the
// scheduler's VolumeBinding filter asks it whether a node has a volume to offer.

import { selectorFromLabelSelector } from "../../machinery/index.js";
import type { PersistentVolume, PersistentVolumeClaim } from "./persistent-volume-types.js";
import { accessModesString, claimRequest, volumeReachableFrom } from "./persistent-volumes.js";
import { parseQuantity } from "./quantity.js";

/** Whether `pv` is bound, or pre-bound, to exactly this claim. */
export function volumeRefersTo(pv: PersistentVolume, pvc: PersistentVolumeClaim): boolean {
  const ref = pv.spec?.claimRef;
  if (ref == null || ref.name !== pvc.metadata.name || (ref.namespace ?? "") !== (pvc.metadata.namespace ?? "")) return false;
  return !ref.uid || ref.uid === pvc.metadata.uid;
}

export function volumeFits(pv: PersistentVolume, pvc: PersistentVolumeClaim, node?: { name: string; labels: Readonly<Record<string, string>> }): boolean {
  if (pv.metadata.deletionTimestamp) return false;
  if (pv.spec?.claimRef != null && !volumeRefersTo(pv, pvc)) return false;
  if ((pv.spec?.storageClassName ?? "") !== (pvc.spec?.storageClassName ?? "")) return false;
  if ((pv.spec?.volumeMode ?? "Filesystem") !== (pvc.spec?.volumeMode ?? "Filesystem")) return false;
  const offered = new Set(pv.spec?.accessModes ?? []);
  if (!(pvc.spec?.accessModes ?? []).every((m) => offered.has(m))) return false;
  if ((parseQuantity(pv.spec?.capacity?.["storage"]) ?? 0) < claimRequest(pvc)) return false;
  if (pvc.spec?.selector != null && !selectorFromLabelSelector(pvc.spec.selector).matches(pv.metadata.labels ?? {})) return false;
  if (node !== undefined && !volumeReachableFrom(pv, node)) return false;
  return true;
}

/** The best volume for the claim: one pre-bound to it, else the smallest that fits. */
export function findMatchingVolume(volumes: readonly PersistentVolume[], pvc: PersistentVolumeClaim, node?: { name: string; labels: Readonly<Record<string, string>> }): PersistentVolume | undefined {
  const fitting = volumes.filter((pv) => volumeFits(pv, pvc, node));
  const preBound = fitting.find((pv) => volumeRefersTo(pv, pvc));
  if (preBound !== undefined) return preBound;
  const size = (pv: PersistentVolume) => parseQuantity(pv.spec?.capacity?.["storage"]) ?? 0;
  return fitting.sort((a, b) => size(a) - size(b) || (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""))[0];
}

/** A short description of a claim for events: "1Gi RWO of class local-path". */
export function describeClaim(pvc: PersistentVolumeClaim): string {
  return `${pvc.spec?.resources?.requests?.["storage"] ?? "?"} ${accessModesString(pvc.spec?.accessModes)} of class "${pvc.spec?.storageClassName ?? ""}"`;
}
