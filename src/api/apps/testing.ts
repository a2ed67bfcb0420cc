// Test helpers for the workload groups: run a declaration's strategy hooks in
// the store's order (schema defaults, the kind's defaults → prepare →
// validate) without a store, and render field errors as the API would.

import { formatFieldError, type ApiObject, type FieldError } from "../../machinery/index.js";
import { namingFor } from "../../machinery/naming.js";
import type { ResourceDefinition, StrategyContext } from "../resource.js";
import { SchemaRegistry } from "../../machinery/schema.js";
import { registerCoreSchemas } from "../core/schemas.js";
import { SchemaDefaulter } from "../../apiserver/registry/defaults.js";
import { appsModule } from "./index.js";
import { batchModule } from "../batch/index.js";
import { coordinationModule } from "../coordination/index.js";
import { autoscalingModule } from "../autoscaling/index.js";

/** meta, core and the four groups here, as the API server registers them. */
export function registry(): SchemaRegistry {
  const r = new SchemaRegistry();
  registerCoreSchemas(r);
  for (const m of [appsModule, batchModule, coordinationModule, autoscalingModule]) m.registerSchemas(r);
  return r;
}

const defaulter = new SchemaDefaulter(registry());

/** The store's defaulting: the schema's declared defaults, then the kind's own. */
function applyDefaults(def: ResourceDefinition, obj: ApiObject, context: StrategyContext): void {
  defaulter.apply(def.schema, obj);
  def.defaults?.(obj, context);
}

export const NOW = new Date("2026-01-02T03:04:05Z");
export const ctx: StrategyContext = { naming: namingFor(), now: NOW };

/** What the store does on create, minus storage: returns the object and the kind's field errors. */
export function create(def: ResourceDefinition, input: object, context: StrategyContext = ctx): { obj: ApiObject; errors: string[] } {
  const obj = structuredClone(input) as ApiObject;
  obj.metadata ??= {};
  obj.metadata.uid ??= "11111111-2222-3333-4444-555555555555";
  obj.metadata.creationTimestamp ??= "2026-01-02T03:00:00Z";
  applyDefaults(def, obj, context);
  def.prepareForCreate?.(obj, context);
  return { obj, errors: messages(def.validate?.(obj, context) ?? []) };
}

/** What the store does on update: defaults → prepareForUpdate → validateUpdate. */
export function update(def: ResourceDefinition, next: ApiObject, old: ApiObject, context: StrategyContext = ctx): string[] {
  const obj = structuredClone(next);
  applyDefaults(def, obj, context);
  def.prepareForUpdate?.(obj, old, context);
  return messages(def.validateUpdate?.(obj, old, context) ?? []);
}

export function messages(errs: readonly FieldError[]): string[] {
  return errs.map(formatFieldError);
}

/** A pod template with the given labels and one container. */
export function template(labels: Record<string, string>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { metadata: { labels }, spec: { containers: [{ name: "web", image: "nginx:1.27" }], ...extra } };
}
