// The schema language for built-in types: each type is data (fields with
// their upstream Protobuf field numbers, descriptions, list and patch
// semantics), written once and read by OpenAPI publication, unknown-field
// detection, strategic merge, defaulting and the Protobuf codec.
// Type names follow upstream's OpenAPI definition names
// (`io.k8s.api.core.v1.Pod`) so clients that key on them keep working.

export type Schema =
  | { readonly type: "string"; readonly format?: "byte" | "date-time" | "int-or-string"; readonly enum?: readonly string[] }
  | { readonly type: "integer"; readonly format: "int32" | "int64" }
  | { readonly type: "number"; readonly format: "double" }
  | { readonly type: "boolean" }
  /** A named object type (a TypeDef) or a well-known scalar-like type (Quantity, Time, IntOrString, ...). */
  | { readonly type: "ref"; readonly name: string }
  | {
      readonly type: "array";
      readonly items: Schema;
      /** x-kubernetes-list-type: atomic (replace whole), set (scalars), map (merge by listMapKeys). */
      readonly listType?: "atomic" | "set" | "map";
      readonly listMapKeys?: readonly string[];
    }
  | { readonly type: "map"; readonly values: Schema }
  /** Any JSON (RawExtension, JSON fields): kept as is, never checked for unknown fields. */
  | { readonly type: "any" };

export interface Field {
  readonly schema: Schema;
  /** Protobuf field number in upstream's generated.proto for this message. */
  readonly tag: number;
  readonly description: string;
  readonly required?: boolean;
  /** x-kubernetes-patch-strategy for strategic merge patch. */
  readonly patchStrategy?: "merge" | "retainKeys" | "merge,retainKeys" | "replace";
  /** x-kubernetes-patch-merge-key. */
  readonly patchMergeKey?: string;
  /** Default applied on create and update when the field is absent. */
  readonly default?: unknown;
  /**
   * Go's embedded structs: JSON flattens them, Protobuf keeps them as a
   * sub-message. Set, this field lives in Protobuf inside the message at this
   * field number of the enclosing type (e.g. ConfigMapVolumeSource.name sits in
   * LocalObjectReference at 1), and `tag` is its number within that message.
   */
  readonly embeddedIn?: number;
}

export interface TypeDef {
  /** Upstream's OpenAPI definition name, e.g. `io.k8s.api.core.v1.Container`. */
  readonly name: string;
  readonly description: string;
  readonly fields: Readonly<Record<string, Field>>;
}

// ---- builders: short to write, plain data underneath ----

export const s = {
  string: (options: { format?: "byte" | "date-time"; enum?: readonly string[] } = {}): Schema => ({ type: "string", ...options }),
  int32: (): Schema => ({ type: "integer", format: "int32" }),
  int64: (): Schema => ({ type: "integer", format: "int64" }),
  double: (): Schema => ({ type: "number", format: "double" }),
  bool: (): Schema => ({ type: "boolean" }),
  ref: (name: string): Schema => ({ type: "ref", name }),
  array: (items: Schema, options: { listType?: "atomic" | "set" | "map"; listMapKeys?: readonly string[] } = {}): Schema => ({
    type: "array",
    items,
    ...options,
  }),
  map: (values: Schema): Schema => ({ type: "map", values }),
  any: (): Schema => ({ type: "any" }),
  /** Well-known types, encoded specially on every wire (see WELL_KNOWN). */
  quantity: (): Schema => ({ type: "ref", name: WELL_KNOWN.quantity }),
  intOrString: (): Schema => ({ type: "ref", name: WELL_KNOWN.intOrString }),
  time: (): Schema => ({ type: "ref", name: WELL_KNOWN.time }),
  microTime: (): Schema => ({ type: "ref", name: WELL_KNOWN.microTime }),
  rawExtension: (): Schema => ({ type: "ref", name: WELL_KNOWN.rawExtension }),
};

/** Field declaration: `f(1, s.string(), "what it is", { required: true })`. */
export function f(tag: number, schema: Schema, description: string, options: Omit<Field, "schema" | "tag" | "description"> = {}): Field {
  return { schema, tag, description, ...options };
}

export function type(name: string, description: string, fields: Record<string, Field>): TypeDef {
  return { name, description, fields };
}

/**
 * Types that are strings (or numbers) in JSON but messages in Protobuf.
 * Their JSON shapes: Quantity "100m"; IntOrString 8080 or "http"; Time
 * "2026-01-02T03:04:05Z"; MicroTime with microseconds; RawExtension any object.
 */
export const WELL_KNOWN = {
  quantity: "io.k8s.apimachinery.pkg.api.resource.Quantity",
  intOrString: "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
  time: "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
  microTime: "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
  rawExtension: "io.k8s.apimachinery.pkg.runtime.RawExtension",
} as const;

const WELL_KNOWN_NAMES = new Set<string>(Object.values(WELL_KNOWN));

export function isWellKnown(name: string): boolean {
  return WELL_KNOWN_NAMES.has(name);
}

/** All type definitions by name; filled by each API group's schema module. */
export class SchemaRegistry {
  readonly #types = new Map<string, TypeDef>();
  #revision = 0;

  /** Bumped by replace(): walkers that cache what they resolved start over. */
  get revision(): number {
    return this.#revision;
  }

  /**
   * Types that change at run time (a custom resource's, from its definition):
   * drop `root`, its list type (`rootList`) and the types named under it
   * (`root.*`), then add `defs`.
   */
  replace(root: string, defs: readonly TypeDef[]): void {
    for (const name of [...this.#types.keys()]) if (name === root || name === `${root}List` || name.startsWith(`${root}.`)) this.#types.delete(name);
    for (const def of defs) this.#types.set(def.name, def);
    this.#revision++;
  }

  add(...defs: TypeDef[]): this {
    for (const def of defs) {
      if (this.#types.has(def.name)) throw new Error(`schema: type ${def.name} defined twice`);
      this.#types.set(def.name, def);
    }
    return this;
  }

  get(name: string): TypeDef | undefined {
    return this.#types.get(name);
  }

  mustGet(name: string): TypeDef {
    const def = this.#types.get(name);
    if (def === undefined) throw new Error(`schema: unknown type ${name}`);
    return def;
  }

  all(): IterableIterator<TypeDef> {
    return this.#types.values();
  }

  /** Every ref must resolve: call once after all groups registered (a test does). */
  checkRefs(): string[] {
    const missing: string[] = [];
    const visit = (schema: Schema, where: string) => {
      if (schema.type === "ref" && !isWellKnown(schema.name) && !this.#types.has(schema.name)) missing.push(`${where} → ${schema.name}`);
      if (schema.type === "array") visit(schema.items, where);
      if (schema.type === "map") visit(schema.values, where);
    };
    for (const def of this.#types.values()) for (const [name, field] of Object.entries(def.fields)) visit(field.schema, `${def.name}.${name}`);
    return missing;
  }
}
