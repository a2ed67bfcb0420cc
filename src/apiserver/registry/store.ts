// The generic registry store: one implementation of get, list, create,
// update, delete and deletecollection for every resource, driven by its
// declaration (src/api/resource.ts). Reads come from the watch cache (or the
// store, for versions older than the cache window); every write goes through
// storage.guaranteedUpdate. Seed 000: "Resource version semantics",
// "Chunked lists", "States and transitions" (two-phase deletion), "Dry run".
//
// The write pipeline, in this one order for every resource (upstream's):
//   create: defaults → mutating admission → prepareForCreate → managed fields
//           → validate → validating admission → storage (skipped on dry run)
//   update: the new object (PUT body, patch or apply over the current one) →
//           defaults → mutating admission → prepareForUpdate → managed fields
//           → validateUpdate → validating admission → no-op check → storage
//   delete: preconditions → validating admission → mark or remove
// A no-op update (semantically equal to the stored object) keeps its
// resourceVersion and emits no watch event.

import type { ResourceDefinition, StrategyContext } from "../../api/resource.js";
import type { Naming } from "../../api/naming.js";
import {
  alreadyExists,
  badRequest,
  conflict,
  continueExpired,
  corruptObject,
  storeReadError,
  decideGet,
  decideList,
  decodeContinue,
  encodeContinue,
  generateName,
  generateNameConflict,
  internalError,
  field,
  invalid,
  isApiError,
  listExpired,
  newUid,
  notFound,
  requestEntityTooLarge,
  serviceUnavailable,
  tooLargeResourceVersion,
  formatTimestamp,
  type ApiObject,
  type FieldError,
  type GroupResource,
  type ListMeta,
} from "../../machinery/index.js";
import { DELETE, isStorageError, type KeyValue, type Storage, type UpdateDecision } from "../../storage/index.js";
import type { Cached, Cacher } from "../../storage/cacher/cacher.js";
import { compilePredicate, type PredicateParams } from "./predicate.js";
import { validateObjectMeta, validateObjectMetaUpdate } from "./metadata-validation.js";
import type { SchemaDefaulter } from "./defaults.js";
import { AdmissionChain, type AdmissionOperation } from "../admission/index.js";
import { jsonEqual } from "../../machinery/apply/index.js";
import type { Subresource } from "../../api/resource.js";

const enc = new TextEncoder();
const dec = new TextDecoder();
/** How long a NotOlderThan/Exact read waits for a future version before 504 (seed 000, "Watch behavior" 6). */
const FUTURE_VERSION_WAIT_MS = 3000;
/** Upstream's RetryGenerateName: up to 8 attempts in all before the 409. */
const GENERATE_NAME_ATTEMPTS = 8;

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
}

export interface ListParams extends PredicateParams {
  resourceVersion?: string | undefined;
  resourceVersionMatch?: string | undefined;
  limit?: number | undefined;
  continue?: string | undefined;
}

export interface ListResult {
  items: Cached<ApiObject>[];
  metadata: ListMeta;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number | undefined;
  preconditions?: { uid?: string | undefined; resourceVersion?: string | undefined } | undefined;
  propagationPolicy?: string | undefined;
  orphanDependents?: boolean | undefined;
  dryRun?: boolean | undefined;
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean | undefined;
}

export interface DeleteResult {
  object: ApiObject;
  /** False when the object was only marked (finalizers or a grace period remain). */
  deleted: boolean;
}

