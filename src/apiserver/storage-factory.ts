// The store builder: one registry store per served resource, each over its
// own watch cache, all keyed by storagePrefix (registry/store.ts, the one
// place the key formula lives). Stores are found by declaration or
// group/resource, or by name for the few the server itself works with.

import type { Naming } from "../machinery/naming.js";
import type { ResourceDefinition } from "../api/resource.js";
import type { FeatureGates } from "../component/index.js";
import type { ApiObject, GroupResource } from "../machinery/index.js";
import type { Storage } from "../storage/index.js";
import { CachedStorage, type WindowBudget } from "../storage/cacher/index.js";
import type { AdmissionChain } from "./admission/index.js";
import type { SchemaDefaulter } from "./registry/defaults.js";
import { RegistryStore, storagePrefix } from "./registry/store.js";

export interface StoresOptions {
  readonly storage: Storage;
  readonly resources: readonly ResourceDefinition[];
  readonly naming: Naming;
  readonly defaulter: SchemaDefaulter;
  readonly admission: AdmissionChain;
  /** ListFromCacheSnapshot, ConsistentGetFromCache, ShardedListAndWatch and AllowUnsafeMalformedObjectDeletion shape the stores. */
  readonly featureGates: FeatureGates;
  /** How long the watch caches keep events (their default when undefined). */
  readonly cacheWindowMs?: number | undefined;
  /** The byte budget every watch cache's event window shares (none: unbounded by bytes). */
  readonly cacheBudget?: WindowBudget | undefined;
  readonly log: (line: string) => void;
}

export class Stores implements Iterable<RegistryStore> {
  readonly #byResource = new Map<string, RegistryStore>();
  readonly #schedulingGroup: string;
  readonly #options: StoresOptions;

  constructor(options: StoresOptions) {
    this.#schedulingGroup = options.naming.schedulingGroup;
    this.#options = options;
    // Create-only kinds (the reviews) are answered, never stored: no store, no watch cache.
    for (const def of options.resources) if (!isCreateOnly(def)) this.#byResource.set(keyOf(def), this.#build(def));
  }

  /** A store over its own watch cache (not started). */
  #build(def: ResourceDefinition, door?: CachedStorage<ApiObject>): RegistryStore {
    const options = this.#options;
    const { storage, naming, defaulter, admission, log } = options;
    let store: RegistryStore;
    // The one door (storage/cacher): the watch cache or the backend answers each read.
    door ??= new CachedStorage<ApiObject>({
      backend: storage,
      prefix: storagePrefix(def),
      decode: (kv) => store.decode(kv),
      withRevision: (obj, revision) => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } }),
      ...(options.cacheWindowMs !== undefined ? { windowMs: options.cacheWindowMs } : {}),
      ...(options.cacheBudget !== undefined ? { budget: options.cacheBudget } : {}),
      snapshots: options.featureGates.enabled("ListFromCacheSnapshot"),
      consistentGets: options.featureGates.enabled("ConsistentGetFromCache"),
      log,
    });
    store = new RegistryStore(def, {
      storage: door,
      naming,
      defaulter,
      admission,
      sharding: options.featureGates.enabled("ShardedListAndWatch"),
      unsafeDeletion: options.featureGates.enabled("AllowUnsafeMalformedObjectDeletion"),
    });
    return store;
  }

  /**
   * Serve a resource added at run time (a custom resource): its store, with
   * its watch cache filled. A declaration that changes keeps the watch cache.
   */
  async add(def: ResourceDefinition): Promise<RegistryStore> {
    const old = this.#byResource.get(keyOf(def));
    const store = this.#build(def, old?.cacher);
    // Watches opened on the replaced store end with its successor.
    if (old !== undefined) store.onRetire(() => old.retire());
    this.#byResource.set(keyOf(def), store);
    if (old === undefined) await store.cacher.start();
    return store;
  }

  /** Stop serving a resource added with add() (its watch cache stops; stored objects stay). */
  remove(resource: GroupResource): void {
    const old = this.#byResource.get(keyOf(resource));
    if (old === undefined) return;
    this.#byResource.delete(keyOf(resource));
    old.retire();
    old.cacher.stop();
  }

  /** The store of a resource (a ResourceDefinition is a GroupResource); undefined when it is not served. */
  for(resource: GroupResource): RegistryStore | undefined {
    return this.#byResource.get(keyOf(resource));
  }

  get namespaces(): RegistryStore | undefined {
    return this.for({ group: "", resource: "namespaces" });
  }

  get nodes(): RegistryStore | undefined {
    return this.for({ group: "", resource: "nodes" });
  }

  get services(): RegistryStore | undefined {
    return this.for({ group: "", resource: "services" });
  }

  get endpoints(): RegistryStore | undefined {
    return this.for({ group: "", resource: "endpoints" });
  }

  get priorityClasses(): RegistryStore | undefined {
    return this.for({ group: this.#schedulingGroup, resource: "priorityclasses" });
  }

  [Symbol.iterator](): Iterator<RegistryStore> {
    return this.#byResource.values();
  }

  /** Fills every watch cache (their initial lists). */
  async start(): Promise<void> {
    await Promise.all([...this].map((s) => s.cacher.start()));
  }

  /** The store was compacted to `revision`: the caches stop serving older reads. */
  compacted(revision: number): void {
    for (const s of this) s.cacher.compacted(revision);
  }

  stop(): void {
    for (const s of this) s.cacher.stop();
  }
}

function keyOf(r: GroupResource): string {
  return `${r.group}/${r.resource}`;
}

function isCreateOnly(def: ResourceDefinition): boolean {
  return def.verbs !== undefined && def.verbs.length === 1 && def.verbs[0] === "create";
}
