// The garbage collector: metadata-only informers on every deletable resource feed the owner graph;
// objects whose owners are gone are deleted, `foregroundDeletion` owners wait for their blocking
// dependents, `orphan` owners first let go of theirs. Owners are checked live before any delete.

import { WorkQueue, type PropagationPolicy, type ResourceRef } from "../../client/index.js";
import { isApiError, type ApiObject, type OwnerReference } from "../../machinery/index.js";
import { errorMessage, type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, OwnerGraph, type GraphNode, type GraphWork } from "./graph.js";
import { sleep } from "../../machinery/until.js";

export interface GarbageCollectorOptions {
  /** Parallel deletions (upstream --concurrent-gc-syncs defaults to 20). */
  workers?: number;
  /** How often discovery is read again for new resources (default 30 s, as upstream). */
  rediscoverEveryMs?: number;
}

export const garbageCollectorController: ControllerDescriptor = {
  name: "garbage-collector-controller",
  aliases: ["garbagecollector", "garbage-collector"],
  enabledByDefault: true,
  run: (context) => new GarbageCollector(context).run(),
};

/** High-churn resources that never own anything (upstream's default ignore list). */
const IGNORED = new Set(["/events", "events.k8s.io/events"]);

type OwnerState = "solid" | "dangling" | "waiting";

export class GarbageCollector {
  readonly #ctx: ControllerContext;
  readonly #options: GarbageCollectorOptions;
  readonly #graph = new OwnerGraph();
  readonly #toDelete = new WorkQueue({ name: "garbage_collector_attempt_to_delete", baseDelayMs: 5, maxDelayMs: 60_000 });
  readonly #toOrphan = new WorkQueue({ name: "garbage_collector_attempt_to_orphan", baseDelayMs: 5, maxDelayMs: 60_000 });
  /** group/resource of every resource with a monitor. */
  readonly #monitored = new Set<string>();

  constructor(context: ControllerContext, options: GarbageCollectorOptions = {}) {
    this.#ctx = context;
    this.#options = options;
    // From the start (the run loop would do it later): the monitors queue work while discovery is still under way.
    this.#toDelete.instrument(context.metrics);
    this.#toOrphan.instrument(context.metrics);
  }

  /** The owner graph (for tests and status pages). */
  get graph(): OwnerGraph {
    return this.#graph;
  }

