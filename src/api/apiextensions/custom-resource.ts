// A custom kind as a declaration: the ResourceDefinition the API server
// serves for an established CustomResourceDefinition. Its schemas are data
// (each version's openAPIV3Schema): objects are pruned at decoding,
// defaulted and validated on every write by the schema of the version they
// are written in, and converted between versions (None: apiVersion only;
// Webhook: through the server's converter), then pruned and defaulted by the
// target version's schema, reads included; each version's printer columns
// (default Age); status and scale subresources when asked; selectable
// fields as field selectors; JSON only, no strategic merge.

import { ApiError, methodNotSupported, type ApiObject } from "../../machinery/index.js";
import { f, s, type Field, type Schema, type TypeDef } from "../../machinery/schema.js";
import { META_V1 } from "../meta/schemas.js";
import { defineResource, versionOf, type ResourceDefinition, type ScaleAccess, type Subresource, type TableColumn, type TableDefinition } from "../resource.js";
import { scale, status } from "../subresources/index.js";
import { humanDuration } from "../table-format.js";
import { evaluateRules, hasRules } from "./cel.js";
import { evaluate, parseJsonPath, setAt, type Step } from "./jsonpath.js";
import { applyDefaults, hasDefaults, isObject, LIST_MAP_KEYS, LIST_TYPE, MAP_TYPE, prune, validateValue } from "./json-schema.js";
import { statusEnabled } from "./validation.js";
import type { CustomResourceColumnDefinition, CustomResourceDefinition, CustomResourceDefinitionVersion, JSONSchemaProps } from "./types.js";

/** Served versions, most preferred first (upstream's kube-aware order: v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > others by name). */
export function servedVersions(crd: CustomResourceDefinition): string[] {
  return (crd.spec?.versions ?? []).filter((v) => v.served).map((v) => v.name!).sort(compareVersions);
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/** Negative when `a` is preferred over `b` (upstream's CompareKubeAwareVersionStrings, reversed for sorting). */
export function compareVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (ma === null || mb === null) return ma !== null ? -1 : mb !== null ? 1 : a < b ? -1 : a > b ? 1 : 0;
  const stability = (m: RegExpExecArray) => (m[2] === undefined ? 2 : m[2] === "beta" ? 1 : 0);
  if (stability(ma) !== stability(mb)) return stability(mb) - stability(ma);
  if (Number(ma[1]) !== Number(mb[1])) return Number(mb[1]) - Number(ma[1]);
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}

/** Upstream's deprecation warning of a version (deprecationWarning, else the default naming the best served version). */
function deprecationWarning(crd: CustomResourceDefinition, version: CustomResourceDefinitionVersion): string | undefined {
  if (!version.deprecated) return undefined;
  if (version.deprecationWarning !== undefined) return version.deprecationWarning;
  const { group } = crd.spec!;
  const kind = crd.status?.acceptedNames?.kind || crd.spec?.names?.kind;
  const better = (crd.spec?.versions ?? []).filter((v) => v.served && !v.deprecated && compareVersions(v.name!, version.name!) < 0).map((v) => v.name!).sort(compareVersions);
  return `${group}/${version.name} ${kind} is deprecated` + (better.length > 0 ? `; use ${group}/${better[0]} ${kind}` : "");
}

export interface CustomResourceOptions {
  /** The definition is terminating: creates are refused (405, as upstream). */
  readonly terminating: () => boolean;
  /**
   * Conversion strategy Webhook: the objects (all of one version) as
   * `apiVersion` (group/version), from the definition's webhook; throws an
   * ApiError with upstream's message when the webhook fails. Absent: such a
   * definition converts as None would (apiVersion only).
   */
  readonly webhookConvert?: (objects: readonly ApiObject[], apiVersion: string) => Promise<ApiObject[]>;
}

const AGE: CustomResourceColumnDefinition = {
  name: "Age",
  type: "date",
  description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
  jsonPath: ".metadata.creationTimestamp",
};

const ANYTHING: JSONSchemaProps = { type: "object", "x-kubernetes-preserve-unknown-fields": true };

/** One version's schema at work: validation (with its CEL rules), pruning, defaults. */
interface VersionSchema {
  readonly schema: JSONSchemaProps;
  readonly rules: boolean;
  readonly defaults: boolean;
}

