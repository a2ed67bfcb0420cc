// A resource type is a declaration, not a code path (STYLE.md): names,
// scope, schema, served versions, subresources and a strategy. The generic
// registry store runs the strategy hooks in one fixed order, for every
// resource alike:
//   create: defaults → prepareForCreate → validate (generic metadata, then the kind's) → warnings
//   update: defaults → prepareForUpdate → validateUpdate (generic, then the kind's) → warnings
// Each API group module (src/api/<group>/) exports `resources(naming)`.

import type { ApiObject, FieldError } from "../machinery/index.js";
import type { Naming } from "../machinery/naming.js";
import type { SchemaRegistry } from "../machinery/schema.js";
import type { AdmissionOptions } from "./admission.js";

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection";
export const ALL_VERBS: readonly Verb[] = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

export interface StrategyContext {
  readonly naming: Naming;
  /** The request's time, so one request stamps one time everywhere. */
  readonly now: Date;
}

/** One column of the kind's Table (seed 000, "Table representation"). */
export interface TableColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  format?: string;
  description: string;
  /** 0: shown by default; 1+: shown with `-o wide`. */
  priority: number;
}

export interface TableDefinition<T> {
  columns: readonly TableColumn[];
  /** One cell per column, in order; `now` renders ages. */
  cells(obj: T, now: Date): unknown[];
}

/** Where the autoscaling/v1 Scale subresource reads and writes (deployments, replicasets, statefulsets). */
export interface ScaleAccess<T> {
  specReplicas(obj: T): number;
  setSpecReplicas(obj: T, replicas: number): void;
  statusReplicas(obj: T): number;
  /** The label selector as a string (Scale.status.selector). */
  selector(obj: T): string;
}

/** What a request on a subresource can do (upstream's verbs; DELETE reaches only a proxy subresource, never the object). */
export type SubresourceVerb = "get" | "update" | "patch" | "create" | "delete";

/**
 * A subresource as a declaration (seed 000, "Endpoints": sub-resources): one
 * file each in ./subresources/, instantiated by a kind with its parameters
 * and listed in its `subresources`. Routing, discovery, OpenAPI, managed
 * fields and the registry store's update pipeline read it; a subresource
 * that is more than a get/update/patch of its parent (scale, binding, log,
 * exec) also has its handler in the API server (src/apiserver/handlers/subresources/).
 */
export interface Subresource<T extends ApiObject = ApiObject> {
  /** The URL segment (`pods/NAME/status` → "status"); admission sees it as the request's subresource. */
  readonly name: string;
  /** The versions it is served at (a custom kind's per-version subresources); absent: every version. */
  readonly versions?: readonly string[];
  /** The verbs served, as discovery lists them; any other method is a 405. */
  readonly verbs: readonly SubresourceVerb[];
  /** The kind discovery names for its bodies when it is not the parent's (Scale, Binding, PodExecOptions). */
  readonly responseKind?: { readonly group: string; readonly version: string; readonly kind: string };
  /** managedFields entries of writes here carry this subresource's name (status, scale, ephemeralcontainers). */
  readonly recordsManager?: boolean;
  /**
   * Top-level fields no manager owns after a write (upstream's ResetFieldsStrategy):
   * `here` on writes through this subresource, `main` on the main resource.
   */
  readonly resetFields?: { readonly here: readonly string[]; readonly main: readonly string[] };
  /** Served only as an HTTP/1.1 Upgrade (exec, attach); a plain request is a 400. */
  readonly connect?: boolean;
  /** Carried to a backend with the rest of the path (`nodes/NAME/proxy/PATH`): every method, upgrades too. */
  readonly proxy?: boolean;
  /**
   * An update (PUT, PATCH, apply) through this subresource: the object to
   * write, from the client's `input` and a private copy of `current`.
   * Without it the input is written as it is (binding: its handler built it).
   */
  prepareUpdate?(input: T, current: T): T;
  /** An update of the main resource: keep what only this subresource may change (status: .status stays as stored). */
  prepareMainUpdate?(next: T, current: T): void;
  /** The kind's rule for updates through this subresource, in place of its validateUpdate (which runs when this is absent). */
  validate?(obj: T, old: T, ctx: StrategyContext): FieldError[];
}

