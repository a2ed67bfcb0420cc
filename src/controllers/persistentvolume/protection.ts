// The storage-object-in-use protection controllers (upstream's
// pvc-protection-controller and pv-protection-controller): the admission
// plugin puts `<domain>/pvc-protection` on every claim and `<domain>/pv-protection`
// on every volume; once one is being deleted, its finalizer is removed when
// no pod that has not finished uses the claim / when the volume is not Bound.

import { keyOf, WorkQueue, type Informer } from "../../client/index.js";
import type { Pod } from "../../api/core/types.js";
import type { PersistentVolume, PersistentVolumeClaim } from "../../api/core/index.js";
import { PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS } from "../../api/resource-refs.js";
import type { ApiObject } from "../../machinery/index.js";
import { storageKeys } from "../../machinery/naming.js";
import type { ControllerContext, ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";
import type { RestClient, ResourceRef } from "../../client/index.js";

export const pvcProtectionController: ControllerDescriptor = {
  name: "persistentvolumeclaim-protection-controller",
  aliases: ["pvc-protection"],
  enabledByDefault: true,
  run: (context) => new PvcProtectionController(context).run(),
};

export const pvProtectionController: ControllerDescriptor = {
  name: "persistentvolume-protection-controller",
  aliases: ["pv-protection"],
  enabledByDefault: true,
  run: (context) => new PvProtectionController(context).run(),
};

/** The claims a pod mounts (directly; ephemeral volumes' claims are named <pod>-<volume>). */
export function claimsOf(pod: Pod): string[] {
  return (pod.spec?.volumes ?? []).flatMap((v) => {
    const src = v["persistentVolumeClaim"] as { claimName?: string } | undefined;
    if (src?.claimName) return [src.claimName];
    if (v["ephemeral"] != null) return [`${pod.metadata.name}-${v.name}`];
    return [];
  });
}

const finished = (pod: Pod) => pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";

async function removeFinalizer(client: RestClient, ref: ResourceRef, obj: ApiObject, finalizer: string): Promise<void> {
  const next = structuredClone(obj);
  next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  await client.update(ref, next, obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {});
}

export class PvcProtectionController {
  readonly #ctx: ControllerContext;
  readonly #finalizer: string;
  readonly #queue = new WorkQueue({ name: "pvcprotection", baseDelayMs: 50, maxDelayMs: 30_000 });
  readonly #claims: Informer<PersistentVolumeClaim>;
  readonly #pods: Informer<Pod>;

  constructor(context: ControllerContext) {
    this.#ctx = context;
    this.#finalizer = storageKeys(context.naming).pvcProtection;
    this.#claims = context.informers.informerFor<PersistentVolumeClaim>({ resource: PERSISTENT_VOLUME_CLAIMS });
    this.#pods = context.informers.informerFor<Pod>({ resource: PODS });
  }

  async run(): Promise<void> {
    const claim = (pvc: PersistentVolumeClaim) => {
      if (pvc.metadata.deletionTimestamp && pvc.metadata.finalizers?.includes(this.#finalizer)) this.#queue.add(keyOf(pvc));
    };
    this.#claims.addEventHandler({ onAdd: claim, onUpdate: (_o, n) => claim(n) });
    const pod = (p: Pod) => {
      if (p.metadata.deletionTimestamp || finished(p)) for (const c of claimsOf(p)) this.#queue.add(`${p.metadata.namespace}/${c}`);
    };
    this.#pods.addEventHandler({ onUpdate: (_o, n) => pod(n), onDelete: (p) => {
      for (const c of claimsOf(p)) this.#queue.add(`${p.metadata.namespace}/${c}`);
    } });
    await runQueue(this.#ctx, { name: "persistentvolumeclaim-protection-controller", queue: this.#queue, workers: 1, informers: [this.#claims, this.#pods], process: (key) => this.sync(key) });
  }

  /** Removes the finalizer of a deleted claim no running pod uses; exported for tests. */
  async sync(key: string): Promise<void> {
    const pvc = this.#claims.get(key);
    if (pvc === undefined || !pvc.metadata.deletionTimestamp || !pvc.metadata.finalizers?.includes(this.#finalizer)) return;
    const namespace = pvc.metadata.namespace!;
    const name = pvc.metadata.name!;
    const uses = (p: Pod) => p.metadata.namespace === namespace && !finished(p) && claimsOf(p).includes(name);
    if (this.#pods.list().some(uses)) return;
    // The cache may not have seen a pod just created: ask the server before letting go (as upstream).
    const live = await this.#ctx.client.list<Pod>(PODS, { namespace });
    if (live.items.some(uses)) return;
    await removeFinalizer(this.#ctx.client, PERSISTENT_VOLUME_CLAIMS, pvc, this.#finalizer);
  }
}

export class PvProtectionController {
  readonly #ctx: ControllerContext;
  readonly #finalizer: string;
  readonly #queue = new WorkQueue({ name: "pvprotection", baseDelayMs: 50, maxDelayMs: 30_000 });
  readonly #volumes: Informer<PersistentVolume>;

  constructor(context: ControllerContext) {
    this.#ctx = context;
    this.#finalizer = storageKeys(context.naming).pvProtection;
    this.#volumes = context.informers.informerFor<PersistentVolume>({ resource: PERSISTENT_VOLUMES });
  }

  async run(): Promise<void> {
    const volume = (pv: PersistentVolume) => {
      if (pv.metadata.deletionTimestamp && pv.metadata.finalizers?.includes(this.#finalizer)) this.#queue.add(keyOf(pv));
    };
    this.#volumes.addEventHandler({ onAdd: volume, onUpdate: (_o, n) => volume(n) });
    await runQueue(this.#ctx, { name: "persistentvolume-protection-controller", queue: this.#queue, workers: 1, informers: [this.#volumes], process: (key) => this.sync(key) });
  }

  /** Removes the finalizer of a deleted volume that is not Bound; exported for tests. */
  async sync(name: string): Promise<void> {
    const pv = this.#volumes.get(name);
    if (pv === undefined || !pv.metadata.deletionTimestamp || !pv.metadata.finalizers?.includes(this.#finalizer)) return;
    if (pv.status?.phase === "Bound") return;
    await removeFinalizer(this.#ctx.client, PERSISTENT_VOLUMES, pv, this.#finalizer);
  }
}