/** The declaration of the kind `crd` defines (its accepted names), or undefined when no version is served. */
export function customResource(crd: CustomResourceDefinition, options: CustomResourceOptions): ResourceDefinition | undefined {
  const spec = crd.spec ?? {};
  const names = crd.status?.acceptedNames ?? spec.names ?? {};
  const versions = servedVersions(crd);
  if (versions.length === 0 || !names.plural || !names.kind) return undefined;
  const byName = new Map((spec.versions ?? []).map((v) => [v.name!, v]));
  const storage: CustomResourceDefinitionVersion | undefined = (spec.versions ?? []).find((v) => v.storage);
  if (storage === undefined) return undefined;
  // Each version validates, prunes and defaults by its own schema (upstream's per-version structural schemas).
  const schemas = new Map<string, VersionSchema>();
  for (const v of spec.versions ?? []) {
    const schema = v.schema?.openAPIV3Schema ?? ANYTHING;
    schemas.set(v.name!, { schema, rules: hasRules(schema), defaults: hasDefaults(schema) });
  }
  const storageSchema = schemas.get(storage.name!)!;
  const schemaFor = (version: string | undefined) => (version === undefined ? undefined : schemas.get(version)) ?? storageSchema;
  const group = spec.group!;
  const gr = { group, resource: names.plural };
  const typeName = (version: string) => `${group.split(".").reverse().join(".")}.${version}.${names.kind}`;
  // Subresources are per version (spec.versions[].subresources): each is served at the versions that ask for it.
  const served = (spec.versions ?? []).filter((v) => v.served);
  const subresources: Subresource[] = [];
  const statusAt = served.filter((v) => statusEnabled(v.subresources)).map((v) => v.name!);
  if (statusAt.length > 0) subresources.push({ ...status({ metadata: [] }), versions: statusAt });
  // Scale: one declaration per distinct set of paths (versions may name their replicas differently).
  const scales = new Map<string, { spec: NonNullable<NonNullable<CustomResourceDefinitionVersion["subresources"]>["scale"]>; versions: string[] }>();
  for (const v of served) {
    const s = v.subresources?.scale;
    if (!s?.specReplicasPath || !s.statusReplicasPath) continue;
    const key = JSON.stringify([s.specReplicasPath, s.statusReplicasPath, s.labelSelectorPath ?? ""]);
    scales.set(key, { spec: s, versions: [...(scales.get(key)?.versions ?? []), v.name!] });
  }
  for (const { spec: s, versions: at } of scales.values()) subresources.push({ ...scale(scaleAccess(s.specReplicasPath!, s.statusReplicasPath!, s.labelSelectorPath)), versions: at });
  // Each version's printer columns (the storage version's is the declaration's table; others answer through tableFor).
  const tables = new Map((spec.versions ?? []).map((v) => [v.name!, printerTable(v.additionalPrinterColumns)]));
  const selectableOf = (v: CustomResourceDefinitionVersion) => Object.fromEntries(
    (v.selectableFields ?? []).flatMap((f) => {
      const path = parseJsonPath(f.jsonPath ?? "");
      if (path === undefined) return [];
      // Stored objects carry the defaults of the schema they were written under; a default added since is
      // applied on read, so a field it fills is selected by its default too (upstream's cache holds defaulted objects).
      const read = (obj: ApiObject) => {
        const found = evaluate(path, obj)[0];
        if (found !== undefined || !storageSchema.defaults) return found;
        const copy = structuredClone(obj);
        applyDefaults(storageSchema.schema, copy);
        return evaluate(path, copy)[0];
      };
      return [[f.jsonPath!.slice(1), (obj: ApiObject) => selectorValue(read(obj))]];
    }),
  );
  // Each served version selects by its own selectableFields (evaluated on the stored object: exact for the None strategy).
  const selectableAt = new Map(served.map((v) => [v.name!, selectableOf(v)]));
  const selectable = selectableOf(storage);
  const validate = (obj: ApiObject, old?: ApiObject) => {
    const { schema, rules } = schemaFor(versionOf(obj.apiVersion));
    const errs = validateValue(schema, obj);
    return rules ? [...errs, ...evaluateRules(schema, obj, old)] : errs;
  };
  const webhook = spec.conversion?.strategy === "Webhook" ? options.webhookConvert : undefined;
  const conversion = {
    stable: webhook === undefined,
    async convert(objects: readonly ApiObject[], version: string): Promise<ApiObject[]> {
      const apiVersion = `${group}/${version}`;
      const target = schemaFor(version);
      const out = [...objects];
      const moving = out.flatMap((o, i) => (o.apiVersion === apiVersion ? [] : [i]));
      const fresh = new Set(moving);
      if (moving.length > 0) {
        // One review per source version, as upstream sends one list (objects of one version) per call.
        const bySource = new Map<string, number[]>();
        for (const i of moving) bySource.set(String(out[i]!.apiVersion), [...(bySource.get(String(out[i]!.apiVersion)) ?? []), i]);
        for (const indexes of bySource.values()) {
          const converted = webhook === undefined ? indexes.map((i) => ({ ...structuredClone(out[i]!), apiVersion })) : await webhook(indexes.map((i) => out[i]!), apiVersion);
          indexes.forEach((i, n) => {
            const obj = converted[n]!;
            // A converted object is pruned by the target version's schema, as upstream's schema-coercing converter does.
            prune(target.schema, obj);
            out[i] = obj;
          });
        }
      }
      if (target.defaults) {
        for (let i = 0; i < out.length; i++) {
          const obj = fresh.has(i) ? out[i]! : structuredClone(out[i]!);
          applyDefaults(target.schema, obj);
          out[i] = obj;
        }
      }
      return out;
    },
  };
  return defineResource<ApiObject>({
    group,
    versions,
    storageVersion: storage.name!,
    versionWarning: (version) => {
      const v = byName.get(version);
      return v === undefined ? undefined : deprecationWarning(crd, v);
    },
    resource: names.plural,
    singular: names.singular || names.kind.toLowerCase(),
    kind: names.kind,
    namespaced: spec.scope === "Namespaced",
    ...(names.shortNames?.length ? { shortNames: names.shortNames } : {}),
    ...(names.categories?.length ? { categories: names.categories } : {}),
    // Upstream's OpenAPI name for the kind (com.example.stable.v1.CronTab), per version.
    schema: typeName(storage.name!),
    schemaFor: typeName,
    protobuf: false,
    strategicMerge: false,
    subresources,
    pruneUnknown: (value, version) => prune(schemaFor(version ?? versionOf(value.apiVersion)).schema, value),
    openAPISchema: (version) => byName.get(version)?.schema?.openAPIV3Schema as Record<string, unknown> | undefined,
    defaults: (obj) => applyDefaults(schemaFor(versionOf(obj.apiVersion)).schema, obj),
    conversion,
    prepareForCreate(obj) {
      if (options.terminating()) {
        const err = methodNotSupported(gr, "create");
        throw new ApiError({ ...err.status, message: "create not allowed while custom resource definition is terminating" });
      }
      // With a status subresource at the request's version, a create cannot set status (upstream's strategy).
      if (statusAt.includes(versionOf(obj.apiVersion) ?? storage.name!)) delete (obj as Record<string, unknown>)["status"];
    },
    validate: (obj) => validate(obj),
    validateUpdate: (obj, old) => validate(obj, old),
    table: tables.get(storage.name!)!,
    tableFor: (version) => (version === storage.name ? undefined : tables.get(version)),
    ...(Object.keys(selectable).length > 0 ? { fieldSelectors: selectable } : {}),
    fieldSelectorsFor: (version) => selectableAt.get(version),
  });
}

