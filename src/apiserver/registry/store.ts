// The generic registry store: one implementation of get, list, create,
// update, delete and deletecollection for every resource, driven by its
// declaration (src/api/resource.ts). Storage is one door per resource
// (storage/cacher/cached-storage.ts), which decides whether the watch cache or
// the backend answers a read; every update goes through its guaranteedUpdate.
// This file maps the door's errors to API statuses. Seed 000: "Resource version semantics",
// "Chunked lists", "States and transitions" (two-phase deletion), "Dry run".
//
// The write pipeline, in this one order for every resource (upstream's):
//   (an object a mutating webhook patched is pruned and defaulted again, as upstream decodes it)
//   create: defaults → mutating admission → prepareForCreate → managed fields
//           → validate → validating admission → storage (skipped on dry run)
//   update: the new object (PUT body, patch or apply over the current one) →
//           defaults → mutating admission → prepareForUpdate → managed fields
//           → validateUpdate → validating admission → no-op check → storage
//   delete: preconditions → validating admission → mark or remove
// A no-op update (semantically equal to the stored object) keeps its
// resourceVersion and emits no watch event.

import { schemaOf, versionOf, type ResourceDefinition, type StrategyContext } from "../../api/resource.js";
import type { Naming } from "../../machinery/naming.js";
import {
  alreadyExists,
  conflict,
  continueExpired,
  storeReadError,
  decideGet,
  decideList,
  generateName,
  generateNameConflict,
  field,
  invalid,
  isApiError,
  listExpired,
  newUid,
  notFound,
  serviceUnavailable,
  formatTimestamp,
  type ApiObject,
  type FieldError,
  type GroupResource,
} from "../../machinery/index.js";
import { DELETE, isStorageError, type KeyValue, type UpdateDecision } from "../../storage/index.js";
import { cachedRecord, decodeRecord, type Cached, type CachedStorage, type CorruptKey } from "../../storage/cacher/index.js";
import { decodeObject, encodeObject, encodeStoredForm, isJsonData, storedForm } from "./codec.js";
import { listReadAt, pageList, type ListParams, type ListResult } from "./list.js";
import { checkCorruptDeleteOptions, checkPreconditions, CORRUPT_DELETE_OPTION, deletePolicy, markForDeletion, type DeleteOptions, type DeleteResult } from "./deletion.js";
import { apiErrorFrom } from "./storage-errors.js";
import { omitEmptyMetadata, sameObject, specChanged } from "./object-rules.js";
import { compilePredicate } from "./predicate.js";
import { validateObjectMeta, validateObjectMetaUpdate } from "./metadata-validation.js";
import type { SchemaDefaulter } from "./defaults.js";
import { AdmissionChain, type AdmissionOperation, type AdmissionRequest } from "../admission/index.js";
import { subresourcesAt, type Subresource } from "../../api/resource.js";
import { copyJson } from "../../machinery/patch/json-value.js";

/** Upstream's RetryGenerateName: up to 8 attempts in all before the 409. */
const GENERATE_NAME_ATTEMPTS = 8;

export type { ListParams, ListResult, DeleteOptions, DeleteResult };

export interface RequestOptions {
  /** Run every stage but persisting (seed 000, "Dry run"). */
  dryRun?: boolean;
  now?: Date;
  /**
   * Records the write in metadata.managedFields (registry/field-manager.ts):
   * given the stored object (undefined on create) and the prepared new one,
   * returns the new one with its managedFields. Server-side apply sets them
   * itself and passes none.
   */
  manageFields?: (live: ApiObject | undefined, next: ApiObject, now: Date) => ApiObject;
  /** The request as admission plugins see it (user, warnings, audit annotations). */
  admission?: AdmissionRequest;
  /**
   * The request's version, for a kind with a conversion (custom resources):
   * the write runs in it (defaults, admission, validation) and is converted
   * to the storage version only to be stored. Ignored for other kinds.
   */
  version?: string;
}

