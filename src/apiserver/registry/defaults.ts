// Schema defaults: a field declared with `default` gets that value when
// absent, at every depth (through arrays and maps of typed objects). Which
// fields of which types carry defaults is worked out once per type.

import { isWellKnown, type Schema, type SchemaRegistry } from "../../machinery/schema.js";
import { copyJson } from "../../machinery/patch/json-value.js";

interface TypePlan {
  /** Fields to fill: [name, default]. */
  readonly defaults: readonly [string, unknown][];
  /** Fields whose values contain typed objects that may need defaults: [name, schema]. */
  readonly nested: readonly [string, Schema][];
}

export class SchemaDefaulter {
  readonly #registry: SchemaRegistry;
  readonly #plans = new Map<string, TypePlan | null>();

  constructor(registry: SchemaRegistry) {
    this.#registry = registry;
  }

  /** Fill defaults into `value`, an instance of type `typeName`; mutates in place. */
  apply(typeName: string, value: unknown): void {
    const plan = this.#plan(typeName);
    if (plan === null || typeof value !== "object" || value === null || Array.isArray(value)) return;
    const obj = value as Record<string, unknown>;
    for (const [name, def] of plan.defaults) if (obj[name] === undefined) obj[name] = copyJson(def);
    for (const [name, schema] of plan.nested) if (obj[name] !== undefined) this.#applySchema(schema, obj[name]);
  }

  #applySchema(schema: Schema, value: unknown): void {
    if (schema.type === "ref") this.apply(schema.name, value);
    else if (schema.type === "array" && Array.isArray(value)) for (const item of value) this.#applySchema(schema.items, item);
    else if (schema.type === "map" && typeof value === "object" && value !== null) {
      for (const item of Object.values(value)) this.#applySchema(schema.values, item);
    }
  }

  /** null: nothing under this type ever needs a default. */
  #plan(typeName: string): TypePlan | null {
    if (this.#plans.has(typeName)) return this.#plans.get(typeName)!;
    this.#plans.set(typeName, null); // cycles (e.g. JSON schemas) resolve to "nothing" while planning
    const def = isWellKnown(typeName) ? undefined : this.#registry.get(typeName);
    if (def === undefined) return null;
    const defaults: [string, unknown][] = [];
    const nested: [string, Schema][] = [];
    for (const [name, field] of Object.entries(def.fields)) {
      if (field.default !== undefined) defaults.push([name, field.default]);
      if (this.#mayNeedDefaults(field.schema)) nested.push([name, field.schema]);
    }
    const plan = defaults.length === 0 && nested.length === 0 ? null : { defaults, nested };
    this.#plans.set(typeName, plan);
    return plan;
  }

  #mayNeedDefaults(schema: Schema): boolean {
    if (schema.type === "ref") return this.#plan(schema.name) !== null;
    if (schema.type === "array") return this.#mayNeedDefaults(schema.items);
    if (schema.type === "map") return this.#mayNeedDefaults(schema.values);
    return false;
  }
}
