// The owner graph of the garbage collector: one node per object uid, edges
// from metadata.ownerReferences. Owners named by a reference but not (or no
// longer) seen by an informer are "virtual" nodes. Each change returns which
// uids the collector should look at again; deciding is the collector's job.

import type { DiscoveredResource } from "../../client/index.js";
import type { ApiObject, OwnerReference } from "../../machinery/index.js";

export const ORPHAN_FINALIZER = "orphan";
export const FOREGROUND_FINALIZER = "foregroundDeletion";

export interface GraphNode {
  uid: string;
  /** The resource it was seen through; undefined for a virtual node. */
  resource: DiscoveredResource | undefined;
  apiVersion: string;
  kind: string;
  /** The object's namespace; for a virtual owner, the namespace of the dependent that named it. */
  namespace: string | undefined;
  name: string;
  owners: OwnerReference[];
  dependents: Set<string>;
  /** Seen through an informer (false: known only from ownerReferences, or deleted while dependents remain). */
  observed: boolean;
  beingDeleted: boolean;
  finalizers: string[];
}

/** What to look at again after a change. */
export interface GraphWork {
  attemptToDelete: Set<string>;
  attemptToOrphan: Set<string>;
}

/** An owner in foreground deletion: it waits for its blocking dependents. */
export function deletingDependents(node: GraphNode | undefined): boolean {
  return node !== undefined && node.observed && node.beingDeleted && node.finalizers.includes(FOREGROUND_FINALIZER);
}

export class OwnerGraph {
  readonly #nodes = new Map<string, GraphNode>();

  get(uid: string): GraphNode | undefined {
    return this.#nodes.get(uid);
  }

  get size(): number {
    return this.#nodes.size;
  }

  /** Dependents whose reference to `uid` says blockOwnerDeletion: a foreground deletion waits for them. */
  blockingDependents(uid: string): GraphNode[] {
    const node = this.#nodes.get(uid);
    if (node === undefined) return [];
    const out: GraphNode[] = [];
    for (const dep of node.dependents) {
      const d = this.#nodes.get(dep);
      if (d?.observed && d.owners.some((o) => o.uid === uid && o.blockOwnerDeletion === true)) out.push(d);
    }
    return out;
  }

  /** An informer saw the object added or changed. */
  upsert(obj: ApiObject, resource: DiscoveredResource): GraphWork {
    const work: GraphWork = { attemptToDelete: new Set(), attemptToOrphan: new Set() };
    const m = obj.metadata;
    if (!m?.uid) return work;
    let node = this.#nodes.get(m.uid);
    const before = node === undefined ? false : deletingDependents(node);
    if (node === undefined) {
      node = { uid: m.uid, resource, apiVersion: "", kind: "", namespace: undefined, name: "", owners: [], dependents: new Set(), observed: true, beingDeleted: false, finalizers: [] };
      this.#nodes.set(m.uid, node);
    }
    node.resource = resource;
    node.apiVersion = resource.group === "" ? resource.version : `${resource.group}/${resource.version}`;
    node.kind = resource.kind;
    node.namespace = m.namespace || undefined;
    node.name = m.name ?? "";
    node.observed = true;

    const owners = m.ownerReferences ?? [];
    const wanted = new Set(owners.map((o) => o.uid));
    for (const old of node.owners) if (!wanted.has(old.uid)) this.#unlink(node.uid, old.uid, work);
    const had = new Set(node.owners.map((o) => o.uid));
    for (const ref of owners) {
      if (had.has(ref.uid)) continue;
      let owner = this.#nodes.get(ref.uid);
      if (owner === undefined) {
        owner = { uid: ref.uid, resource: undefined, apiVersion: ref.apiVersion, kind: ref.kind, namespace: node.namespace, name: ref.name, owners: [], dependents: new Set(), observed: false, beingDeleted: false, finalizers: [] };
        this.#nodes.set(ref.uid, owner);
      }
      owner.dependents.add(node.uid);
    }
    node.owners = owners;
    node.beingDeleted = !!m.deletionTimestamp;
    node.finalizers = m.finalizers ?? [];

    for (const ref of owners) {
      const owner = this.#nodes.get(ref.uid);
      // An owner never seen may not exist; one deleting its dependents wants this one gone.
      if (owner === undefined || !owner.observed || deletingDependents(owner)) work.attemptToDelete.add(node.uid);
      // A foreground owner re-checks what still blocks it whenever a dependent changes.
      if (deletingDependents(owner)) work.attemptToDelete.add(ref.uid);
    }
    if (deletingDependents(node) && !before) {
      for (const dep of node.dependents) work.attemptToDelete.add(dep);
      work.attemptToDelete.add(node.uid);
    }
    if (node.beingDeleted && node.finalizers.includes(ORPHAN_FINALIZER)) work.attemptToOrphan.add(node.uid);
    return work;
  }

  /** An informer saw the object deleted. */
  remove(obj: ApiObject): GraphWork {
    const work: GraphWork = { attemptToDelete: new Set(), attemptToOrphan: new Set() };
    const uid = obj.metadata?.uid;
    const node = uid === undefined ? undefined : this.#nodes.get(uid);
    if (node === undefined || !node.observed) return work;
    for (const ref of node.owners) this.#unlink(node.uid, ref.uid, work);
    // Its dependents lost an owner: each may now be garbage.
    for (const dep of node.dependents) work.attemptToDelete.add(dep);
    if (node.dependents.size > 0) {
      // Keep the edges until the dependents are gone or let go of it.
      Object.assign(node, { observed: false, owners: [], beingDeleted: false, finalizers: [], resource: undefined });
    } else {
      this.#nodes.delete(node.uid);
    }
    return work;
  }

  #unlink(dependent: string, ownerUid: string, work: GraphWork): void {
    const owner = this.#nodes.get(ownerUid);
    if (owner === undefined) return;
    owner.dependents.delete(dependent);
    if (deletingDependents(owner)) work.attemptToDelete.add(ownerUid);
    if (!owner.observed && owner.dependents.size === 0) this.#nodes.delete(ownerUid);
  }
}