/** Hooks the store needs from the rest of the server. */
export interface StoreDependencies {
  storage: Storage;
  cacher: Cacher<ApiObject>;
  naming: Naming;
  defaulter: SchemaDefaulter;
  /** Mutating and validating admission plugins (NamespaceLifecycle among them); none when absent. */
  admission?: AdmissionChain;
  /** ListFromCacheSnapshot: serve Exact reads from the cache's snapshots. */
  snapshots: boolean;
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
    this.#storageVersion = def.group === "" ? def.versions[0]! : `${def.group}/${def.versions[0]}`;
    // The server's plugins, then the kind's own (its declaration plugs in here).
    this.#admission = (deps.admission ?? new AdmissionChain()).with(def.admission ?? {});
  }

  /** AllowUnsafeMalformedObjectDeletion is on: deleteCorrupt may be used. */
  get unsafeDeletion(): boolean {
    return this.#deps.unsafeDeletion === true;
  }

  get cacher(): Cacher<ApiObject> {
    return this.#deps.cacher;
  }

  /** The backing store, for reads older than the cache window. */
  get storage(): Storage {
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
    const mode = decideGet(params);
    let found: Cached<ApiObject> | undefined;
    if (mode.mode === "MostRecent") {
      const { kv } = await this.#storage((s) => s.get(key), name);
      found = kv === undefined ? undefined : this.#cached(kv);
    } else {
      if (mode.mode === "NotOlderThan") await this.#waitFor(mode.rv);
      await this.cacher.start();
      found = this.cacher.get(key);
      if (found === undefined) {
        const corrupt = this.cacher.corrupt(key).find((c) => c.key === key);
        if (corrupt !== undefined) throw corrupt.error;
      }
    }
    if (found === undefined) throw notFound(this.groupResource, name);
    return found;
  }

  /** Seed 000 "Resource version semantics" (list table) and "Chunked lists". */
  async list(namespace: string | undefined, params: ListParams): Promise<ListResult> {
    const predicate = compilePredicate(this.def, params, { sharding: this.#deps.sharding });
    const prefix = this.prefixFor(namespace);
    const limit = params.limit !== undefined && params.limit > 0 ? params.limit : 0;
    const mode = decideList(params, { metaGroup: this.#deps.naming.metaGroup });
    await this.cacher.start();

    let revision: number;
    let candidates: Cached<ApiObject>[];
    let startKey = prefix;
    switch (mode.mode) {
      case "MostRecent": {
        const rv = await this.cacher.consistentRevision();
        if (rv === undefined) throw serviceUnavailable("the watch cache did not catch up with storage in time; retry");
        revision = this.cacher.revision;
        candidates = this.cacher.list(prefix)!;
        break;
      }
      case "Any":
        revision = this.cacher.revision;
        candidates = this.cacher.list(prefix)!;
        break;
      case "NotOlderThan":
        await this.#waitFor(mode.rv);
        revision = this.cacher.revision;
        candidates = this.cacher.list(prefix)!;
        break;
      case "Exact":
        revision = mode.rv;
        candidates = await this.#listAt(prefix, mode.rv, () => listExpired());
        break;
      case "Continuation": {
        const token = decodeContinue(mode.token, this.prefix);
        if (!token.key.startsWith(prefix)) throw badRequest("continue key is not valid: it belongs to another namespace");
        startKey = token.key;
        revision = token.resourceVersion > 0 ? token.resourceVersion : this.cacher.revision;
        candidates =
          token.resourceVersion > 0
            ? await this.#listAt(prefix, token.resourceVersion, () => continueExpired())
            : this.cacher.list(prefix)!;
        break;
      }
    }

    if (mode.mode !== "Exact") this.#refuseCorrupt(prefix, this.cacher.corrupt(prefix));
    const items: Cached<ApiObject>[] = [];
    let i = 0;
    if (startKey !== prefix) while (i < candidates.length && candidates[i]!.key < startKey) i++;
    let remaining = 0;
    let more = false;
    for (; i < candidates.length; i++) {
      const c = candidates[i]!;
      if (!predicate.matches(c.object)) continue;
      if (limit > 0 && items.length >= limit) {
        more = true;
        if (!predicate.everything) break;
        remaining++;
        continue;
      }
      items.push(c);
    }
    const metadata: ListMeta = { resourceVersion: String(revision) };
    if (more) {
      metadata.continue = encodeContinue(items[items.length - 1]!.key + "\u0000", this.prefix, revision);
      if (predicate.everything) metadata.remainingItemCount = remaining;
    }
    if (predicate.shard !== undefined) metadata.shardInfo = { selector: predicate.shard.toString() };
    return { items, metadata };
  }

  /** An Exact read: the cache's snapshot when the window covers it, else the store at that revision. */
  async #listAt(prefix: string, revision: number, expired: () => Error): Promise<Cached<ApiObject>[]> {
    if (revision > this.cacher.revision) await this.#waitFor(revision);
    if (this.#deps.snapshots) {
      const fromCache = this.cacher.list(prefix, revision);
      if (fromCache !== undefined) return fromCache;
    }
    try {
      const listed = await this.#deps.storage.list(prefix, { revision });
      const out: Cached<ApiObject>[] = [];
      const corrupt: { key: string; error: Error }[] = [];
      for (const kv of listed.items) {
        try {
          out.push(this.#cached(kv));
        } catch (err) {
          corrupt.push({ key: kv.key, error: err as Error });
        }
      }
      this.#refuseCorrupt(prefix, corrupt);
      return out;
    } catch (err) {
      if (isStorageError(err, "Compacted")) throw expired();
      throw this.#apiError(err, "");
    }
  }

  /**
   * A list that meets undecodable values fails rather than leave them out:
   * with AllowUnsafeMalformedObjectDeletion the error names every such key (so
   * they can be deleted), without it the first error stands, as upstream.
   */
  #refuseCorrupt(prefix: string, corrupt: readonly { key: string; error: Error }[]): void {
    if (corrupt.length === 0) return;
    throw this.#deps.unsafeDeletion ? storeReadError(this.groupResource, prefix, corrupt) : corrupt[0]!.error;
  }

  async #waitFor(revision: number): Promise<void> {
    await this.cacher.start();
    if (!(await this.cacher.waitFor(revision, FUTURE_VERSION_WAIT_MS))) {
      throw tooLargeResourceVersion(revision, this.cacher.revision);
    }
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
      const bytes = this.#encode(obj, name);
      try {
        if (options.dryRun) {
          if ((await this.#storage((s) => s.get(key), name)).kv !== undefined) throw alreadyExists(this.groupResource, name);
          return this.#cachedObject(key, obj, 0);
        }
        return this.#cached(await this.#storage((s) => s.create(key, bytes), name));
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
    const obj = structuredClone(input);
    const meta = (obj.metadata ??= {});
    if (name) meta.name = name;
    if (this.def.namespaced) meta.namespace = namespace;
    else delete meta.namespace;
    for (const field of ["resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"] as const) delete (meta as Record<string, unknown>)[field];
    meta.uid = newUid();
    meta.creationTimestamp = formatTimestamp(ctx.now);
    meta.generation = 1;
    obj.apiVersion = this.#storageVersion;
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
      return structuredClone(input);
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
      return mutate(structuredClone(current));
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
      const current = kv === undefined ? undefined : this.#decode(kv);
      const decided = decide(current);
      if (decided === "create" || current === undefined) return undefined;
      const next = await this.#prepareUpdate(decided, current, ctx, subresource, options);
      const meta = next.metadata;
      if (meta.deletionTimestamp && !this.#held(next) && (meta.deletionGracePeriodSeconds ?? 0) === 0) {
        // The answer is the object as the write left it (finalizers gone), as upstream returns it.
        next.metadata.resourceVersion = current.metadata.resourceVersion;
        result = this.#cachedObject(key, next, 0);
        return DELETE;
      }
      const bytes = this.#encode(next, name);
      // Semantic, not byte, equality: a client's key order must not make a no-op a write.
      if (sameObject(next, current)) {
        result = this.#cached(kv!);
        return undefined;
      }
      result = this.#cachedObject(key, next, kv!.modRevision);
      return bytes;
    };
    if (options.dryRun) {
      const { kv } = await this.#storage((s) => s.get(key), name);
      await tryUpdate(kv);
      // As upstream's dry-run storage: the answer carries the version it was computed from.
      if (result !== undefined && kv !== undefined) result.object.metadata.resourceVersion ??= String(kv.modRevision);
      return result;
    }
    const out = await this.#storage((s) => s.guaranteedUpdate(key, tryUpdate, { allowCreate: true }), name);
    if (out.changed && out.kv !== undefined) return this.#cached(out.kv);
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
    if (subresource === undefined) for (const s of this.def.subresources ?? []) s.prepareMainUpdate?.(next, current);
    const meta = next.metadata;
    const old = current.metadata;
    if (meta.uid !== undefined && meta.uid !== "" && meta.uid !== old.uid) {
      throw conflict(this.groupResource, old.name ?? "", `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${old.uid}`);
    }
    next.apiVersion = this.#storageVersion;
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
    meta.generation = specChanged(next, current) ? (old.generation ?? 0) + 1 : old.generation ?? 1;
    const managed = options.manageFields?.(current, next, ctx.now) ?? next;
    // A subresource's own rule replaces the kind's update rule.
    const kindErrors = subresource?.validate !== undefined ? subresource.validate(managed, current, ctx) : (this.def.validateUpdate?.(managed, current, ctx) ?? []);
    this.#validate(managed, [...validateObjectMetaUpdate(this.def, managed, current), ...kindErrors]);
    await this.#admissionValidate("UPDATE", managed, current, subresource?.name, options);
    return managed;
  }

  /** Seed 000, "States and transitions": mark, or remove when nothing holds the object. */
  async delete(namespace: string | undefined, name: string, options: DeleteOptions = {}, request: RequestOptions = {}): Promise<DeleteResult> {
    const policy = deletePolicy(options);
    const key = this.keyFor(namespace, name);
    const ctx = this.#context(request);
    let outcome: DeleteResult | undefined;
    const dryRun = !!(options.dryRun || request.dryRun);
    const tryDelete = async (kv: KeyValue | undefined): Promise<UpdateDecision> => {
      if (kv === undefined) throw notFound(this.groupResource, name);
      const current = this.#decode(kv);
      const pre = options.preconditions;
      if (pre?.uid && pre.uid !== current.metadata.uid) {
        throw conflict(this.groupResource, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`);
      }
      if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
        throw conflict(
          this.groupResource,
          name,
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
        );
      }
      await this.#admissionValidate("DELETE", undefined, current, undefined, { dryRun });
      const next = structuredClone(current);
      const meta = next.metadata;
      const finalizers = new Set(meta.finalizers ?? []);
      const firstDelete = !meta.deletionTimestamp;
      if (firstDelete) {
        if (policy === "Orphan") finalizers.add("orphan");
        if (policy === "Foreground") finalizers.add("foregroundDeletion");
      }
      const grace = this.def.gracePeriodSeconds?.(current, options.gracePeriodSeconds) ?? 0;
      const alreadyGrace = meta.deletionGracePeriodSeconds;
      const effectiveGrace = alreadyGrace !== undefined && alreadyGrace !== null ? Math.min(alreadyGrace, grace) : grace;
      meta.finalizers = [...finalizers];
      if (meta.finalizers.length === 0) delete meta.finalizers;
      if (!this.#held(next) && effectiveGrace === 0) {
        outcome = { object: current, deleted: true };
        return DELETE;
      }
      if (firstDelete) this.def.prepareForDelete?.(next, ctx);
      if (!meta.deletionTimestamp || effectiveGrace !== alreadyGrace) {
        meta.deletionTimestamp = formatTimestamp(new Date(ctx.now.getTime() + effectiveGrace * 1000));
        meta.deletionGracePeriodSeconds = effectiveGrace;
      }
      const bytes = this.#encode(next, name);
      outcome = { object: next, deleted: false };
      return Buffer.compare(Buffer.from(bytes), Buffer.from(kv.value)) === 0 ? undefined : bytes;
    };
    if (dryRun) {
      await tryDelete((await this.#storage((s) => s.get(key), name)).kv);
      return outcome!;
    }
    const out = await this.#storage((s) => s.guaranteedUpdate(key, tryDelete), name);
    if (!outcome!.deleted && out.kv !== undefined) outcome = { object: this.#cached(out.kv).object, deleted: false };
    return outcome!;
  }

  /**
   * Seed 000, "States and transitions", the corrupt row: remove a stored value
   * that cannot be decoded, skipping finalizers and preconditions (there is no
   * object to read them from). Only for a corrupt value, and with the other
   * delete options unset; the caller checks AllowUnsafeMalformedObjectDeletion.
   */
  async deleteCorrupt(namespace: string | undefined, name: string, options: DeleteOptions): Promise<void> {
    const OPTION = "ignoreStoreReadErrorWithClusterBreakingPotential";
    const notWith = (path: string, value: unknown) => field.invalid(path, value, `can not be set together with ${OPTION}`);
    const errs: FieldError[] = [];
    if (options.dryRun) errs.push(notWith("dryRun", ["All"]));
    if (options.gracePeriodSeconds !== undefined) errs.push(notWith("gracePeriodSeconds", options.gracePeriodSeconds));
    if (options.orphanDependents !== undefined) errs.push(notWith("orphanDependents", options.orphanDependents));
    if (options.preconditions !== undefined) errs.push(notWith("preconditions", options.preconditions));
    if (options.propagationPolicy !== undefined) errs.push(notWith("propagationPolicy", options.propagationPolicy));
    if (errs.length > 0) throw invalid({ group: this.#deps.naming.metaGroup, kind: "DeleteOptions" }, "", errs);
    const key = this.keyFor(namespace, name);
    const { kv } = await this.#storage((s) => s.get(key), name);
    if (kv === undefined) throw notFound(this.groupResource, name);
    if (isReadable(() => this.#decode(kv))) {
      // As upstream: the Invalid error names the resource where it would name a kind.
      throw invalid({ group: this.def.group, kind: this.def.resource }, name, [
        field.invalid(OPTION, true, "is exclusively used to delete corrupt object(s), try again by removing this option"),
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
        items.push(this.#cachedObject(item.key, result.object, 0));
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

  // ---- encoding ----

  /** The object as stored: JSON without resourceVersion (the revision is the version). */
  #encode(obj: ApiObject, name: string): Uint8Array {
    const { resourceVersion: _rv, ...meta } = obj.metadata;
    const { apiVersion, kind, metadata: _m, ...rest } = obj;
    // apiVersion, kind, metadata first: responses splice the resourceVersion in (see http/stored-json.ts).
    const bytes = enc.encode(JSON.stringify({ apiVersion, kind, metadata: meta, ...rest }));
    if (bytes.length > MAX_OBJECT_BYTES) {
      throw requestEntityTooLarge(`the object ${JSON.stringify(name)} is ${bytes.length} bytes, over the ${MAX_OBJECT_BYTES}-byte limit`);
    }
    return bytes;
  }

  /** Bytes from storage to an object carrying its resourceVersion (also the cacher's decoder). */
  decode = (kv: KeyValue): ApiObject => this.#decode(kv);

  #decode(kv: KeyValue): ApiObject {
    let obj: ApiObject;
    try {
      obj = JSON.parse(dec.decode(kv.value)) as ApiObject;
    } catch (err) {
      throw corruptObject(kv.key, kv.modRevision, `data from the storage is not decodable: ${(err as Error).message}`);
    }
    if (typeof obj !== "object" || obj === null || Array.isArray(obj)) {
      throw corruptObject(kv.key, kv.modRevision, "data from the storage is not decodable: not a JSON object");
    }
    obj.metadata ??= {};
    obj.metadata.resourceVersion = String(kv.modRevision);
    return obj;
  }

  #cached(kv: KeyValue): Cached<ApiObject> {
    return { key: kv.key, object: this.#decode(kv), revision: kv.modRevision, encoded: new Map(), stored: kv.value };
  }

  #cachedObject(key: string, obj: ApiObject, revision: number): Cached<ApiObject> {
    return { key, object: obj, revision, encoded: new Map() };
  }

  // ---- strategy plumbing ----

  #context(options: RequestOptions): StrategyContext {
    return { naming: this.#deps.naming, now: options.now ?? new Date() };
  }

  #defaults(obj: ApiObject, ctx: StrategyContext): void {
    this.#deps.defaulter.apply(this.def.schema, obj);
    this.def.defaults?.(obj, ctx);
  }

  /** Mutating admission: plugins may change `obj` in place. */
  async #admit(operation: AdmissionOperation, obj: ApiObject, old: ApiObject | undefined, subresource: string | undefined, options: RequestOptions): Promise<void> {
    const chain = this.#admission;
    if (chain.empty) return;
    await chain.admit(this.#attributes(operation, obj, old, subresource, options));
  }

  async #admissionValidate(operation: AdmissionOperation, obj: ApiObject | undefined, old: ApiObject | undefined, subresource: string | undefined, options: RequestOptions): Promise<void> {
    const chain = this.#admission;
    if (chain.empty) return;
    await chain.validate(this.#attributes(operation, obj, old, subresource, options));
  }

  #attributes(operation: AdmissionOperation, obj: ApiObject | undefined, old: ApiObject | undefined, subresource: string | undefined, options: RequestOptions) {
    const meta = (obj ?? old)!.metadata;
    return {
      operation,
      resource: this.groupResource,
      kind: this.def.kind,
      subresource,
      namespace: this.def.namespaced ? (meta.namespace ?? "") : undefined,
      name: meta.name ?? "",
      object: obj,
      oldObject: old,
      dryRun: !!options.dryRun,
    };
  }

  #validate(obj: ApiObject, errs: FieldError[]): void {
    if (errs.length > 0) throw invalid({ group: this.def.group, kind: this.def.kind }, obj.metadata.name ?? "", errs);
  }

  /** Run a storage call, turning storage errors into API errors about `name`. */
  async #storage<R>(call: (s: Storage) => Promise<R>, name: string): Promise<R> {
    try {
      return await call(this.#deps.storage);
    } catch (err) {
      throw this.#apiError(err, name);
    }
  }

  #apiError(err: unknown, name: string): unknown {
    if (isApiError(err) || !isStorageError(err)) return err;
    switch (err.code) {
      case "NotFound":
        return notFound(this.groupResource, name);
      case "AlreadyExists":
        return alreadyExists(this.groupResource, name);
      case "Conflict":
        return conflict(this.groupResource, name);
      case "TooLarge":
        return requestEntityTooLarge(err.message);
      case "Compacted":
        return listExpired();
      case "FutureRevision":
        return tooLargeResourceVersion(String((err as { requestedRevision?: number }).requestedRevision ?? ""), "");
      case "Unavailable":
        return serviceUnavailable(`storage is unavailable: ${err.message}`);
      default:
        return internalError(err);
    }
  }
}

/** Objects are limited to what a storage value can hold. */
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;

export function storagePrefix(def: ResourceDefinition): string {
  return `/registry/${def.group === "" ? "core" : def.group}/${def.resource}/`;
}

/**
 * Empty labels, annotations, finalizers and ownerReferences are dropped, as
 * upstream's `omitempty` encoding drops them (a patch that empties a map
 * must not leave `{}` behind, or diffs and no-op checks see a change).
 */
function omitEmptyMetadata(meta: ApiObject["metadata"]): void {
  for (const k of ["labels", "annotations"] as const) {
    const v = meta[k];
    if (v !== undefined && (v === null || (typeof v === "object" && Object.keys(v).length === 0))) delete meta[k];
  }
  for (const k of ["finalizers", "ownerReferences"] as const) {
    const v = meta[k];
    if (v !== undefined && (v === null || (Array.isArray(v) && v.length === 0))) delete meta[k];
  }
}

/** The prepared object equals the stored one (which carries a resourceVersion the new one lacks). */
function sameObject(next: ApiObject, current: ApiObject): boolean {
  const { resourceVersion: _rv, ...meta } = current.metadata;
  return jsonEqual({ ...current, metadata: meta }, next);
}

/** Everything but metadata and status: a change there bumps metadata.generation. */
function specChanged(next: ApiObject, current: ApiObject): boolean {
  const strip = ({ metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest }: ApiObject) => rest;
  return JSON.stringify(strip(next)) !== JSON.stringify(strip(current));
}

function deletePolicy(options: DeleteOptions): "Orphan" | "Background" | "Foreground" {
  const policy = options.propagationPolicy;
  if (policy !== undefined && options.orphanDependents !== undefined) {
    throw badRequest("Only one of DeleteOptions.orphanDependents and DeleteOptions.propagationPolicy may be set");
  }
  if (policy === undefined) return options.orphanDependents ? "Orphan" : "Background";
  if (policy !== "Orphan" && policy !== "Background" && policy !== "Foreground") {
    throw badRequest(`propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`);
  }
  return policy;
}

function isReadable(decode: () => unknown): boolean {
  try {
    decode();
    return true;
  } catch {
    return false;
  }
}