  async run(): Promise<void> {
    const { signal } = this.#ctx;
    while (!signal.aborted) {
      try {
        await this.#syncMonitors();
        break;
      } catch (err) {
        this.#ctx.log(`garbage-collector: discovery failed: ${errorMessage(err)}; retrying`);
        await sleep(1000, signal);
      }
    }
    const name = "garbage-collector";
    const rediscover = async () => {
      if (!(await this.#ctx.informers.waitForSync(signal))) return;
      const every = this.#options.rediscoverEveryMs ?? 30_000;
      while (!signal.aborted) {
        await sleep(every, signal);
        if (signal.aborted) break;
        await this.#syncMonitors().catch((err: unknown) => this.#ctx.log(`garbage-collector: discovery failed: ${errorMessage(err)}`));
      }
    };
    await Promise.all([
      runQueue(this.#ctx, { name, queue: this.#toDelete, workers: this.#options.workers ?? 10, describe: (uid) => `deleting ${this.#describe(uid)}`, process: (uid) => this.attemptToDelete(uid) }),
      runQueue(this.#ctx, { name, queue: this.#toOrphan, workers: 2, describe: (uid) => `orphaning dependents of ${this.#describe(uid)}`, process: (uid) => this.attemptToOrphan(uid) }),
      rediscover(),
    ]);
  }

  /** A metadata-only informer per resource that can be listed, watched and deleted; new resources join later. */
  async #syncMonitors(): Promise<void> {
    const resources = await this.#ctx.discovery.refresh();
    for (const r of resources) {
      const key = `${r.group}/${r.resource}`;
      if (this.#monitored.has(key) || IGNORED.has(key)) continue;
      if (!["list", "watch", "delete", "get"].every((v) => r.verbs.includes(v))) continue;
      this.#monitored.add(key);
      const informer = this.#ctx.informers.informerFor({ resource: r, metadataOnly: true });
      informer.addEventHandler({
        onAdd: (obj) => this.#schedule(this.#graph.upsert(obj, r)),
        onUpdate: (_old, obj) => this.#schedule(this.#graph.upsert(obj, r)),
        onDelete: (obj) => this.#schedule(this.#graph.remove(obj)),
      });
    }
  }

  #schedule(work: GraphWork): void {
    for (const uid of work.attemptToDelete) this.#toDelete.add(uid);
    for (const uid of work.attemptToOrphan) this.#toOrphan.add(uid);
  }

  /**
   * Should this object go? Foreground owners: remove the finalizer once no
   * blocking dependent is left. Dependents: delete when no owner is left
   * (or the remaining ones are deleting their dependents); drop references
   * to gone owners when a live owner remains.
   */
  async attemptToDelete(uid: string): Promise<void> {
    const node = this.#graph.get(uid);
    if (node === undefined || !node.observed || node.resource === undefined) return;
    const latest = await this.#getLive(node.resource, node.namespace, node.name);
    if (latest === undefined || latest.metadata.uid !== uid) return; // gone, or another object now: its events will follow
    const meta = latest.metadata;
    const foreground = !!meta.deletionTimestamp && (meta.finalizers ?? []).includes(FOREGROUND_FINALIZER);
    if (meta.deletionTimestamp && !foreground) return; // already going, with other finalizers to wait for

    if (foreground) {
      const blocking = this.#graph.blockingDependents(uid);
      if (blocking.length === 0) {
        await this.#removeFinalizer(node.resource, node.namespace, node.name, uid, FOREGROUND_FINALIZER);
        return;
      }
      // Dependents were queued when the owner entered foreground deletion; their changes bring it back here.
      for (const dep of blocking) if (!dep.beingDeleted) this.#toDelete.add(dep.uid);
      return;
    }

    const owners = meta.ownerReferences ?? [];
    if (owners.length === 0) return;
    const states = await Promise.all(owners.map((ref) => this.#ownerState(ref, node)));
    const solid = owners.filter((_, i) => states[i] === "solid");
    const dangling = owners.filter((_, i) => states[i] === "dangling");
    const waiting = owners.filter((_, i) => states[i] === "waiting");

    if (solid.length > 0) {
      // It stays; references to owners that are gone or going are let go of, so they stop waiting for it.
      if (dangling.length + waiting.length > 0) {
        const drop = new Set([...dangling, ...waiting].map((o) => o.uid));
        await this.#editOwnerReferences(node, (refs) => refs.filter((r) => !drop.has(r.uid)));
      }
      return;
    }

    let policy: PropagationPolicy;
    if (waiting.length > 0 && node.dependents.size > 0) {
      // Our own dependents go first (foreground), but the waiting owners must not wait for them in turn.
      const unblock = new Set(waiting.map((o) => o.uid));
      await this.#editOwnerReferences(node, (refs) => refs.map((r) => (unblock.has(r.uid) && r.blockOwnerDeletion ? { ...r, blockOwnerDeletion: false } : r)));
      policy = "Foreground";
    } else {
      const finalizers = meta.finalizers ?? [];
      policy = finalizers.includes(ORPHAN_FINALIZER) ? "Orphan" : finalizers.includes(FOREGROUND_FINALIZER) ? "Foreground" : "Background";
    }
    const why = waiting.length > 0 ? `owners being deleted in the foreground` : `owners gone`;
    this.#ctx.log(`garbage-collector: deleting ${this.#describe(uid)}: ${why} (${owners.map((o) => `${o.kind}/${o.name}`).join(", ")}); propagation ${policy}`);
    try {
      await this.#ctx.client.delete(node.resource, { ...this.#scope(node), name: node.name, propagationPolicy: policy, preconditions: { uid } });
    } catch (err) {
      // Already gone, or a different object under that name now.
      if (!isApiError(err, "NotFound") && !isApiError(err, "Conflict")) throw err;
    }
  }

  /** An owner deleted with `orphan`: remove its references from every dependent, then the finalizer. */
  async attemptToOrphan(uid: string): Promise<void> {
    const node = this.#graph.get(uid);
    if (node === undefined || !node.observed || node.resource === undefined) return;
    const latest = await this.#getLive(node.resource, node.namespace, node.name);
    if (latest === undefined || latest.metadata.uid !== uid) return;
    if (!latest.metadata.deletionTimestamp || !(latest.metadata.finalizers ?? []).includes(ORPHAN_FINALIZER)) return;
    for (const depUid of [...node.dependents]) {
      const dep = this.#graph.get(depUid);
      if (dep?.observed) await this.#editOwnerReferences(dep, (refs) => refs.filter((r) => r.uid !== uid));
    }
    await this.#removeFinalizer(node.resource, node.namespace, node.name, uid, ORPHAN_FINALIZER);
  }

  async #ownerState(ref: OwnerReference, dependent: GraphNode): Promise<OwnerState> {
    const known = this.#graph.get(ref.uid);
    // Seen alive and not being deleted: no need to ask (its deletion would bring the dependent back here).
    if (known?.observed && !known.beingDeleted) return "solid";
    const resource = await this.#ctx.discovery.lookupKind(ref.apiVersion, ref.kind);
    if (resource === undefined) throw new Error(`owner ${ref.kind}/${ref.name} has a kind the server does not serve (${ref.apiVersion})`);
    // A cluster-scoped object cannot be owned by a namespaced one: such a reference points at nothing.
    if (resource.namespaced && dependent.namespace === undefined) return "dangling";
    const owner = await this.#getLive(resource, resource.namespaced ? dependent.namespace : undefined, ref.name);
    if (owner === undefined || owner.metadata.uid !== ref.uid) return "dangling";
    if (owner.metadata.deletionTimestamp && (owner.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER)) return "waiting";
    return "solid";
  }

  async #getLive(resource: ResourceRef, namespace: string | undefined, name: string): Promise<ApiObject | undefined> {
    try {
      return await this.#ctx.client.get(resource, { ...(resource.namespaced ? { namespace } : {}), name, metadataOnly: true });
    } catch (err) {
      if (isApiError(err, "NotFound")) return undefined;
      throw err;
    }
  }

  /** Rewrite an object's ownerReferences, conditional on the version read (a conflict retries). */
  async #editOwnerReferences(node: GraphNode, edit: (refs: OwnerReference[]) => OwnerReference[]): Promise<void> {
    if (node.resource === undefined) return;
    const latest = await this.#getLive(node.resource, node.namespace, node.name);
    if (latest === undefined || latest.metadata.uid !== node.uid) return;
    const refs = latest.metadata.ownerReferences ?? [];
    const next = edit(refs);
    if (JSON.stringify(next) === JSON.stringify(refs)) return;
    await this.#ctx.client.patch(node.resource, {
      ...this.#scope(node),
      name: node.name,
      patch: { metadata: { ownerReferences: next.length > 0 ? next : null, resourceVersion: latest.metadata.resourceVersion } },
    });
  }

  async #removeFinalizer(resource: ResourceRef, namespace: string | undefined, name: string, uid: string, finalizer: string): Promise<void> {
    const latest = await this.#getLive(resource, namespace, name);
    if (latest === undefined || latest.metadata.uid !== uid) return;
    const finalizers = latest.metadata.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return;
    const next = finalizers.filter((f) => f !== finalizer);
    try {
      await this.#ctx.client.patch(resource, {
        ...(resource.namespaced ? { namespace } : {}),
        name,
        patch: { metadata: { finalizers: next.length > 0 ? next : null, resourceVersion: latest.metadata.resourceVersion } },
      });
    } catch (err) {
      if (!isApiError(err, "NotFound")) throw err;
    }
  }

  #scope(node: GraphNode): { namespace?: string } {
    return node.resource?.namespaced && node.namespace !== undefined ? { namespace: node.namespace } : {};
  }

  #describe(uid: string): string {
    const n = this.#graph.get(uid);
    if (n === undefined) return `object ${uid}`;
    return `${n.kind} ${n.namespace ? `${n.namespace}/` : ""}${n.name} (uid ${uid})`;
  }
}

