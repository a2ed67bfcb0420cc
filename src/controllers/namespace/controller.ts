// The namespace controller: a namespace being deleted is Terminating, everything in it (every
// discovered namespaced resource) is deleted, and once nothing is left its `kubernetes` finalizer
// is removed through namespaces/finalize. Seed 000, "States and transitions", rule 6.

import { formatTimestamp, isApiError, type ApiObject } from "../../machinery/index.js";
import { WorkQueue, type DiscoveredResource, type ProcessResult, type ResourceRef } from "../../client/index.js";
import { errorMessage, type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { NAMESPACES } from "../../api/resource-refs.js";
import { NAMESPACE_FINALIZER } from "../../api/core/namespaces.js";

interface NamespaceCondition {
  type: string;
  status: "True" | "False";
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

interface Namespace extends ApiObject {
  spec?: { finalizers?: string[] | null };
  status?: { phase?: string; conditions?: NamespaceCondition[] };
}

export interface NamespaceControllerOptions {
  /** Namespaces deleted in parallel (upstream --concurrent-namespace-syncs defaults to 10). */
  workers?: number;
}

export const namespaceController: ControllerDescriptor = {
  name: "namespace-controller",
  aliases: ["namespace"],
  enabledByDefault: true,
  run: (context) => new NamespaceController(context).run(),
};

/** What deleting a namespace's content found. */
interface ContentState {
  /** Resource → objects still present. */
  remaining: Map<string, number>;
  /** Finalizer → objects it still holds. */
  finalizers: Map<string, number>;
  failures: string[];
}

export class NamespaceController {
  readonly #ctx: ControllerContext;
  readonly #workers: number;
  // Content with finalizers can take a while to go: back off to once every 30 s at most.
  readonly #queue = new WorkQueue({ name: "namespace", baseDelayMs: 20, maxDelayMs: 30_000 });

  constructor(context: ControllerContext, options: NamespaceControllerOptions = {}) {
    this.#ctx = context;
    this.#workers = options.workers ?? 5;
  }

  async run(): Promise<void> {
    const informer = this.#ctx.informers.informerFor<Namespace>({ resource: NAMESPACES });
    const enqueue = (ns: Namespace) => {
      if (ns.metadata.deletionTimestamp) this.#queue.add(ns.metadata.name!);
    };
    informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, ns) => enqueue(ns) });
    await runQueue(this.#ctx, {
      name: "namespace-controller",
      queue: this.#queue,
      workers: this.#workers,
      informers: [informer],
      describe: (name) => `namespace ${name}`,
      process: (name) => this.sync(name),
    });
  }

  /** One pass over one namespace; exported for tests. */
  async sync(name: string): Promise<ProcessResult | void> {
    const ref = await this.#namespacesResource();
    let ns: Namespace;
    try {
      ns = await this.#ctx.client.get<Namespace>(ref, { name });
    } catch (err) {
      if (isApiError(err, "NotFound")) return;
      throw err;
    }
    if (!ns.metadata.deletionTimestamp) return;
    if (ns.status?.phase !== "Terminating") ns = await this.#writeStatus(ref, ns, { ...ns.status, phase: "Terminating" });
    if (!holdsFinalizer(ns)) return; // other finalizers hold it; not ours to wait on

    let content: ContentState;
    try {
      content = await this.#deleteContent(name);
    } catch (err) {
      await this.#setConditions(ref, name, { discoveryFailed: errorMessage(err) });
      throw err;
    }
    await this.#setConditions(ref, name, { content });
    if (content.failures.length > 0) throw new Error(`deleting content failed: ${content.failures.join("; ")}`);
    if (content.remaining.size > 0) return { requeueWithBackoff: true };
    await this.#finalize(ref, name);
    this.#ctx.log(`namespace-controller: namespace ${name} is empty; removed its ${NAMESPACE_FINALIZER} finalizer`);
  }

  /** deletecollection (or list + delete) in every namespaced resource, then count what is left. */
  async #deleteContent(namespace: string): Promise<ContentState> {
    const resources = (await this.#ctx.discovery.resources()).filter(
      (r) => r.namespaced && r.verbs.includes("list") && (r.verbs.includes("deletecollection") || r.verbs.includes("delete")),
    );
    const state: ContentState = { remaining: new Map(), finalizers: new Map(), failures: [] };
    await Promise.all(
      resources.map(async (r) => {
        try {
          const left = await this.#deleteAll(r, namespace);
          if (left.length === 0) return;
          state.remaining.set(groupResource(r), left.length);
          for (const obj of left) for (const f of obj.metadata.finalizers ?? []) state.finalizers.set(f, (state.finalizers.get(f) ?? 0) + 1);
        } catch (err) {
          if (isApiError(err, "NotFound")) return; // the resource went away since discovery
          state.failures.push(`${groupResource(r)}: ${errorMessage(err)}`);
        }
      }),
    );
    return state;
  }

  async #deleteAll(r: DiscoveredResource, namespace: string): Promise<ApiObject[]> {
    const client = this.#ctx.client;
    const listRemaining = async () => (await client.listAll(r, { namespace, metadataOnly: true })).items;
    // Background: dependents elsewhere are left to the garbage collector, as upstream's deleter does.
    if (r.verbs.includes("deletecollection")) {
      try {
        await client.deleteCollection(r, { namespace, propagationPolicy: "Background" });
        return await listRemaining();
      } catch (err) {
        if (!isApiError(err, "MethodNotAllowed")) throw err;
      }
    }
    const items = await listRemaining();
    await Promise.all(
      items
        .filter((obj) => !obj.metadata.deletionTimestamp)
        .map((obj) =>
          client.delete(r, { namespace, name: obj.metadata.name!, propagationPolicy: "Background" }).catch((err: unknown) => {
            if (!isApiError(err, "NotFound")) throw err;
          }),
        ),
    );
    return listRemaining();
  }

  /** Drop our finalizer from spec.finalizers (through namespaces/finalize when served) and metadata.finalizers. */
  async #finalize(ref: ResourceRef & { finalizeSubresource?: boolean }, name: string): Promise<void> {
    const client = this.#ctx.client;
    try {
      let ns = await client.get<Namespace>(ref, { name });
      const spec = ns.spec?.finalizers ?? [];
      if (spec.includes(NAMESPACE_FINALIZER)) {
        const next: Namespace = { ...ns, spec: { ...ns.spec, finalizers: spec.filter((f) => f !== NAMESPACE_FINALIZER) } };
        ns = await client.update<Namespace>(ref, next, ref.finalizeSubresource ? { subresource: "finalize" } : {});
      }
      const meta = ns.metadata.finalizers ?? [];
      if (meta.includes(NAMESPACE_FINALIZER) && ns.metadata.name !== undefined) {
        await client.update<Namespace>(ref, { ...ns, metadata: { ...ns.metadata, finalizers: meta.filter((f) => f !== NAMESPACE_FINALIZER) } });
      }
    } catch (err) {
      if (!isApiError(err, "NotFound")) throw err; // gone: finalized
    }
  }

  /** Upstream's deletion conditions, so `kubectl describe namespace` says what the namespace waits on. */
  async #setConditions(ref: ResourceRef & { statusSubresource?: boolean }, name: string, what: { content?: ContentState; discoveryFailed?: string }): Promise<void> {
    const c = what.content;
    const conditions: NamespaceCondition[] = [
      what.discoveryFailed !== undefined
        ? cond("NamespaceDeletionDiscoveryFailure", true, "DiscoveryFailed", `Discovery failed for some groups: ${what.discoveryFailed}`)
        : cond("NamespaceDeletionDiscoveryFailure", false, "ResourcesDiscovered", "All resources successfully discovered"),
    ];
    if (c !== undefined) {
      conditions.push(
        c.failures.length > 0
          ? cond("NamespaceDeletionContentFailure", true, "ContentDeletionFailed", `Failed to delete all resource types, ${c.failures.length} remaining: ${c.failures.join(", ")}`)
          : cond("NamespaceDeletionContentFailure", false, "ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
        c.remaining.size > 0
          ? cond("NamespaceContentRemaining", true, "SomeResourcesRemain", `Some resources are remaining: ${[...c.remaining].sort().map(([gr, n]) => `${gr} has ${n} resource instances`).join(", ")}`)
          : cond("NamespaceContentRemaining", false, "ContentRemoved", "All content successfully removed"),
        c.finalizers.size > 0
          ? cond("NamespaceFinalizersRemaining", true, "SomeFinalizersRemain", `Some content in the namespace has finalizers remaining: ${[...c.finalizers].sort().map(([f, n]) => `${f} in ${n} resource instances`).join(", ")}`)
          : cond("NamespaceFinalizersRemaining", false, "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
      );
    }
    try {
      const ns = await this.#ctx.client.get<Namespace>(ref, { name });
      const old = ns.status?.conditions ?? [];
      const merged = conditions.map((c) => {
        const prev = old.find((o) => o.type === c.type);
        const same = prev !== undefined && prev.status === c.status;
        return { ...c, lastTransitionTime: same && prev.lastTransitionTime ? prev.lastTransitionTime : formatTimestamp() };
      });
      const kept = old.filter((o) => !merged.some((m) => m.type === o.type));
      const next = [...kept, ...merged];
      const unchanged = next.length === old.length && next.every((n) => old.some((o) => o.type === n.type && o.status === n.status && o.reason === n.reason && o.message === n.message));
      if (!unchanged) await this.#writeStatus(ref, ns, { ...ns.status, conditions: next });
    } catch (err) {
      // Conditions are advice: a conflict or a vanished namespace must not stop the deletion itself.
      if (!isApiError(err, "Conflict") && !isApiError(err, "NotFound")) throw err;
    }
  }

  async #writeStatus(ref: ResourceRef & { statusSubresource?: boolean }, ns: Namespace, status: NonNullable<Namespace["status"]>): Promise<Namespace> {
    return this.#ctx.client.update<Namespace>(ref, { ...ns, status }, ref.statusSubresource ? { subresource: "status" } : {});
  }

  /** The namespaces resource as served, with which of status/finalize it has. */
  async #namespacesResource(): Promise<ResourceRef & { statusSubresource: boolean; finalizeSubresource: boolean }> {
    const found = (await this.#ctx.discovery.resources()).find((r) => r.group === "" && r.resource === "namespaces");
    const subs = found?.subresources ?? [];
    return {
      ...(found ?? NAMESPACES),
      statusSubresource: subs.some((s) => s.name === "status"),
      finalizeSubresource: subs.some((s) => s.name === "finalize"),
    };
  }
}

function holdsFinalizer(ns: Namespace): boolean {
  return (ns.spec?.finalizers ?? []).includes(NAMESPACE_FINALIZER) || (ns.metadata.finalizers ?? []).includes(NAMESPACE_FINALIZER);
}

function groupResource(r: ResourceRef): string {
  return r.group === "" ? r.resource : `${r.resource}.${r.group}`;
}

function cond(type: string, status: boolean, reason: string, message: string): NamespaceCondition {
  return { type, status: status ? "True" : "False", reason, message };
}
