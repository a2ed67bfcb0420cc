// Test helpers for the core group: run a declaration's hooks in the store's
// order (schema defaults, the kind's defaults → prepare → validate) without a
// store, and render field errors as the API would.

import { formatFieldError, type ApiObject, type FieldError } from "../../machinery/index.js";
import { SchemaDefaulter } from "../../apiserver/registry/defaults.js";
import { namingFor } from "../../machinery/naming.js";
import type { ResourceDefinition, StrategyContext } from "../resource.js";
import { SchemaRegistry } from "../../machinery/schema.js";
import { coreModule } from "./index.js";

export const NOW = new Date("2026-01-02T03:04:05Z");
export const ctx: StrategyContext = { naming: namingFor(), now: NOW };

const registry = new SchemaRegistry();
coreModule.registerSchemas(registry);
const defaulter = new SchemaDefaulter(registry);
const defs = coreModule.resources(ctx.naming);

export function def(resource: string): ResourceDefinition {
  const d = defs.find((x) => x.resource === resource);
  if (d === undefined) throw new Error(`no resource ${resource}`);
  return d;
}

function defaults(d: ResourceDefinition, obj: ApiObject): void {
  defaulter.apply(d.schema, obj);
  d.defaults?.(obj, ctx);
}

/** The store's create pipeline minus storage: the object as it would be stored, and the kind's errors. */
export function create(d: ResourceDefinition, input: object): { obj: ApiObject; errors: string[] } {
  const obj = structuredClone(input) as ApiObject;
  obj.metadata ??= {};
  obj.metadata.creationTimestamp ??= "2026-01-02T03:00:00Z";
  defaults(d, obj);
  d.prepareForCreate?.(obj, ctx);
  return { obj, errors: messages(d.validate?.(obj, ctx) ?? []) };
}

/** The store's update pipeline (main resource): defaults → prepareForUpdate → validateUpdate. */
export function update(d: ResourceDefinition, next: object, old: ApiObject): { obj: ApiObject; errors: string[] } {
  const obj = structuredClone(next) as ApiObject;
  for (const s of d.subresources ?? []) s.prepareMainUpdate?.(obj, old);
  defaults(d, obj);
  d.prepareForUpdate?.(obj, old, ctx);
  return { obj, errors: messages(d.validateUpdate?.(obj, old, ctx) ?? []) };
}

export function messages(errs: readonly FieldError[]): string[] {
  return errs.map(formatFieldError);
}

export function pod(spec: object = {}, metadata: object = {}): object {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "default", ...metadata },
    spec: { containers: [{ name: "web", image: "nginx:1.27" }], ...spec },
  };
}