/** The Table of a version's printer columns (upstream's default, Age, when it has none). */
function printerTable(printerColumns: CustomResourceColumnDefinition[] | undefined): TableDefinition<ApiObject> {
  const columns = (printerColumns?.length ? printerColumns : [AGE]).map((c) => ({ column: c, path: parseJsonPath(c.jsonPath ?? "") }));
  return {
    columns: [
      { name: "Name", type: "string", format: "name", description: "Name must be unique within a namespace.", priority: 0 },
      ...columns.map(({ column }): TableColumn => ({
        name: column.name!,
        type: column.type as TableColumn["type"],
        ...(column.format ? { format: column.format } : {}),
        description: column.description || `Custom resource definition column (in JSONPath format): ${column.jsonPath}`,
        priority: column.priority ?? 0,
      })),
    ],
    cells: (obj, now) => [obj.metadata.name ?? "", ...columns.map(({ column, path }) => cell(column, path === undefined ? [] : evaluate(path, obj), now))],
  };
}

/**
 * A column's cell as upstream's table convertor makes it: the first match
 * only; strings as printed, dates as ages ("5m"), numbers and booleans when
 * the value has the column's type, otherwise null.
 */
function cell(column: CustomResourceColumnDefinition, values: unknown[], now: Date): unknown {
  const v = values[0];
  if (v === undefined || v === null) return null;
  switch (column.type) {
    case "string":
      return typeof v === "string" ? v : JSON.stringify(v);
    case "integer":
      return typeof v === "number" ? Math.trunc(v) : null;
    case "number":
      return typeof v === "number" ? v : null;
    case "boolean":
      return typeof v === "boolean" ? v : null;
    case "date": {
      if (typeof v !== "string") return null;
      const at = Date.parse(v);
      return Number.isNaN(at) ? "<invalid>" : humanDuration(now.getTime() - at);
    }
    default:
      return null;
  }
}

function selectorValue(v: unknown): string {
  if (v === undefined || v === null) return "";
  return typeof v === "string" ? v : String(v);
}

