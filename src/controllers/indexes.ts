// Informer indexes the controllers share (upstream's pod-by-node and by-controller indexers): one
// function per name, so that controllers asking the same shared informer for the same index get
// one index, not a conflict. Use through informer.addIndexers and informer.byIndex.

import type { Pod } from "../api/core/types.js";
import type { ApiObject } from "../machinery/index.js";
import { controllerOf } from "./resources.js";

/** Pods by spec.nodeName (unbound pods are in no bucket). */
export const POD_NODE_NAME_INDEX = "spec.nodeName";
export function podNodeNameIndex(pod: Pod): string[] {
  return pod.spec?.nodeName ? [pod.spec.nodeName] : [];
}

/** Objects by the UID of their controller owner reference (orphans are in no bucket). */
export const CONTROLLER_UID_INDEX = "controller-uid";
export function controllerUidIndex(obj: ApiObject): string[] {
  const uid = controllerOf(obj)?.uid;
  return uid ? [uid] : [];
}