/** Hooks the store needs from the rest of the server. */
export interface StoreDependencies {
  /** The resource's one door to storage: the backend behind its watch cache. */
  storage: CachedStorage<ApiObject>;
  naming: Naming;
  defaulter: SchemaDefaulter;
  /** Mutating and validating admission plugins (NamespaceLifecycle among them); none when absent. */
  admission?: AdmissionChain;
  /** ShardedListAndWatch. */
  sharding: boolean;
  /** AllowUnsafeMalformedObjectDeletion: lists name every corrupt key, and the unsafe delete option is honoured. */
  unsafeDeletion?: boolean;
  /** A name from a generateName prefix; random by default (a seeded one makes clashes reproducible). */
  generateName?: (prefix: string) => string;
}

export class RegistryStore {
  readonly def: ResourceDefinition;
  readonly groupResource: GroupResource;
  /** `/registry/<group or core>/<resource>/`: every version of the resource shares it. */
  readonly prefix: string;
  readonly #deps: StoreDependencies;
  readonly #admission: AdmissionChain;
  readonly #storageVersion: string;

  constructor(def: ResourceDefinition, deps: StoreDependencies) {
    this.def = def;
    this.groupResource = { group: def.group, resource: def.resource };
    this.prefix = storagePrefix(def);
    this.#deps = deps;
    const storage = def.storageVersion ?? def.versions[0]!;
    this.#storageVersion = def.group === "" ? storage : `${def.group}/${storage}`;
    // The server's plugins, then the kind's own (its declaration plugs in here).
    this.#admission = (deps.admission ?? new AdmissionChain()).with(def.admission ?? {});
  }

  readonly #retired = new Set<() => void>();

  /** Call `fn` when the resource stops being served (a custom resource's definition is gone); returns the unsubscribe. */
  onRetire(fn: () => void): () => void {
    this.#retired.add(fn);
    return () => this.#retired.delete(fn);
  }

