// The set of served resources: every API group module's declarations and
// schemas, indexed by group/version/resource for routing and discovery.

import type { Naming } from "../machinery/naming.js";
import { schemaOf, type ApiGroupModule, type ResourceDefinition } from "../api/resource.js";
import { SchemaRegistry } from "../machinery/schema.js";

export interface GroupInfo {
  name: string;
  /** Served versions, preferred first. */
  versions: string[];
}

/** meta/v1 kinds every group version carries (Status with apiVersion v1, as upstream writes it). */
const META_KINDS = new Set(["Status", "DeleteOptions", "Table", "PartialObjectMetadata", "PartialObjectMetadataList"]);

export class ApiRegistry {
  readonly schemas = new SchemaRegistry();
  #resources: ResourceDefinition[];
  readonly #byPath = new Map<string, ResourceDefinition>();
  /** apiVersion → schema package of its kinds (`v1` → `io.k8s.api.core.v1`). */
  readonly #packages = new Map<string, string>();

  constructor(modules: readonly ApiGroupModule[], naming: Naming) {
    for (const m of modules) m.registerSchemas(this.schemas);
    this.#resources = modules.flatMap((m) => m.resources(naming));
    for (const def of this.#resources) {
      for (const version of def.versions) this.#byPath.set(`${def.group}/${version}/${def.resource}`, def);
      if (def.protobuf === false) continue;
      for (const version of def.versions) {
        const schema = schemaOf(def, version);
        this.#packages.set(def.group === "" ? version : `${def.group}/${version}`, schema.slice(0, schema.lastIndexOf(".")));
      }
    }
  }

  /** Every served resource, built-in first, then custom ones in the order they were added. */
  get resources(): readonly ResourceDefinition[] {
    return this.#resources;
  }

  /**
   * Serve a resource from now on (a custom resource: JSON only, no schema
   * package), or replace the declaration of one already added.
   */
  add(def: ResourceDefinition): void {
    const old = this.find(def.group, def.resource);
    if (old !== undefined) this.remove(old);
    this.#resources = [...this.#resources, def];
    for (const version of def.versions) this.#byPath.set(`${def.group}/${version}/${def.resource}`, def);
  }

  /** Stop serving a resource added with add(). */
  remove(def: { group: string; resource: string }): void {
    const old = this.find(def.group, def.resource);
    if (old === undefined) return;
    this.#resources = this.#resources.filter((d) => d !== old);
    for (const version of old.versions) {
      if (this.#byPath.get(`${old.group}/${version}/${old.resource}`) === old) this.#byPath.delete(`${old.group}/${version}/${old.resource}`);
    }
  }

  /**
   * The schema type of an apiVersion and kind, for Protobuf bodies: kinds in
   * the package of a served kind of that group/version (Pod, PodList, Binding,
   * ...), and the meta kinds (Status, DeleteOptions, Table, ...) in any version, as upstream registers them everywhere.
   */
  schemaTypeOf(apiVersion: string, kind: string): string | undefined {
    if (META_KINDS.has(kind)) return `io.k8s.apimachinery.pkg.apis.meta.v1.${kind}`;
    const pkg = this.#packages.get(apiVersion);
    const name = pkg === undefined ? undefined : `${pkg}.${kind}`;
    return name !== undefined && this.schemas.get(name) !== undefined ? name : undefined;
  }

  lookup(group: string, version: string, resource: string): ResourceDefinition | undefined {
    return this.#byPath.get(`${group}/${version}/${resource}`);
  }

  find(group: string, resource: string): ResourceDefinition | undefined {
    return this.#resources.find((d) => d.group === group && d.resource === resource);
  }

  /** Groups in a stable order: core first, then as declared. */
  groups(): GroupInfo[] {
    const out = new Map<string, string[]>();
    for (const def of this.#resources) {
      const versions = out.get(def.group) ?? [];
      for (const v of def.versions) if (!versions.includes(v)) versions.push(v);
      out.set(def.group, versions);
    }
    return [...out].map(([name, versions]) => ({ name, versions }));
  }

  resourcesIn(group: string, version: string): ResourceDefinition[] {
    return this.#resources.filter((d) => d.group === group && d.versions.includes(version));
  }
}
