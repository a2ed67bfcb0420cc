// Status writes and conditions as the workload controllers share them:
// writes go through the status subresource and retry once on a conflict
// against a fresh read; conditions keep their transition time while their
// status is unchanged.

import { isApiError, formatTimestamp, type ApiObject } from "../../machinery/index.js";
import type { ResourceRef, RestClient } from "../../client/index.js";

export interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastUpdateTime?: string;
}

/** PUTs `status` on the object's status subresource; on a conflict, once more on a fresh copy. Gone objects are ignored. */
export async function writeStatus<T extends ApiObject & { status?: unknown }>(client: RestClient, ref: ResourceRef, obj: T, status: T["status"]): Promise<T | undefined> {
  try {
    return await client.update<T>(ref, { ...obj, status }, { subresource: "status" });
  } catch (err) {
    if (isApiError(err, "NotFound")) return undefined;
    if (!isApiError(err, "Conflict")) throw err;
  }
  try {
    const fresh = await client.get<T>(ref, { namespace: obj.metadata.namespace!, name: obj.metadata.name! });
    return await client.update<T>(ref, { ...fresh, status }, { subresource: "status" });
  } catch (err) {
    if (isApiError(err, "NotFound")) return undefined;
    throw err;
  }
}

export function findCondition<C extends Condition>(conditions: readonly C[] | null | undefined, type: string): C | undefined {
  return (conditions ?? []).find((c) => c.type === type);
}

/**
 * Sets a condition (upstream's SetDeploymentCondition and friends): a
 * condition with the same status and reason is left as it is; one with the
 * same status keeps its lastTransitionTime.
 */
export function setCondition<C extends Condition>(conditions: C[], next: C): C[] {
  const current = findCondition(conditions, next.type!);
  if (current !== undefined && current.status === next.status && current.reason === next.reason) return conditions;
  const merged = { ...next };
  if (current !== undefined && current.status === next.status && current.lastTransitionTime) merged.lastTransitionTime = current.lastTransitionTime;
  return [...conditions.filter((c) => c.type !== next.type), merged];
}

export function removeCondition<C extends Condition>(conditions: C[], type: string): C[] {
  return conditions.filter((c) => c.type !== type);
}

export function newCondition(type: string, status: "True" | "False" | "Unknown", reason: string, message: string, withUpdateTime = false): Condition {
  const now = formatTimestamp();
  return { type, status, ...(withUpdateTime ? { lastUpdateTime: now } : {}), lastTransitionTime: now, reason, message };
}