function scaleAccess(specPath: string, statusPath: string, selectorPath: string | undefined): ScaleAccess<ApiObject> {
  const spec = parseJsonPath(specPath) ?? [];
  const statusSteps = parseJsonPath(statusPath) ?? [];
  const selector: Step[] | undefined = selectorPath ? parseJsonPath(selectorPath) : undefined;
  const num = (v: unknown) => (typeof v === "number" ? v : 0);
  return {
    specReplicas: (obj) => num(evaluate(spec, obj)[0]),
    setSpecReplicas: (obj, replicas) => setAt(spec, obj as unknown as Record<string, unknown>, replicas),
    statusReplicas: (obj) => num(evaluate(statusSteps, obj)[0]),
    selector: (obj) => {
      const v = selector === undefined ? undefined : evaluate(selector, obj)[0];
      return typeof v === "string" ? v : "";
    },
  };
}

/**
 * A version's schema (default: the storage version's) as types of the schema
 * language, named under that version's schema name
 * (`com.example.stable.v1.CronTab.spec`), for what walks objects by type:
 * managed fields and server-side apply (list types and map keys as the
 * version's schema gives them). Defaults stay in the JSON schema.
 */
export function customResourceTypes(def: ResourceDefinition, crd: CustomResourceDefinition, versionName = def.storageVersion ?? def.versions[0]!): TypeDef[] {
  const version = (crd.spec?.versions ?? []).find((v) => v.name === versionName);
  const root = version?.schema?.openAPIV3Schema ?? { type: "object", "x-kubernetes-preserve-unknown-fields": true };
  const out: TypeDef[] = [];
  const typeOf = (schema: JSONSchemaProps, name: string, isRoot: boolean): Schema => {
    if (!isObject(schema as unknown)) return s.any();
    if (schema["x-kubernetes-int-or-string"] === true) return s.intOrString();
    if (schema.type === "array") {
      const items = Array.isArray(schema.items) || schema.items === undefined ? s.any() : typeOf(schema.items, `${name}.items`, false);
      const listType = schema[LIST_TYPE] as "atomic" | "set" | "map" | undefined;
      return s.array(items, { listType: listType ?? "atomic", ...(schema[LIST_MAP_KEYS] ? { listMapKeys: schema[LIST_MAP_KEYS] } : {}) });
    }
    if (schema.type === "object" && schema[MAP_TYPE] !== "atomic") {
      if (isRoot || (schema.properties !== undefined && Object.keys(schema.properties).length > 0)) {
        const fields: Record<string, Field> = {};
        let tag = 1;
        const required = new Set(Array.isArray(schema.required) ? schema.required : []);
        for (const [key, prop] of Object.entries(schema.properties ?? {})) {
          if (isRoot && key === "metadata") continue;
          fields[key] = f(tag++, typeOf(prop, `${name}.${key}`, false), prop.description ?? "", required.has(key) ? { required: true } : {});
        }
        if (isRoot || schema["x-kubernetes-embedded-resource"] === true) {
          fields["apiVersion"] ??= f(tag++, s.string(), "APIVersion defines the versioned schema of this representation of an object.");
          fields["kind"] ??= f(tag++, s.string(), "Kind is a string value representing the REST resource this object represents.");
          fields["metadata"] = f(tag++, s.ref(`${META_V1}.ObjectMeta`), "Standard object's metadata.");
        }
        out.push({ name, description: schema.description ?? "", fields });
        return s.ref(name);
      }
      if (isObject(schema.additionalProperties as unknown)) return s.map(typeOf(schema.additionalProperties as JSONSchemaProps, `${name}.values`, false));
      return s.any();
    }
    switch (schema.type) {
      case "string": {
        const strings = Array.isArray(schema.enum) && schema.enum.every((e) => typeof e === "string") ? (schema.enum as string[]) : undefined;
        const format = schema.format === "date-time" || schema.format === "byte" ? schema.format : undefined;
        return s.string({ ...(strings ? { enum: strings } : {}), ...(format ? { format } : {}) });
      }
      case "integer":
        return s.int64();
      case "number":
        return s.double();
      case "boolean":
        return s.bool();
      default:
        return s.any();
    }
  };
  const name = def.schemaFor?.(versionName) ?? def.schema;
  typeOf({ ...root, type: "object" }, name, true);
  out.push({
    name: `${name}List`,
    description: `${def.kind}List is a list of ${def.kind}`,
    fields: {
      apiVersion: f(1, s.string(), "APIVersion defines the versioned schema of this representation of an object."),
      kind: f(2, s.string(), "Kind is a string value representing the REST resource this object represents."),
      metadata: f(3, s.ref(`${META_V1}.ListMeta`), "Standard list metadata."),
      items: f(4, s.array(s.ref(name)), `List of ${def.kind.toLowerCase()}s.`, { required: true }),
    },
  });
  return out;
}
