// What the built-in admission plugins read (namespaces, LimitRanges,
// ResourceQuotas, PriorityClasses, RuntimeClasses, storage and ingress
// classes): the watch cache, as upstream's plugins read their informers,
// instead of a consistent read per plugin per request (on etcd each was a
// call: a create made 1.5-2 etcd calls where upstream makes one).
//
// The cache is read once it has applied every write this server made to the
// resource (CachedStorage.ownWrites, no backend call): a LimitRange or quota
// created through this server applies to the very next pod, as a consistent
// read would. Writes made through another API server show up as the cache
// follows etcd, like upstream's informers. A get the cache cannot answer (the
// object is not there yet, or the cache is behind) is a consistent read, as
// upstream's live lookups; so is a list that meets an undecodable object.

import type { ApiObject } from "../machinery/index.js";
import type { RegistryStore } from "./registry/store.js";

/** A store's reads as the admission plugins' lookups take them (get by name, list of a namespace or of all). */
export interface AdmissionReads {
  readonly def: RegistryStore["def"];
  get(namespace: string | undefined, name: string): Promise<{ readonly object: ApiObject }>;
  list(namespace: string | undefined, params: {}): Promise<{ readonly items: readonly { readonly object: ApiObject }[] }>;
  /** The store's own read-modify-write (ResourceQuota charges the quota through it). */
  modify: RegistryStore["modify"];
  /** The store's own create (the system PriorityClasses). */
  create: RegistryStore["create"];
}

const made = new WeakMap<RegistryStore, AdmissionReads>();

/** `store`'s reads from its watch cache (one wrapper per store); undefined when the resource is not served. */
export function admissionReads(store: RegistryStore): AdmissionReads;
export function admissionReads(store: RegistryStore | undefined): AdmissionReads | undefined;
export function admissionReads(store: RegistryStore | undefined): AdmissionReads | undefined {
  if (store === undefined) return undefined;
  let reads = made.get(store);
  if (reads === undefined) made.set(store, (reads = cacheReads(store)));
  return reads;
}

function cacheReads(store: RegistryStore): AdmissionReads {
  const door = store.cacher;
  return {
    def: store.def,
    modify: store.modify.bind(store),
    create: store.create.bind(store),
    async get(namespace, name) {
      const found = await door.get(store.keyFor(namespace, name), door.ownWrites()).catch(() => undefined);
      if (found !== undefined) return found;
      // Not in the cache (yet): a consistent read, NotFound when it is really absent.
      return store.get(namespace, name);
    },
    async list(namespace, params) {
      const listed = await door.list(store.prefixFor(namespace), door.ownWrites()).catch(() => undefined);
      if (listed !== undefined && listed.corrupt.length === 0) return listed;
      return store.list(namespace, params);
    },
  };
}
