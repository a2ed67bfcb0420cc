// Test helpers for the workload groups: run a declaration's strategy hooks in
// the store's order (defaults → prepare → validate) without a store, and
// render field errors as the API would.

import { formatFieldError, type ApiObject, type FieldError } from "../../machinery/index.js";
import { namingFor } from "../naming.js";
import type { ResourceDefinition, StrategyContext } from "../resource.js";

export const NOW = new Date("2026-01-02T03:04:05Z");
export const ctx: StrategyContext = { naming: namingFor(), now: NOW };

/** What the store does on create, minus storage: returns the object and the kind's field errors. */
export function create(def: ResourceDefinition, input: object, context: StrategyContext = ctx): { obj: ApiObject; errors: string[] } {
  const obj = structuredClone(input) as ApiObject;
  obj.metadata ??= {};
  obj.metadata.uid ??= "11111111-2222-3333-4444-555555555555";
  obj.metadata.creationTimestamp ??= "2026-01-02T03:00:00Z";
  def.defaults?.(obj, context);
  def.prepareForCreate?.(obj, context);
  return { obj, errors: messages(def.validate?.(obj, context) ?? []) };
}

/** What the store does on update: defaults → prepareForUpdate → validateUpdate. */
export function update(def: ResourceDefinition, next: ApiObject, old: ApiObject, context: StrategyContext = ctx): string[] {
  const obj = structuredClone(next);
  def.defaults?.(obj, context);
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
