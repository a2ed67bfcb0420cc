// What a delete does to an object (seed 000, "States and transitions"): the
// options a request may give (propagation policy, preconditions on uid and
// resourceVersion, the corrupt-object delete that excludes every other one)
// and the mark (finalizers, deletionTimestamp, grace period) or removal.

import { badRequest, conflict, field, formatTimestamp, invalid, type ApiObject, type FieldError, type GroupResource } from "../../machinery/index.js";
import { copyJson } from "../../machinery/patch/json-value.js";

export interface DeleteOptions {
  gracePeriodSeconds?: number | undefined;
  preconditions?: { uid?: string | undefined; resourceVersion?: string | undefined } | undefined;
  propagationPolicy?: string | undefined;
  orphanDependents?: boolean | undefined;
  dryRun?: boolean | undefined;
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean | undefined;
}

export interface DeleteResult {
  object: ApiObject;
  /** False when the object was only marked (finalizers or a grace period remain). */
  deleted: boolean;
}

/** The policy a delete asks for; `fallback` when it names none (the kind's defaultPropagationPolicy, else Background). */
export function deletePolicy(options: DeleteOptions, fallback: "Orphan" | "Background" = "Background"): "Orphan" | "Background" | "Foreground" {
  const policy = options.propagationPolicy;
  if (policy !== undefined && options.orphanDependents !== undefined) {
    throw badRequest("Only one of DeleteOptions.orphanDependents and DeleteOptions.propagationPolicy may be set");
  }
  if (policy === undefined) return options.orphanDependents === undefined ? fallback : options.orphanDependents ? "Orphan" : "Background";
  if (policy !== "Orphan" && policy !== "Background" && policy !== "Foreground") {
    throw badRequest(`propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`);
  }
  return policy;
}

/** 409 when a precondition names another uid or resourceVersion than the stored object's. */
export function checkPreconditions(options: DeleteOptions, current: ApiObject, resource: GroupResource, name: string): void {
  const pre = options.preconditions;
  if (pre?.uid && pre.uid !== current.metadata.uid) {
    throw conflict(resource, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`);
  }
  if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
    throw conflict(
      resource,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
    );
  }
}

export const CORRUPT_DELETE_OPTION = "ignoreStoreReadErrorWithClusterBreakingPotential";

/** The corrupt-object delete takes no other option: 422 naming each one set. */
export function checkCorruptDeleteOptions(options: DeleteOptions, metaGroup: string): void {
  const notWith = (path: string, value: unknown) => field.invalid(path, value, `can not be set together with ${CORRUPT_DELETE_OPTION}`);
  const errs: FieldError[] = [];
  if (options.dryRun) errs.push(notWith("dryRun", ["All"]));
  if (options.gracePeriodSeconds !== undefined) errs.push(notWith("gracePeriodSeconds", options.gracePeriodSeconds));
  if (options.orphanDependents !== undefined) errs.push(notWith("orphanDependents", options.orphanDependents));
  if (options.preconditions !== undefined) errs.push(notWith("preconditions", options.preconditions));
  if (options.propagationPolicy !== undefined) errs.push(notWith("propagationPolicy", options.propagationPolicy));
  if (errs.length > 0) throw invalid({ group: metaGroup, kind: "DeleteOptions" }, "", errs);
}

export interface MarkOptions {
  policy: "Orphan" | "Background" | "Foreground";
  /** The grace period the kind grants this request (0: none). */
  grace: number;
  /** Something still holds the object: finalizers, or the kind's own holds. */
  held(obj: ApiObject): boolean;
  /** The kind's prepareForDelete, run on the first delete only. */
  prepare(next: ApiObject): void;
  now: Date;
}

/**
 * The first delete adds the policy's finalizer; a grace period may only
 * shrink. The answer is the marked copy, or "remove" when nothing holds the
 * object and no grace period remains.
 */
export function markForDeletion(current: ApiObject, options: MarkOptions): ApiObject | "remove" {
  const next = copyJson(current);
  const meta = next.metadata;
  const finalizers = new Set(meta.finalizers ?? []);
  const firstDelete = !meta.deletionTimestamp;
  if (firstDelete) {
    if (options.policy === "Orphan") finalizers.add("orphan");
    if (options.policy === "Foreground") finalizers.add("foregroundDeletion");
  }
  const alreadyGrace = meta.deletionGracePeriodSeconds;
  const effectiveGrace = alreadyGrace !== undefined && alreadyGrace !== null ? Math.min(alreadyGrace, options.grace) : options.grace;
  meta.finalizers = [...finalizers];
  if (meta.finalizers.length === 0) delete meta.finalizers;
  if (!options.held(next) && effectiveGrace === 0) return "remove";
  if (firstDelete) options.prepare(next);
  if (!meta.deletionTimestamp || effectiveGrace !== alreadyGrace) {
    meta.deletionTimestamp = formatTimestamp(new Date(options.now.getTime() + effectiveGrace * 1000));
    meta.deletionGracePeriodSeconds = effectiveGrace;
  }
  return next;
}
