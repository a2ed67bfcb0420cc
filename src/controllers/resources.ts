// Small facts and calls several controllers need: GET and DELETE that take
// NotFound in their stride, pod readiness, controller owner references, and
// conditions. The resources themselves are in api/resource-refs.ts.

import type { DeleteOptions, GetOptions, ResourceRef, RestClient } from "../client/index.js";
import { formatTimestamp, isApiError, type ApiObject, type OwnerReference } from "../machinery/index.js";
import type { Condition, Pod } from "../api/core/types.js";

/** GET, with NotFound answered as undefined. */
export async function getIfExists<T extends ApiObject>(client: RestClient, ref: ResourceRef, options: GetOptions): Promise<T | undefined> {
  try {
    return await client.get<T>(ref, options);
  } catch (err) {
    if (isApiError(err, "NotFound")) return undefined;
    throw err;
  }
}

/** DELETE, with NotFound (someone was quicker) counted as done; false then. */
export async function deleteIfExists(client: RestClient, ref: ResourceRef, options: DeleteOptions): Promise<boolean> {
  try {
    await client.delete(ref, options);
    return true;
  } catch (err) {
    if (isApiError(err, "NotFound")) return false;
    throw err;
  }
}

export { isPodReady } from "../api/core/pod-phase.js";

export function controllerOf(obj: ApiObject): OwnerReference | undefined {
  return (obj.metadata.ownerReferences ?? []).find((r) => r.controller === true);
}

/**
 * An owner reference marking `owner` as the controller, blocking its
 * foreground deletion (upstream's NewControllerRef); `defaultApiVersion` for
 * an owner object that does not carry its apiVersion.
 */
export function controllerRef(owner: ApiObject, defaultApiVersion?: string): OwnerReference {
  return { apiVersion: owner.apiVersion || (defaultApiVersion ?? owner.apiVersion), kind: owner.kind, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

/**
 * Sets a condition in `conditions`, keeping lastTransitionTime when the
 * status did not change; returns whether anything changed.
 */
export function setCondition<C extends Condition>(conditions: C[], next: C, now: number): boolean {
  const i = conditions.findIndex((c) => c.type === next.type);
  const prev = i < 0 ? undefined : conditions[i]!;
  if (prev !== undefined && prev.status === next.status && prev.reason === next.reason && prev.message === next.message) return false;
  const transition = prev !== undefined && prev.status === next.status ? prev.lastTransitionTime : formatTimestamp(new Date(now));
  const merged = { ...prev, ...next, lastTransitionTime: transition } as C;
  if (i < 0) conditions.push(merged);
  else conditions[i] = merged;
  return true;
}