export interface ResourceDefinition<T extends ApiObject = ApiObject> {
  /** API group ("" for core), with the naming table's suffix already applied ("coordination.orch.io"). */
  readonly group: string;
  /** Served versions; the first is the preferred and (unless storageVersion says otherwise) the storage version. All share one storage key space. */
  readonly versions: readonly string[];
  /** The version objects are stored as, when it is not versions[0] (custom resources: it may even be unserved). */
  readonly storageVersion?: string;
  /** A warning for every request through `version` (a custom resource's deprecated versions). */
  versionWarning?(version: string): string | undefined;
  /** Plural, lower case: the URL segment ("pods"). */
  readonly resource: string;
  readonly singular: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly shortNames?: readonly string[];
  /** e.g. ["all"] so `kubectl get all` includes it. */
  readonly categories?: readonly string[];
  /**
   * Served from another resource's storage (events.<suffix>/v1 Event from core
   * events): the stored objects are `group/resource`'s, converted to this kind
   * as they are read and back as they are written. Its own watch cache.
   */
  readonly storedAs?: StoredAs;
  /** Verbs on the main resource; default ALL_VERBS. */
  readonly verbs?: readonly Verb[];
  /** OpenAPI definition name of the kind, e.g. `io.k8s.api.core.v1.Pod` (the list type is derived). */
  readonly schema: string;
  /** Which object names are valid (default "subdomain": DNS-1123 subdomain; services use "dns1035-label"). */
  readonly nameRule?: "subdomain" | "label" | "dns1035-label" | "path-segment" | "ip-address";
  /**
   * Whether the kind has a Protobuf form (seed 000, "Media types" 2): built-in
   * kinds do (default); custom resources and aggregated kinds declare false,
   * and clients listing Protobuf then JSON get JSON.
   */
  readonly protobuf?: boolean;
  /**
   * Strategic merge patches (default true: built-in kinds, merge keys from
   * their schemas); custom resources declare false and get a 415, as upstream.
   */
  readonly strategicMerge?: boolean;
  /** false: the server leaves metadata.generation unset (upstream's kinds without generation tracking: events); default: 1 on create, bumped on changes outside metadata and status. */
  readonly generation?: boolean;
  /** Upstream's AllowCreateOnUpdate: a PUT to a missing object creates it. */
  readonly allowCreateOnUpdate?: boolean;

  /**
   * The kind's subresources (status, scale, binding, ...), each a declaration
   * from ./subresources/ instantiated with the kind's parameters; discovery
   * lists them in this order.
   */
  readonly subresources?: readonly Subresource<T>[];

  // ---- strategy, in the order the store calls it ----
  /** Fill defaults (the schema's `default` values are applied generically first). */
  defaults?(obj: T, ctx: StrategyContext): void;
  /** Reset what clients may not set on create (e.g. status). */
  prepareForCreate?(obj: T, ctx: StrategyContext): void;
  /** Carry over what clients may not change on update. */
  prepareForUpdate?(obj: T, old: T, ctx: StrategyContext): void;
  /** The kind's own rules on create; metadata (names, labels, annotations) is checked generically. */
  validate?(obj: T, ctx: StrategyContext): FieldError[];
  /** The kind's own rules on update, immutable fields included. */
  validateUpdate?(obj: T, old: T, ctx: StrategyContext): FieldError[];
  /** Non-fatal advice returned as `Warning` headers. */
  warnings?(obj: T): string[];
  /**
   * The kind's own admission plugins, run after the server's (mutating ones
   * after the server's mutating ones, validating after validating), on this
   * resource only (the contract: ./admission.ts; the chain: src/apiserver/admission).
   */
  readonly admission?: AdmissionOptions;

  /** Upstream's columns for `kubectl get`; default Name and Created At. */
  readonly table?: TableDefinition<T>;
  /** Custom resources: the Table of a request through `version` when it differs from `table` (each version's own printer columns). */
  tableFor?(version: string): TableDefinition<T> | undefined;
  /**
   * Unknown-field detection for a kind without a registered schema (custom
   * resources: their schema is data): drop the fields it does not know, in
   * place, and name them (field validation then ignores, warns or refuses).
   */
  pruneUnknown?(value: Record<string, unknown>, version?: string): string[];
  /**
   * Custom resources: objects in one version as another (the definition's
   * conversion: None changes apiVersion only, Webhook asks its webhook), with
   * the target version's defaults applied (upstream defaults what it reads
   * from storage too). With it, the store runs each write in the request's
   * version (defaults, admission, validation by that version's schema) and
   * converts at the storage boundary; handlers convert what they answer.
   */
  readonly conversion?: Conversion;
  /**
   * Custom resources: the OpenAPI v3 schema a served version declares, as the
   * definition gives it (undefined: none, anything goes). When present, the
   * OpenAPI documents publish each version under its own name the way
   * upstream's apiextensions server does.
   */
  openAPISchema?(version: string): Record<string, unknown> | undefined;
  /** Kinds with a type per version (custom resources, built-in kinds of ./versions.ts): the schema-language type name of a served version (`schema` is the storage version's). Read through schemaOf(). */
  schemaFor?(version: string): string;

