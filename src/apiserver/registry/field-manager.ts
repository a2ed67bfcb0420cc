// metadata.managedFields on the write path (seed 000, "Update mechanisms"):
// the store hook that records an Update manager for POST, PUT and non-apply
// PATCH, and server-side apply over the stored object. Both wrap the pure
// algorithms in machinery/apply with the resource's schema and endpoint.

import { schemaOf, versionOf, type ResourceDefinition } from "../../api/resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import type { ApiObject, ManagedFieldsEntry } from "../../machinery/index.js";
import {
  apply,
  decodeManagedFields,
  encodeManagedFields,
  fieldElement,
  FieldSet,
  managerId,
  updateManagedFields,
  type FieldPath,
  type ManagedFields,
  type TypeContext,
} from "../../machinery/apply/index.js";
import type { RequestOptions } from "./store.js";

export interface FieldManagerOptions {
  readonly schemas: SchemaRegistry;
  readonly def: ResourceDefinition;
  readonly manager: string;
  /** The request's group/version (`apps/v1`): entries record the version the manager wrote in. */
  readonly apiVersion: string;
  /** "status", "scale", ... for writes through a subresource. */
  readonly subresource?: string | undefined;
}

/** The store hook for a non-apply write: `manager` takes what it added or changed. */
export function recordUpdate(o: FieldManagerOptions): NonNullable<RequestOptions["manageFields"]> {
  const schema = typeContext(o);
  const reset = resetFields(o.def, o.subresource);
  return (live, next, now) =>
    updateManagedFields({
      live,
      updated: next,
      manager: o.manager,
      operation: "Update",
      subresource: o.subresource,
      now,
      apiVersion: o.apiVersion,
      schema,
      resetFields: reset,
    }).object;
}

/**
 * Server-side apply of `applied` over `live` (undefined: the apply creates the
 * object). Throws the 409 listing conflicts unless `force`.
 */
export function applyConfiguration(o: FieldManagerOptions & { readonly applied: ApiObject; readonly force: boolean }, live: ApiObject | undefined, now: Date): ApiObject {
  return apply({
    live,
    applied: o.applied,
    manager: o.manager,
    force: o.force,
    schema: typeContext(o),
    now,
    apiVersion: o.apiVersion,
    subresource: o.subresource,
    resetFields: resetFields(o.def, o.subresource),
  }).object;
}

export const SCALE_SCHEMA = "io.k8s.api.autoscaling.v1.Scale";
const SCALE_VERSION = "autoscaling/v1";
/** Where a Scale's replicas live, in the Scale and in the parent (deployments, replicasets, statefulsets: both spec.replicas). */
const REPLICAS: FieldPath = [fieldElement("spec"), fieldElement("replicas")];
const REPLICAS_SET = FieldSet.of(REPLICAS);

/**
 * Server-side apply through /scale (upstream's ScaleHandler): the parent's
 * owners of spec.replicas become owners of the Scale's, the apply runs on the
 * Scale, and ownership maps back onto the parent: an owner that lost
 * replicas loses it there too, a new owner gets an entry in the parent's
 * version with subresource "scale". Returns the applied Scale and the
 * parent's new managedFields.
 */
export function applyToScale(
  o: Omit<FieldManagerOptions, "subresource"> & { readonly applied: ApiObject; readonly force: boolean },
  parent: ApiObject,
  scale: ApiObject,
  now: Date,
): { scale: ApiObject; managedFields: ManagedFieldsEntry[] } {
  const parentManaged = decodeManagedFields(parent.metadata.managedFields);
  const asScale = (key: string) => {
    const e = parentManaged.get(key)!;
    return managerId({ ...e, apiVersion: SCALE_VERSION });
  };
  const scaleManaged: ManagedFields = new Map();
  for (const [key, e] of parentManaged) if (e.set.has(REPLICAS)) scaleManaged.set(asScale(key), { ...e, apiVersion: SCALE_VERSION, set: REPLICAS_SET });
  const result = apply({
    live: { ...scale, metadata: { ...scale.metadata, managedFields: encodeManagedFields(scaleManaged) } },
    applied: o.applied,
    manager: o.manager,
    force: o.force,
    schema: { registry: o.schemas, type: SCALE_SCHEMA },
    now,
    apiVersion: SCALE_VERSION,
    subresource: "scale",
  });
  const after = decodeManagedFields(result.managedFields);
  const out: ManagedFields = new Map();
  for (const [key, e] of parentManaged) {
    if (!e.set.has(REPLICAS) || after.delete(asScale(key))) {
      out.set(key, e);
      continue;
    }
    const rest = e.set.difference(REPLICAS_SET);
    if (!rest.isEmpty()) out.set(key, { ...e, set: rest });
  }
  for (const e of after.values()) {
    if (!e.set.has(REPLICAS)) continue;
    const entry = { ...e, apiVersion: o.apiVersion, set: REPLICAS_SET };
    out.set(managerId(entry), entry);
  }
  return { scale: result.object, managedFields: encodeManagedFields(out) };
}

/** The request version's types: a custom kind's versions each have their own schema. */
function typeContext(o: FieldManagerOptions): TypeContext {
  return { registry: o.schemas, type: schemaOf(o.def, versionOf(o.apiVersion)) };
}

/**
 * What the endpoint's strategy resets, so no manager owns it there (upstream's
 * ResetFieldsStrategy), as the subresource declarations say: e.g. status on
 * the main resource of kinds with a status subresource, spec on /status.
 */
function resetFields(def: ResourceDefinition, subresource: string | undefined): FieldSet | undefined {
  // Once per declaration and endpoint: every write asks (the sets are only read).
  let byEndpoint = RESET.get(def);
  if (byEndpoint === undefined) RESET.set(def, (byEndpoint = new Map()));
  const key = subresource === undefined ? "\u0000main" : subresource;
  if (!byEndpoint.has(key)) byEndpoint.set(key, resetFieldsOf(def, subresource));
  return byEndpoint.get(key);
}

const RESET = new WeakMap<ResourceDefinition, Map<string, FieldSet | undefined>>();

function resetFieldsOf(def: ResourceDefinition, subresource: string | undefined): FieldSet | undefined {
  const fields = (def.subresources ?? []).flatMap((s) => (subresource === undefined ? s.resetFields?.main : s.name === subresource ? s.resetFields?.here : undefined) ?? []);
  return fields.length === 0 ? undefined : FieldSet.of(...fields.map((f) => [fieldElement(f)]));
}