  /** The resource is no longer served: its open watches end. */
  retire(): void {
    for (const fn of [...this.#retired]) fn();
    this.#retired.clear();
  }

  /** AllowUnsafeMalformedObjectDeletion is on: deleteCorrupt may be used. */
  get unsafeDeletion(): boolean {
    return this.#deps.unsafeDeletion === true;
  }

  /** The resource's storage door (the server starts, compacts and stops its cache). */
  get cacher(): CachedStorage<ApiObject> {
    return this.#deps.storage;
  }

  /** Key prefix of one namespace (or of everything, for cluster-scoped resources and all-namespace reads). */
  prefixFor(namespace: string | undefined): string {
    return this.def.namespaced && namespace ? `${this.prefix}${namespace}/` : this.prefix;
  }

  keyFor(namespace: string | undefined, name: string): string {
    return this.def.namespaced ? `${this.prefix}${namespace ?? ""}/${name}` : `${this.prefix}${name}`;
  }

  // ---- reads ----

  async get(namespace: string | undefined, name: string, params: { resourceVersion?: string | undefined } = {}): Promise<Cached<ApiObject>> {
    const key = this.keyFor(namespace, name);
    const found = await this.#storage((s) => s.get(key, decideGet(params)), name);
    if (found === undefined) throw notFound(this.groupResource, name);
    return found;
  }

  /** Seed 000 "Resource version semantics" (list table) and "Chunked lists": the door reads, this pages. */
  async list(namespace: string | undefined, params: ListParams): Promise<ListResult> {
    const predicate = compilePredicate(this.def, params, { sharding: this.#deps.sharding });
    const prefix = this.prefixFor(namespace);
    const limit = params.limit !== undefined && params.limit > 0 ? params.limit : 0;
    const mode = decideList(params, { metaGroup: this.#deps.naming.metaGroup });
    const { at, startKey } = listReadAt(mode, this.prefix, prefix);
    const listed = await this.#deps.storage.list(prefix, at).catch((err: unknown) => {
      if (isStorageError(err, "Compacted")) throw mode.mode === "Continuation" ? continueExpired() : listExpired();
      if (mode.mode === "MostRecent" && isStorageError(err, "FutureRevision")) {
        throw serviceUnavailable("the watch cache did not catch up with storage in time; retry");
      }
      throw this.#apiError(err, "");
    });
    this.#refuseCorrupt(prefix, listed.corrupt);
    return pageList(listed.items, { predicate, limit, startKey, revision: listed.revision, resourcePrefix: this.prefix });
  }

  /**
   * A list that meets undecodable values fails rather than leave them out:
   * with AllowUnsafeMalformedObjectDeletion the error names every such key (so
   * they can be deleted), without it the first error stands, as upstream.
   */
  #refuseCorrupt(prefix: string, corrupt: readonly CorruptKey[]): void {
    if (corrupt.length === 0) return;
    throw this.#deps.unsafeDeletion ? storeReadError(this.groupResource, prefix, corrupt) : corrupt[0]!.error;
  }

  // ---- writes ----

  async create(namespace: string | undefined, input: ApiObject, options: RequestOptions = {}): Promise<Cached<ApiObject>> {
    const generated = !input.metadata?.name && !!input.metadata?.generateName;
    const nameFrom = this.#deps.generateName ?? generateName;
    for (let attempt = 1; ; attempt++) {
      // A generated name is chosen first: strategies may use it (a Job's labels carry its name).
      const obj = await this.#prepareCreate(namespace, input, generated ? nameFrom(input.metadata.generateName!) : input.metadata?.name, options);
      const name = obj.metadata.name!;
      const key = this.keyFor(namespace, name);
      const stored = this.#toStored(await this.#toStorageVersion(obj, name));
      const form = storedForm(stored);
      const bytes = encodeStoredForm(form, name);
      try {
        if (options.dryRun) {
          if ((await this.#storage((s) => s.getStored(key), name)) !== undefined) throw alreadyExists(this.groupResource, name);
          return cachedRecord({ key, object: obj, revision: 0 });
        }
        // The object just encoded is what the bytes decode to (no conversion on the way, plain
        // JSON data): the door keeps it as the record instead of decoding the bytes again.
        const made = stored === obj && this.def.storedAs === undefined && isJsonData(form) ? form : undefined;
        return await this.#storage((s) => s.create(key, bytes, made), name);
      } catch (err) {
        if (!generated || !isApiError(err, "AlreadyExists")) throw err;
        if (attempt < GENERATE_NAME_ATTEMPTS) continue;
        // Every attempt clashed: upstream's CheckGeneratedNameError, retry after a second.
        throw generateNameConflict(this.groupResource, name, 1);
      }
    }
  }

  /** The create pipeline up to storage (see the header): server-set metadata first. */
  async #prepareCreate(namespace: string | undefined, input: ApiObject, name: string | undefined, options: RequestOptions): Promise<ApiObject> {
    const ctx = this.#context(options);
    const obj = copyJson(input);
    const meta = (obj.metadata ??= {});
    if (name) meta.name = name;
    if (this.def.namespaced) meta.namespace = namespace;
    else delete meta.namespace;
    for (const field of ["resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"] as const) delete (meta as Record<string, unknown>)[field];
    meta.uid = newUid();
    meta.creationTimestamp = formatTimestamp(ctx.now);
    if (this.def.generation === false) delete meta.generation;
    else meta.generation = 1;
    obj.apiVersion = this.#apiVersion(options);
    obj.kind = this.def.kind;
    this.#defaults(obj, ctx);
    omitEmptyMetadata(meta);
    await this.#admit("CREATE", obj, undefined, undefined, options);
    this.def.prepareForCreate?.(obj, ctx);
    const managed = options.manageFields?.(undefined, obj, ctx.now) ?? obj;
    this.#validate(managed, [...validateObjectMeta(this.def, managed), ...(this.def.validate?.(managed, ctx) ?? [])]);
    await this.#admissionValidate("CREATE", managed, undefined, undefined, options);
    return managed;
  }

  /**
   * PUT, through `subresource` when given (its declaration decides what
   * moves, src/api/subresources). A stale
   * metadata.resourceVersion is a 409; a missing object is created where the
   * declaration allows create-on-update.
   */
  async update(
    namespace: string | undefined,
    name: string,
    input: ApiObject,
    options: RequestOptions & { subresource?: Subresource } = {},
  ): Promise<{ object: Cached<ApiObject>; created: boolean }> {
    const key = this.keyFor(namespace, name);
    const wantRv = input.metadata?.resourceVersion;
    let created = false;
    const object = await this.#readModifyWrite(key, name, options, (current) => {
      if (current === undefined) {
        if (!this.def.allowCreateOnUpdate || options.subresource !== undefined) throw notFound(this.groupResource, name);
        created = true;
        return "create";
      }
      if (wantRv !== undefined && wantRv !== "" && wantRv !== current.metadata.resourceVersion) throw conflict(this.groupResource, name);
      return copyJson(input);
    }, options.subresource);
    if (created) return { object: await this.create(namespace, input, options), created: true };
    return { object: object!, created: false };
  }

  /** A read-modify-write of one object (PATCH, scale, binding, ...): `mutate` gets a private copy of the current object. */
  async modify(
    namespace: string | undefined,
    name: string,
    mutate: (current: ApiObject) => ApiObject,
    options: RequestOptions & { subresource?: Subresource } = {},
  ): Promise<Cached<ApiObject>> {
    const key = this.keyFor(namespace, name);
    const out = await this.#readModifyWrite(key, name, options, (current) => {
      if (current === undefined) throw notFound(this.groupResource, name);
      return mutate(copyJson(current));
    }, options.subresource);
    return out!;
  }