  /** Field selectors besides metadata.name and metadata.namespace (which every resource has). */
  readonly fieldSelectors?: Readonly<Record<string, (obj: T) => string>>;
  /** A custom kind's field selectors at a served version (its selectableFields) when they differ from `fieldSelectors`. */
  fieldSelectorsFor?(version: string): Readonly<Record<string, (obj: T) => string>> | undefined;
  /**
   * Graceful deletion (pods only, as upstream): the grace period a delete gets,
   * given what the request asked for. Kinds without it are deleted at once,
   * whatever the request says.
   */
  gracePeriodSeconds?(obj: T, requested: number | undefined): number;
  /**
   * What a delete that names no propagation policy (nor orphanDependents) does to dependents; Background when
   * absent. Upstream keeps Orphan for v1 ReplicationControllers, for compatibility with clients older than
   * garbage collection (kubectl always names a policy).
   */
  readonly defaultPropagationPolicy?: "Orphan";
  /** Holds on deletion besides metadata.finalizers (namespaces: spec.finalizers); the object stays while any remain. */
  pendingFinalizers?(obj: T): readonly string[];
  /** Called when an object is first marked for deletion (namespaces: status.phase = Terminating). */
  prepareForDelete?(obj: T, ctx: StrategyContext): void;
}

/** A custom resource's conversion between its versions (ResourceDefinition.conversion). */
export interface Conversion {
  /** `objects` (any versions) in `version` (a version name), same order; objects already in it and without defaults to apply come back as they were. Throws an ApiError. */
  convert(objects: readonly ApiObject[], version: string): Promise<ApiObject[]>;
  /** The same input always converts the same way (no webhook): results may be memoized per stored revision. */
  readonly stable: boolean;
}

/** Another resource's storage under a field mapping (ResourceDefinition.storedAs). */
export interface StoredAs {
  readonly group: string;
  readonly resource: string;
  /** A stored object (the other kind, resourceVersion set) as this kind; a new object. */
  fromStored(stored: ApiObject): ApiObject;
  /** This kind's object as the other kind, for storage; a new object. */
  toStored(obj: ApiObject): ApiObject;
}

/** What each API group module exports. */
export interface ApiGroupModule {
  /** Register the group's types (and the meta types they use, once). */
  registerSchemas(registry: SchemaRegistry): void;
  resources(naming: Naming): ResourceDefinition[];
}

/** The schema name of `def`'s kind in `version` (absent, or a version without a type of its own: the declared schema). */
export function schemaOf(def: ResourceDefinition, version?: string): string {
  return (version !== undefined ? def.schemaFor?.(version) : undefined) ?? def.schema;
}

/** The version part of a grouped apiVersion (`autoscaling/v1` → `v1`); undefined for anything else (the core group's `v1` included: its kinds have one type each). */
export function versionOf(apiVersion: unknown): string | undefined {
  return typeof apiVersion === "string" && apiVersion.includes("/") ? apiVersion.slice(apiVersion.indexOf("/") + 1) : undefined;
}

/** The declaration of `def`'s subresource `name`, if it has one (at `version`, when given). */
export function findSubresource(def: ResourceDefinition, name: string, version?: string): Subresource | undefined {
  return subresourcesAt(def, version).find((s) => s.name === name);
}

/** `def`'s subresources served at `version` (every one when no version is given). */
export function subresourcesAt(def: ResourceDefinition, version: string | undefined): readonly Subresource[] {
  const all = def.subresources ?? [];
  return version === undefined ? all : all.filter((s) => s.versions === undefined || s.versions.includes(version));
}

/** Identity helper that keeps the kind's type through the declaration. */
export function defineResource<T extends ApiObject>(def: ResourceDefinition<T>): ResourceDefinition {
  return def as unknown as ResourceDefinition;
}
