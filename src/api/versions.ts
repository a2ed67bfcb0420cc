// A built-in kind served at several versions (upstream's autoscaling/v1 and
// v2 HorizontalPodAutoscaler): one declaration written for its storage
// version (the hub), plus, for each other served version (a spoke), its
// schema and the two converters between it and the hub. Hub and spoke: a
// spoke converts to another spoke through the hub, so each version needs
// converters to and from the hub only.
//
// The result is an ordinary declaration with a `conversion` (the one custom
// resources use: the store converts at the storage boundary, the handlers
// convert what they answer, for gets, lists, watches and writes alike) and
// `schemaFor` (Protobuf, field validation, strategic merge, OpenAPI per
// version). The store runs a write's strategy in the request's version; here
// every hook of the declaration (defaults, prepare, validation, warnings,
// subresources, the Table) is wrapped to run on the hub form, so a kind's rules
// are written once, for its hub, and validation errors name the hub's fields,
// as upstream's name its internal version's.

import type { ApiObject, FieldError } from "../machinery/index.js";
import { versionOf, type Conversion, type ResourceDefinition, type StrategyContext, type Subresource, type TableDefinition } from "./resource.js";

/** One served version besides the hub. */
export interface SpokeVersion {
  /** The schema name of the kind in this version (`io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler`). */
  readonly schema: string;
  /** This version's object (any apiVersion field) as the hub's; a new object, apiVersion not needed. */
  toHub(obj: ApiObject): ApiObject;
  /** The hub's object in this version; a new object, apiVersion not needed. */
  fromHub(obj: ApiObject): ApiObject;
  /** This version's own defaults, applied to a request's object before it is converted (v1 HPA: minReplicas). */
  defaults?(obj: ApiObject): void;
}

/**
 * `hub` (a declaration whose `versions` are [hubVersion]) also served at
 * each of `spokes`' versions, listed after the hub's so the hub stays the
 * preferred version and the storage version.
 */