  /**
   * The one update path: decide the new object from the current one, run the
   * strategy (defaults → prepareForUpdate → validateUpdate), keep what clients
   * may not change, bump generation on spec changes, skip no-ops (no new
   * resourceVersion, no event), and delete once the last finalizer of a
   * terminating object is gone.
   */
  async #readModifyWrite(
    key: string,
    name: string,
    options: RequestOptions,
    decide: (current: ApiObject | undefined) => ApiObject | "create",
    subresource: Subresource | undefined,
  ): Promise<Cached<ApiObject> | undefined> {
    const ctx = this.#context(options);
    let result: Cached<ApiObject> | undefined;
    const tryUpdate = async (kv: KeyValue | undefined): Promise<UpdateDecision> => {
      const current = kv === undefined ? undefined : await this.#inVersion(this.decode(kv), options, name);
      const decided = decide(current);
      if (decided === "create" || current === undefined) return undefined;
      const next = await this.#prepareUpdate(decided, current, ctx, subresource, options);
      const meta = next.metadata;
      if (meta.deletionTimestamp && !this.#held(next) && (meta.deletionGracePeriodSeconds ?? 0) === 0) {
        // The answer is the object as the write left it (finalizers gone), as upstream returns it.
        next.metadata.resourceVersion = current.metadata.resourceVersion;
        result = cachedRecord({ key, object: next, revision: 0 });
        return DELETE;
      }
      const bytes = encodeObject(this.#toStored(await this.#toStorageVersion(next, name)), name);
      // Semantic, not byte, equality: a client's key order must not make a no-op a write.
      if (sameObject(next, current)) {
        result = this.#record(kv!);
        return undefined;
      }
      result = cachedRecord({ key, object: next, revision: kv!.modRevision });
      return bytes;
    };
    if (options.dryRun) {
      const kv = await this.#storage((s) => s.getStored(key), name);
      await tryUpdate(kv);
      // As upstream's dry-run storage: the answer carries the version it was computed from.
      if (result !== undefined && kv !== undefined) result.object.metadata.resourceVersion ??= String(kv.modRevision);
      return result;
    }
    const out = await this.#storage((s) => s.guaranteedUpdate(key, tryUpdate, { allowCreate: true }), name);
    // The door's record of its own write: the watch cache applies the same one (decoded once, serialized once).
    if (out.changed && out.kv !== undefined) return this.#deps.storage.recordOf(out.kv);
    return result;
  }

  async #prepareUpdate(
    input: ApiObject,
    current: ApiObject,
    ctx: StrategyContext,
    subresource: Subresource | undefined,
    options: RequestOptions,
  ): Promise<ApiObject> {
    // Through a subresource, its declaration decides what moves; on the main
    // resource, each subresource keeps what only it may change.
    const next = subresource?.prepareUpdate?.(input, current) ?? input;
    next.metadata ??= {};
    if (subresource === undefined) for (const s of subresourcesAt(this.def, options.version)) s.prepareMainUpdate?.(next, current);
    const meta = next.metadata;
    const old = current.metadata;
    if (meta.uid !== undefined && meta.uid !== "" && meta.uid !== old.uid) {
      throw conflict(this.groupResource, old.name ?? "", `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${old.uid}`);
    }
    next.apiVersion = this.#apiVersion(options);
    next.kind = this.def.kind;
    meta.uid = old.uid;
    meta.creationTimestamp = old.creationTimestamp;
    meta.deletionTimestamp = old.deletionTimestamp;
    meta.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
    if (meta.deletionTimestamp === undefined) delete meta.deletionTimestamp;
    if (meta.deletionGracePeriodSeconds === undefined) delete meta.deletionGracePeriodSeconds;
    delete meta.resourceVersion;
    if (this.def.namespaced) meta.namespace = old.namespace;
    this.#defaults(next, ctx);
    omitEmptyMetadata(meta);
    await this.#admit("UPDATE", next, current, subresource?.name, options);
    this.def.prepareForUpdate?.(next, current, ctx);
    if (this.def.generation === false) {
      if (old.generation === undefined) delete meta.generation;
      else meta.generation = old.generation;
    } else meta.generation = specChanged(next, current) ? (old.generation ?? 0) + 1 : old.generation ?? 1;
    const managed = options.manageFields?.(current, next, ctx.now) ?? next;
    // A subresource's own rule replaces the kind's update rule.
    const kindErrors = subresource?.validate !== undefined ? subresource.validate(managed, current, ctx) : (this.def.validateUpdate?.(managed, current, ctx) ?? []);
    this.#validate(managed, [...validateObjectMetaUpdate(this.def, managed, current), ...kindErrors]);
    await this.#admissionValidate("UPDATE", managed, current, subresource?.name, options);
    return managed;
  }

  /** Seed 000, "States and transitions": mark, or remove when nothing holds the object. */
  async delete(namespace: string | undefined, name: string, options: DeleteOptions = {}, request: RequestOptions = {}): Promise<DeleteResult> {
    const policy = deletePolicy(options, this.def.defaultPropagationPolicy);
    const key = this.keyFor(namespace, name);
    const ctx = this.#context(request);
    let outcome: DeleteResult | undefined;
    const dryRun = !!(options.dryRun || request.dryRun);
    const tryDelete = async (kv: KeyValue | undefined): Promise<UpdateDecision> => {
      if (kv === undefined) throw notFound(this.groupResource, name);
      const current = this.decode(kv);
      checkPreconditions(options, current, this.groupResource, name);
      await this.#admissionValidate("DELETE", undefined, current, undefined, { dryRun, ...(request.admission ? { admission: request.admission } : {}) });
      const next = markForDeletion(current, {
        policy,
        grace: this.def.gracePeriodSeconds?.(current, options.gracePeriodSeconds) ?? 0,
        held: (obj) => this.#held(obj),
        prepare: (obj) => this.def.prepareForDelete?.(obj, ctx),
        now: ctx.now,
      });
      if (next === "remove") {
        outcome = { object: current, deleted: true };
        return DELETE;
      }
      const bytes = encodeObject(this.#toStored(next), name);
      outcome = { object: next, deleted: false };
      return Buffer.compare(Buffer.from(bytes), Buffer.from(kv.value)) === 0 ? undefined : bytes;
    };
    if (dryRun) {
      await tryDelete(await this.#storage((s) => s.getStored(key), name));
      return outcome!;
    }
    const out = await this.#storage((s) => s.guaranteedUpdate(key, tryDelete), name);
    if (!outcome!.deleted && out.kv !== undefined) outcome = { object: this.decode(out.kv), deleted: false };
    return outcome!;
  }

  /**
   * Seed 000, "States and transitions", the corrupt row: remove a stored value
   * that cannot be decoded, skipping finalizers and preconditions (there is no
   * object to read them from). Only for a corrupt value, and with the other
   * delete options unset; the caller checks AllowUnsafeMalformedObjectDeletion.
   */
  async deleteCorrupt(namespace: string | undefined, name: string, options: DeleteOptions): Promise<void> {
    checkCorruptDeleteOptions(options, this.#deps.naming.metaGroup);
    const key = this.keyFor(namespace, name);
    const kv = await this.#storage((s) => s.getStored(key), name);
    if (kv === undefined) throw notFound(this.groupResource, name);
    if (isReadable(() => this.decode(kv))) {
      // As upstream: the Invalid error names the resource where it would name a kind.
      throw invalid({ group: this.def.group, kind: this.def.resource }, name, [
        field.invalid(CORRUPT_DELETE_OPTION, true, "is exclusively used to delete corrupt object(s), try again by removing this option"),
      ]);
    }
    await this.#storage((s) => s.delete(key), name);
  }

  async deleteCollection(
    namespace: string | undefined,
    params: ListParams,
    options: DeleteOptions,
    request: RequestOptions = {},
  ): Promise<ListResult> {
    const listed = await this.list(namespace, { ...params, limit: undefined, continue: undefined });
    const items: Cached<ApiObject>[] = [];
    for (const item of listed.items) {
      try {
        const result = await this.delete(item.object.metadata.namespace, item.object.metadata.name!, options, request);
        items.push(cachedRecord({ key: item.key, object: result.object, revision: 0 }));
      } catch (err) {
        if (!isApiError(err, "NotFound")) throw err;
      }
    }
    return { items, metadata: listed.metadata };
  }

  /** Something still holds a terminating object: finalizers, or the kind's own holds. */
  #held(obj: ApiObject): boolean {
    return (obj.metadata.finalizers ?? []).length > 0 || (this.def.pendingFinalizers?.(obj) ?? []).length > 0;
  }

  // ---- encoding (codec.ts) ----

  /** Bytes from storage to an object carrying its resourceVersion (also the cache's decoder). */
  decode = (kv: KeyValue): ApiObject => {
    const obj = decodeObject(kv);
    return this.def.storedAs === undefined ? obj : this.def.storedAs.fromStored(obj);
  };

  /** The object as storage holds it (another kind's, for a resource declared storedAs). */
  #toStored(obj: ApiObject): ApiObject {
    return this.def.storedAs === undefined ? obj : this.def.storedAs.toStored(obj);
  }

  #record(kv: KeyValue): Cached<ApiObject> {
    return decodeRecord(kv, this.decode);
  }

  // ---- versions (kinds with a conversion: custom resources) ----

  /** The apiVersion a write's object is prepared in: the request's for a kind with a conversion, else the storage version. */
  #apiVersion(options: RequestOptions): string {
    if (this.def.conversion === undefined || options.version === undefined) return this.#storageVersion;
    return this.def.group === "" ? options.version : `${this.def.group}/${options.version}`;
  }

  /** A stored object in the request's version (for a kind with a conversion). */
  async #inVersion(obj: ApiObject, options: RequestOptions, name: string): Promise<ApiObject> {
    if (this.def.conversion === undefined || options.version === undefined) return obj;
    return this.#convert(obj, options.version, name);
  }

  /** The object in the storage version, to be stored. */
  async #toStorageVersion(obj: ApiObject, name: string): Promise<ApiObject> {
    if (this.def.conversion === undefined || obj.apiVersion === this.#storageVersion) return obj;
    return this.#convert(obj, this.#storageVersion.slice(this.#storageVersion.indexOf("/") + 1), name);
  }

  async #convert(obj: ApiObject, version: string, name: string): Promise<ApiObject> {
    const [out] = await this.def.conversion!.convert([obj], version);
    if (out === undefined) throw this.#apiError(new Error("conversion returned no object"), name);
    return out;
  }

  // ---- strategy plumbing ----

  #context(options: RequestOptions): StrategyContext {
    return { naming: this.#deps.naming, now: options.now ?? new Date() };
  }

  #defaults(obj: ApiObject, ctx: StrategyContext): void {
    this.#deps.defaulter.apply(schemaOf(this.def, versionOf(obj.apiVersion)), obj);
    this.def.defaults?.(obj, ctx);
  }

  /**
   * Admission of a connect subresource (pods/exec, pods/attach): the CONNECT
   * operation with the request's options as the object (PodExecOptions,
   * PodAttachOptions), mutating then validating plugins, as upstream's connect
   * handler runs them before it proxies anything. Throws the refusal.
   */
  async admitConnect(namespace: string | undefined, name: string, subresource: string, options: ApiObject, request?: AdmissionRequest): Promise<void> {
    if (this.#admission.empty) return;
    const attrs = {
      operation: "CONNECT" as const, resource: this.groupResource, kind: options.kind ?? "", subresource, namespace: this.def.namespaced ? (namespace ?? "") : undefined, name,
      object: options, oldObject: undefined, dryRun: false, ...(request ? { request } : {}),
    };
    await this.#admission.admit(attrs);
    await this.#admission.validate(attrs);
  }

  /** Mutating admission: plugins may change `obj` in place. */
  async #admit(operation: AdmissionOperation, obj: ApiObject, old: ApiObject | undefined, subresource: string | undefined, options: RequestOptions): Promise<void> {
    if (!this.#admission.empty) await this.#admission.admit(this.#attributes(operation, obj, old, subresource, options));
  }

  async #admissionValidate(operation: AdmissionOperation, obj: ApiObject | undefined, old: ApiObject | undefined, subresource: string | undefined, options: RequestOptions): Promise<void> {
    if (!this.#admission.empty) await this.#admission.validate(this.#attributes(operation, obj, old, subresource, options));
  }

  #attributes(operation: AdmissionOperation, obj: ApiObject | undefined, old: ApiObject | undefined, subresource: string | undefined, options: RequestOptions) {
    const meta = (obj ?? old)!.metadata;
    const namespace = this.def.namespaced ? (meta.namespace ?? "") : undefined;
    const request = options.admission;
    const apiVersion = this.def.conversion !== undefined ? (obj ?? old)!.apiVersion : undefined;
    const version = typeof apiVersion === "string" && apiVersion.includes("/") ? apiVersion.slice(apiVersion.indexOf("/") + 1) : undefined;
    const normalize = (o: ApiObject) => {
      this.def.pruneUnknown?.(o as unknown as Record<string, unknown>, version);
      this.#defaults(o, this.#context(options));
    };
    return {
      ...(version !== undefined ? { version } : {}),
      operation, resource: this.groupResource, kind: this.def.kind, subresource, namespace, name: meta.name ?? "", object: obj, oldObject: old, dryRun: !!options.dryRun,
      ...(obj !== undefined ? { normalize } : {}), ...(request ? { request } : {}),
    };
  }

  #validate(obj: ApiObject, errs: FieldError[]): void {
    if (errs.length > 0) throw invalid({ group: this.def.group, kind: this.def.kind }, obj.metadata.name ?? "", errs);
  }

  /** Run a storage call, turning storage errors into API errors about `name`. */
  async #storage<R>(call: (s: CachedStorage<ApiObject>) => Promise<R>, name: string): Promise<R> {
    try {
      return await call(this.#deps.storage);
    } catch (err) {
      throw this.#apiError(err, name);
    }
  }

  #apiError(err: unknown, name: string): unknown {
    return apiErrorFrom(err, this.groupResource, name);
  }
}

export { MAX_OBJECT_BYTES } from "./codec.js";

export function storagePrefix(def: ResourceDefinition): string {
  const at = def.storedAs ?? def;
  return `/registry/${at.group === "" ? "core" : at.group}/${at.resource}/`;
}

/** The group and resource a storage key belongs to (storagePrefix read backwards); undefined for a key outside that shape. */
export function resourceOfKey(key: string): GroupResource | undefined {
  const m = /^\/registry\/([^/]+)\/([^/]+)\//.exec(key);
  return m === null ? undefined : { group: m[1] === "core" ? "" : m[1]!, resource: m[2]! };
}

function isReadable(decode: () => unknown): boolean {
  try {
    decode();
    return true;
  } catch {
    return false;
  }
}
