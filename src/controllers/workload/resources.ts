// The resources the workload controllers read and write, as the client names
// them, and the owner reference a controller puts on what it creates.

import { selectorFromLabelSelector, type ApiObject, type LabelSelector, type OwnerReference, type Selector } from "../../machinery/index.js";
import type { ResourceRef } from "../../client/index.js";

export { PODS, NODES, controllerOf } from "../resources.js";
export const REPLICASETS: ResourceRef = { group: "apps", version: "v1", resource: "replicasets", namespaced: true };
export const DEPLOYMENTS: ResourceRef = { group: "apps", version: "v1", resource: "deployments", namespaced: true };
export const DAEMONSETS: ResourceRef = { group: "apps", version: "v1", resource: "daemonsets", namespaced: true };
export const STATEFULSETS: ResourceRef = { group: "apps", version: "v1", resource: "statefulsets", namespaced: true };
export const CONTROLLERREVISIONS: ResourceRef = { group: "apps", version: "v1", resource: "controllerrevisions", namespaced: true };

/** The reference a controller sets on what it manages: controller and blockOwnerDeletion true, as upstream. */
export function controllerRef(owner: ApiObject): OwnerReference {
  return { apiVersion: owner.apiVersion || "apps/v1", kind: owner.kind, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

/** The owner's spec.selector as a Selector; one that cannot be parsed (validation prevents it) selects nothing. */
export function selectorOf(owner: { spec?: { selector?: LabelSelector | null } }): Selector {
  try {
    return selectorFromLabelSelector(owner.spec?.selector);
  } catch {
    return selectorFromLabelSelector(null);
  }
}