export function servedAtVersions(hub: ResourceDefinition, spokes: Readonly<Record<string, SpokeVersion>>): ResourceDefinition {
  const hubVersion = hub.storageVersion ?? hub.versions[0]!;
  const prefix = hub.group === "" ? "" : `${hub.group}/`;
  const spokeOf = (obj: ApiObject): SpokeVersion | undefined => {
    const version = versionOf(obj.apiVersion);
    return version === undefined || version === hubVersion ? undefined : spokes[version];
  };

  /** Any served version → the hub (a new object; the hub's object itself when already there). */
  const toHub = (obj: ApiObject): ApiObject => {
    const spoke = spokeOf(obj);
    if (spoke === undefined) return obj;
    return { ...spoke.toHub(obj), apiVersion: `${prefix}${hubVersion}`, kind: hub.kind };
  };
  /** The hub → `version` (a new object). */
  const fromHub = (obj: ApiObject, version: string): ApiObject => {
    if (version === hubVersion) return { ...obj, apiVersion: `${prefix}${hubVersion}` };
    const spoke = spokes[version];
    if (spoke === undefined) throw new Error(`${hub.kind} is not served at version ${version}`);
    return { ...spoke.fromHub(obj), apiVersion: `${prefix}${version}`, kind: hub.kind };
  };
  // What each object served in a spoke version was converted from: its Table is computed on that hub object,
  // as upstream prints the stored object (a spoke's annotations do not keep the order of v2's metrics).
  const sources = new WeakMap<ApiObject, ApiObject>();
  const convert = (obj: ApiObject, version: string): ApiObject => {
    if (versionOf(obj.apiVersion) === version) return obj;
    const hubObj = toHub(obj);
    const out = fromHub(hubObj, version);
    if (version !== hubVersion) sources.set(out, hubObj);
    return out;
  };

  /** Run a mutating hook on the hub form of `obj`, then write the result back into `obj` in its own version. */
  const inHub = (obj: ApiObject, fn: (hubObj: ApiObject) => void): void => {
    const version = versionOf(obj.apiVersion);
    if (spokeOf(obj) === undefined) return fn(obj);
    const hubObj = toHub(obj);
    fn(hubObj);
    replaceContents(obj, fromHub(hubObj, version!));
  };
  const conversion: Conversion = {
    stable: true,
    convert: async (objects, version) => objects.map((o) => convert(o, version)),
  };

  const def: ResourceDefinition = {
    ...hub,
    versions: [...hub.versions, ...Object.keys(spokes)],
    storageVersion: hubVersion,
    schemaFor: (version: string) => spokes[version]?.schema ?? hub.schema,
    conversion,
    defaults(obj: ApiObject, ctx: StrategyContext) {
      spokeOf(obj)?.defaults?.(obj);
      inHub(obj, (h) => hub.defaults?.(h, ctx));
    },
    ...(hub.prepareForCreate ? { prepareForCreate: (obj: ApiObject, ctx: StrategyContext) => inHub(obj, (h) => hub.prepareForCreate!(h, ctx)) } : {}),
    ...(hub.prepareForUpdate ? { prepareForUpdate: (obj: ApiObject, old: ApiObject, ctx: StrategyContext) => inHub(obj, (h) => hub.prepareForUpdate!(h, toHub(old), ctx)) } : {}),
    ...(hub.prepareForDelete ? { prepareForDelete: (obj: ApiObject, ctx: StrategyContext) => inHub(obj, (h) => hub.prepareForDelete!(h, ctx)) } : {}),
    ...(hub.validate ? { validate: (obj: ApiObject, ctx: StrategyContext): FieldError[] => hub.validate!(toHub(obj), ctx) } : {}),
    ...(hub.validateUpdate ? { validateUpdate: (obj: ApiObject, old: ApiObject, ctx: StrategyContext): FieldError[] => hub.validateUpdate!(toHub(obj), toHub(old), ctx) } : {}),
    ...(hub.warnings ? { warnings: (obj: ApiObject) => hub.warnings!(toHub(obj)) } : {}),
    ...(hub.pendingFinalizers ? { pendingFinalizers: (obj: ApiObject) => hub.pendingFinalizers!(toHub(obj)) } : {}),
    ...(hub.table ? { table: hubTable(hub.table, (obj) => sources.get(obj) ?? toHub(obj)) } : {}),
    ...(hub.subresources ? { subresources: hub.subresources.map((s) => hubSubresource(s, toHub, fromHub)) } : {}),
  };
  return def;
}

/** A Table whose cells are computed from the hub form of any version's object (the object it was converted from, when known). */
function hubTable(table: TableDefinition<ApiObject>, toHub: (obj: ApiObject) => ApiObject): TableDefinition<ApiObject> {
  return { columns: table.columns, cells: (obj, now) => table.cells(toHub(obj), now) };
}

/** A subresource whose hooks run on the hub form; what they return comes back in the request's version. */
function hubSubresource(sub: Subresource, toHub: (obj: ApiObject) => ApiObject, fromHub: (obj: ApiObject, version: string) => ApiObject): Subresource {
  const back = (like: ApiObject, hubObj: ApiObject) => fromHub(hubObj, versionOf(like.apiVersion) ?? "");
  return {
    ...sub,
    ...(sub.prepareUpdate ? { prepareUpdate: (input: ApiObject, current: ApiObject) => back(current, sub.prepareUpdate!(toHub(input), toHub(current))) } : {}),
    ...(sub.prepareMainUpdate
      ? {
          prepareMainUpdate: (next: ApiObject, current: ApiObject) => {
            const hubNext = toHub(next);
            sub.prepareMainUpdate!(hubNext, toHub(current));
            replaceContents(next, back(next, hubNext));
          },
        }
      : {}),
    ...(sub.validate ? { validate: (obj: ApiObject, old: ApiObject, ctx: StrategyContext) => sub.validate!(toHub(obj), toHub(old), ctx) } : {}),
  };
}

/** Make `target` hold exactly `source`'s fields (hooks mutate in place). */
function replaceContents(target: ApiObject, source: ApiObject): void {
  for (const key of Object.keys(target)) delete (target as unknown as Record<string, unknown>)[key];
  Object.assign(target, source);
}
