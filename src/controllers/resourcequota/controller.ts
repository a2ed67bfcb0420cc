// The ResourceQuota controller (upstream's resourcequota controller): keeps
// every quota's status.hard equal to spec.hard and status.used the
// namespace's actual use of each resource it holds, counted with the same
// rules quota admission charges by (api/core/resource-quotas-usage.ts). A
// quota is recounted when its spec changes, when a pod, service, config
// map, secret, replication controller or quota of its namespace is deleted
// or a pod finishes (replenishment: what admission charged is returned), and
// on a full resync every 5 minutes (upstream's --resource-quota-sync-period
// default; not a flag here). A kind counted by `count/<resource>.<group>`
// alone is watched from the first quota that counts it (a metadata cache,
// shared with the garbage collector's), so its deletions free quota at once too.

import { isDeepStrictEqual } from "node:util";
import { isApiError, type ApiObject, type GroupResource } from "../../machinery/index.js";
import { NAMESPACE_INDEX, WorkQueue, keyOf, splitKey, type Informer, type ResourceRef } from "../../client/index.js";
import type { Pod, ResourceQuota } from "../../api/core/index.js";
import { add, formatQuantity, quantity, ZERO, type Quantity } from "../../api/core/quantity-math.js";
import { objectUsage, podCountsForCompute, quotaSelects, sourceOf } from "../../api/core/resource-quotas-usage.js";
import { CONFIGMAPS, PODS, REPLICATIONCONTROLLERS, RESOURCEQUOTAS, SECRETS, SERVICES } from "../../api/resource-refs.js";
import type { ControllerContext, ControllerDescriptor } from "../controller.js";
import { nowMs } from "../controller.js";
import { runQueue } from "../run-queue.js";

/**
 * Resources watched so a change frees quota at once; others are counted on
 * resync. Pods and services are read whole (their usage is in their spec);
 * the rest count as objects, so their metadata caches (the garbage
 * collector's, shared through the informer factory) are enough.
 */
const REPLENISHED: readonly { ref: ResourceRef; metadataOnly: boolean }[] = [
  { ref: PODS, metadataOnly: false },
  { ref: SERVICES, metadataOnly: false },
  { ref: RESOURCEQUOTAS, metadataOnly: false },
  { ref: CONFIGMAPS, metadataOnly: true },
  { ref: SECRETS, metadataOnly: true },
  { ref: REPLICATIONCONTROLLERS, metadataOnly: true },
];

export interface ResourceQuotaControllerOptions {
  /** Full recount of every quota (default 5 m, upstream's --resource-quota-sync-period default). */
  resyncMs?: number;
  /** Quotas synced in parallel (default 5, upstream's --concurrent-resource-quota-syncs default). */
  workers?: number;
}

export const resourceQuotaController: ControllerDescriptor = {
  name: "resourcequota-controller",
  aliases: ["resourcequota"],
  enabledByDefault: true,
  run: (context) => new ResourceQuotaController(context).run(),
};

const grKey = (gr: GroupResource) => `${gr.group}/${gr.resource}`;

export class ResourceQuotaController {
  readonly #ctx: ControllerContext;
  readonly #resyncMs: number;
  readonly #workers: number;
  readonly queue = new WorkQueue({ name: "resourcequota_primary" });
  readonly #quotas: Informer<ResourceQuota>;
  readonly #watched = new Map<string, Informer<ApiObject>>();
  /** Frees quota when an object of a watched kind is deleted (set by run()). */
  #onWatched: (gr: string, informer: Informer<ApiObject>) => void = () => {};

  constructor(context: ControllerContext, options: ResourceQuotaControllerOptions = {}) {
    this.#ctx = context;
    this.#resyncMs = options.resyncMs ?? 5 * 60_000;
    this.#workers = options.workers ?? 5;
    this.#quotas = context.informers.informerFor<ResourceQuota>({ resource: RESOURCEQUOTAS });
    for (const { ref, metadataOnly } of REPLENISHED) this.#watched.set(grKey(ref), context.informers.informerFor<ApiObject>({ resource: ref, metadataOnly }));
  }

