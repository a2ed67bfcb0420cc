// metadata.managedFields on the write path (seed 000, "Update mechanisms"):
// the store hook that records an Update manager for POST, PUT and non-apply
// PATCH, and server-side apply over the stored object. Both wrap the pure
// algorithms in machinery/apply with the resource's schema and endpoint.

import type { ResourceDefinition } from "../../api/resource.js";
import type { SchemaRegistry } from "../../api/schema.js";
import type { ApiObject } from "../../machinery/index.js";
import { apply, fieldElement, FieldSet, updateManagedFields, type TypeContext } from "../../machinery/apply/index.js";
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

function typeContext(o: FieldManagerOptions): TypeContext {
  return { registry: o.schemas, type: o.def.schema };
}

const STATUS = FieldSet.of([fieldElement("status")]);
const SPEC = FieldSet.of([fieldElement("spec")]);

/**
 * What the endpoint's strategy resets, so no manager owns it there (upstream's
 * ResetFieldsStrategy): status on the main resource of kinds with a status
 * subresource, spec on /status.
 */
function resetFields(def: ResourceDefinition, subresource: string | undefined): FieldSet | undefined {
  if (!def.subresources?.status) return undefined;
  return subresource === "status" ? SPEC : subresource === undefined ? STATUS : undefined;
}