  async run(): Promise<void> {
    const enqueue = (rq: ResourceQuota) => this.queue.add(keyOf(rq));
    // Status changes are admission's and ours: only a new spec.hard (or one not yet reported) needs a count.
    const hardChanged = (rq: ResourceQuota) => !isDeepStrictEqual(rq.spec?.hard ?? {}, rq.status?.hard ?? {});
    this.#quotas.addEventHandler({
      onAdd: enqueue,
      onUpdate: (old, rq) => {
        if (hardChanged(rq) || !isDeepStrictEqual(old.spec, rq.spec)) enqueue(rq);
      },
      onDelete: () => {},
    });
    // Creates were charged by admission: only what frees quota needs a count (a recount racing a
    // charge whose object the caches have not seen yet would undo the charge).
    const replenish = (obj: ApiObject) => {
      for (const rq of this.#quotas.byIndex(NAMESPACE_INDEX, obj.metadata.namespace ?? "")) enqueue(rq);
    };
    this.#onWatched = (gr, informer) => {
      const pods = gr === grKey(PODS);
      informer.addEventHandler({
        onUpdate: (old, obj) => {
          if (pods && podCountsForCompute(old as Pod, nowMs(this.#ctx)) && !podCountsForCompute(obj as Pod, nowMs(this.#ctx))) replenish(obj);
        },
        onDelete: replenish,
      });
    };
    for (const [gr, informer] of this.#watched) this.#onWatched(gr, informer);
    const timer = setInterval(() => {
      for (const rq of this.#quotas.list()) enqueue(rq);
    }, this.#resyncMs);
    timer.unref();
    this.#ctx.signal.addEventListener("abort", () => clearInterval(timer), { once: true });
    await runQueue(this.#ctx, { name: "resourcequota-controller", queue: this.queue, workers: this.#workers, informers: [this.#quotas, ...this.#watched.values()], process: (key) => this.sync(key) });
  }

  /** Recounts one quota ("namespace/name") and writes its status when it changed. */
  async sync(key: string): Promise<void> {
    const rq = this.#quotas.get(key);
    if (rq === undefined) return;
    const { namespace } = splitKey(key);
    const hard = rq.spec?.hard ?? {};
    const objects = new Map<string, readonly ApiObject[]>();
    const used: Record<string, string> = {};
    const now = nowMs(this.#ctx);
    for (const name of Object.keys(hard).sort()) {
      const gr = sourceOf(name);
      let total: Quantity = ZERO;
      if (gr !== undefined) {
        let items = objects.get(grKey(gr));
        if (items === undefined) objects.set(grKey(gr), (items = await this.#objects(gr, namespace!)));
        for (const obj of items) {
          if (!quotaSelects(rq, gr, obj)) continue;
          const q = objectUsage(gr, obj, now).get(name);
          if (q !== undefined) total = add(total, q);
        }
      }
      // The unit of the limit (binary or not) is the unit of the count.
      used[name] = formatQuantity({ milli: total.milli, binary: quantity(hard[name])?.binary ?? false });
    }
    const status = { hard: { ...hard }, used };
    if (isDeepStrictEqual(rq.status ?? {}, status)) return;
    // Written over the version read: a charge admission made since is a conflict, and the pass runs again.
    await this.#ctx.client.update<ResourceQuota>(RESOURCEQUOTAS, { ...rq, status }, { subresource: "status" }).catch((err: unknown) => {
      if (!isApiError(err, "NotFound")) throw err;
    });
  }

  /** The namespace's objects of `gr` from its cache, watched from now on when it was not (a resource not served counts nothing). */
  async #objects(gr: GroupResource, namespace: string): Promise<readonly ApiObject[]> {
    let watched = this.#watched.get(grKey(gr));
    if (watched === undefined) {
      const ref = (await this.#ctx.discovery.resources()).find((r) => r.group === gr.group && r.resource === gr.resource && r.preferred);
      if (ref === undefined || !ref.namespaced) return [];
      watched = this.#watched.get(grKey(gr)); // another worker may have started it meanwhile
      if (watched === undefined) {
        watched = this.#ctx.informers.informerFor<ApiObject>({ resource: ref, metadataOnly: true });
        this.#watched.set(grKey(gr), watched);
        this.#onWatched(grKey(gr), watched);
      }
    }
    if (!watched.hasSynced() && !(await watched.waitForSync(this.#ctx.signal))) return [];
    return watched.byIndex(NAMESPACE_INDEX, namespace);
  }
}
