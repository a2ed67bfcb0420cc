// The PV binder (upstream's persistentvolume-binder-controller, simplified):
// a pending claim is bound to a matching volume (matching.ts), both sides'
// spec and status written in upstream's order (volume.claimRef, volume Bound,
// claim.volumeName, claim Bound). A claim of a WaitForFirstConsumer class
// waits for the scheduler's `volume.<domain>/selected-node` annotation; a claim
// nothing matches is handed to its class's provisioner with the
// `volume.<domain>/storage-provisioner` annotation. A volume whose claim is
// gone is Released; Retain keeps it so, Delete leaves it to the provisioner
// that made it (pv.<domain>/provisioned-by) and fails a volume nobody made.

import { keyOf, WorkQueue, type Informer } from "../../client/index.js";
import type { Node } from "../../api/core/types.js";
import { findMatchingVolume, volumeRefersTo, type PersistentVolume, type PersistentVolumeClaim } from "../../api/core/index.js";
import type { StorageClass } from "../../api/storage/index.js";
import { NODES, PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, storageClassResource } from "../../api/resource-refs.js";
import { formatTimestamp } from "../../machinery/index.js";
import { storageKeys, type StorageKeys } from "../../machinery/naming.js";
import { nowMs, type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { EventRecorder } from "../events.js";
import { getIfExists } from "../resources.js";
import { runQueue } from "../run-queue.js";

export const persistentVolumeBinderController: ControllerDescriptor = {
  name: "persistentvolume-binder-controller",
  aliases: ["persistentvolume-binder"],
  enabledByDefault: true,
  run: (context) => new PersistentVolumeBinder(context).run(),
};

const CLAIM = "pvc:";
const VOLUME = "pv:";
/** upstream's --pvclaimbinder-sync-period default. */
const RESYNC_MS = 15_000;

export class PersistentVolumeBinder {
  readonly #ctx: ControllerContext;
  readonly #keys: StorageKeys;
  readonly #queue = new WorkQueue({ name: "volumes", baseDelayMs: 50, maxDelayMs: 30_000 });
  readonly #events: EventRecorder;
  readonly #claims: Informer<PersistentVolumeClaim>;
  readonly #volumes: Informer<PersistentVolume>;
  readonly #classes: Informer<StorageClass>;
  readonly #nodes: Informer<Node>;
  /** Claims (uid/reason) already told about, so a waiting claim is not flooded with events. */
  readonly #told = new Set<string>();

  constructor(context: ControllerContext) {
    this.#ctx = context;
    this.#keys = storageKeys(context.naming);
    this.#events = new EventRecorder(context, "persistentvolume-controller");
    const { informers } = context;
    this.#claims = informers.informerFor<PersistentVolumeClaim>({ resource: PERSISTENT_VOLUME_CLAIMS });
    this.#volumes = informers.informerFor<PersistentVolume>({ resource: PERSISTENT_VOLUMES });
    this.#classes = informers.informerFor<StorageClass>({ resource: storageClassResource(context.naming) });
    this.#nodes = informers.informerFor<Node>({ resource: NODES });
  }

  async run(): Promise<void> {
    const claim = (pvc: PersistentVolumeClaim) => this.#queue.add(CLAIM + keyOf(pvc));
    const volume = (pv: PersistentVolume) => {
      this.#queue.add(VOLUME + keyOf(pv));
      const ref = pv.spec?.claimRef;
      if (ref?.name) this.#queue.add(`${CLAIM}${ref.namespace ?? ""}/${ref.name}`);
    };
    // Every 15 s all claims and volumes are looked at again, as upstream's PV controller does.
    this.#claims.addEventHandler({ onAdd: claim, onUpdate: (_o, n) => claim(n), onDelete: (pvc) => {
      for (const k of this.#told) if (k.startsWith(`${pvc.metadata.uid}/`)) this.#told.delete(k);
      // Its volume is released: the one it names, and any bound to it (deleted before the bind's second half).
      if (pvc.spec?.volumeName) this.#queue.add(VOLUME + pvc.spec.volumeName);
      for (const pv of this.#volumes.list()) if (pv.spec?.claimRef?.uid === pvc.metadata.uid) this.#queue.add(VOLUME + keyOf(pv));
    } }, { resyncPeriodMs: RESYNC_MS });
    this.#volumes.addEventHandler({ onAdd: volume, onUpdate: (_o, n) => volume(n), onDelete: (pv) => {
      const ref = pv.spec?.claimRef;
      if (ref?.name) this.#queue.add(`${CLAIM}${ref.namespace ?? ""}/${ref.name}`);
    } }, { resyncPeriodMs: RESYNC_MS });
    await runQueue(this.#ctx, {
      name: "persistentvolume-binder-controller",
      queue: this.#queue,
      workers: 2,
      informers: [this.#claims, this.#volumes, this.#classes, this.#nodes],
      describe: (key) => (key.startsWith(CLAIM) ? `claim ${key.slice(CLAIM.length)}` : `volume ${key.slice(VOLUME.length)}`),
      process: (key) => (key.startsWith(CLAIM) ? this.syncClaim(key.slice(CLAIM.length)) : this.syncVolume(key.slice(VOLUME.length))),
    });
  }

  /** Binds or checks one claim; exported for tests. */
  async syncClaim(key: string): Promise<void> {
    const pvc = this.#claims.get(key);
    if (pvc === undefined || pvc.metadata.deletionTimestamp) return;
    const volumeName = pvc.spec?.volumeName;
    if (volumeName) {
      const pv = this.#volumes.get(volumeName) ?? (await getIfExists<PersistentVolume>(this.#ctx.client, PERSISTENT_VOLUMES, { name: volumeName }));
      if (pv === undefined) {
        if (pvc.status?.phase === "Bound") {
          await this.#claimStatus(pvc, { phase: "Lost" });
          this.#events.record(pvc, "Warning", "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!");
        }
        return;
      }
      if (pv.spec?.claimRef == null || volumeRefersTo(pv, pvc)) return this.#bind(pv, pvc);
      this.#tell(pvc, "Warning", "FailedBinding", `volume "${volumeName}" already bound to a different claim.`);
      return;
    }
    const className = pvc.spec?.storageClassName ?? "";
    const cls = className ? this.#classes.get(className) : undefined;
    const waiting = cls?.volumeBindingMode === "WaitForFirstConsumer";
    const selected = pvc.metadata.annotations?.[this.#keys.selectedNode];
    if (waiting && !selected) {
      this.#tell(pvc, "Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding");
      return;
    }
    const node = selected ? this.#nodes.get(selected) : undefined;
    const pv = findMatchingVolume(this.#volumes.list(), pvc, selected ? { name: selected, labels: node?.metadata.labels ?? {} } : undefined);
    if (pv !== undefined) return this.#bind(pv, pvc);
    if (cls?.provisioner) {
      if (pvc.metadata.annotations?.[this.#keys.storageProvisioner] !== cls.provisioner) {
        const next = structuredClone(pvc);
        (next.metadata.annotations ??= {})[this.#keys.storageProvisioner] = cls.provisioner;
        await this.#ctx.client.update(PERSISTENT_VOLUME_CLAIMS, next, { namespace: pvc.metadata.namespace! });
      }
      this.#tell(
        pvc,
        "Normal",
        "ExternalProvisioning",
        `Waiting for a volume to be created either by the external provisioner '${cls.provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
      );
      return;
    }
    if (className && cls === undefined) this.#tell(pvc, "Warning", "ProvisioningFailed", `storageclass.storage.k8s.io "${className}" not found`.replace("storage.k8s.io", this.#ctx.naming.storageGroup));
    else this.#tell(pvc, "Normal", "FailedBinding", "no persistent volumes available for this claim and no storage class is set");
  }

  /** Keeps one volume's phase in line with its claim, and releases it when the claim is gone; exported for tests. */
  async syncVolume(name: string): Promise<void> {
    const pv = this.#volumes.get(name);
    if (pv === undefined) return;
    const ref = pv.spec?.claimRef;
    if (ref == null || !ref.uid) {
      // Free, or pre-bound by a user and waiting for the claim.
      if (pv.status?.phase !== "Available") await this.#volumeStatus(pv, { phase: "Available" });
      return;
    }
    const claimKey = `${ref.namespace ?? ""}/${ref.name ?? ""}`;
    // The cache may lag the claim the volume was just bound to: ask before releasing.
    const pvc = this.#claims.get(claimKey) ?? (await getIfExists<PersistentVolumeClaim>(this.#ctx.client, PERSISTENT_VOLUME_CLAIMS, { namespace: ref.namespace ?? "", name: ref.name ?? "" }));
    if (pvc !== undefined && pvc.metadata.uid === ref.uid && (!pvc.spec?.volumeName || pvc.spec.volumeName === name)) {
      if (pvc.spec?.volumeName === name && pv.status?.phase !== "Bound") await this.#volumeStatus(pv, { phase: "Bound" });
      else if (!pvc.spec?.volumeName) this.#queue.add(CLAIM + claimKey);
      return;
    }
    const phase = pv.status?.phase;
    if (phase === "Failed") return;
    if (phase !== "Released") await this.#volumeStatus(pv, { phase: "Released" });
    const policy = pv.spec?.persistentVolumeReclaimPolicy ?? "Retain";
    if (policy === "Retain") return;
    // Delete: the provisioner that made the volume removes it; one nobody made cannot be deleted here.
    if (policy === "Delete" && pv.metadata.annotations?.[this.#keys.provisionedBy]) return;
    const message = policy === "Delete" ? `error getting deleter volume plugin for volume "${name}": no deletable volume plugin matched` : "no volume plugin matched";
    const failed = await this.#volumeStatus({ ...pv, status: { ...pv.status, phase: "Released" } }, { phase: "Failed", message });
    this.#events.record(failed, "Warning", policy === "Delete" ? "VolumeFailedDelete" : "VolumeFailedRecycle", message);
  }

  /** Both sides of the bind, each write only when needed (a retry after a conflict picks up where it stopped). */
  async #bind(volume: PersistentVolume, claim: PersistentVolumeClaim): Promise<void> {
    const { client } = this.#ctx;
    let pv = volume;
    const ref = pv.spec?.claimRef;
    if (ref?.uid !== claim.metadata.uid) {
      const next = structuredClone(pv);
      next.spec ??= {};
      if (ref == null) (next.metadata.annotations ??= {})[this.#keys.boundByController] = "yes";
      next.spec.claimRef = {
        kind: "PersistentVolumeClaim",
        namespace: claim.metadata.namespace!,
        name: claim.metadata.name!,
        uid: claim.metadata.uid!,
        apiVersion: "v1",
        resourceVersion: claim.metadata.resourceVersion!,
      };
      pv = await client.update(PERSISTENT_VOLUMES, next);
    }
    if (pv.status?.phase !== "Bound") pv = await this.#volumeStatus(pv, { phase: "Bound" });
    let pvc = claim;
    const annotations = pvc.metadata.annotations ?? {};
    if (pvc.spec?.volumeName !== pv.metadata.name || annotations[this.#keys.bindCompleted] !== "yes") {
      const next = structuredClone(pvc);
      const a = (next.metadata.annotations ??= {});
      if (!pvc.spec?.volumeName) a[this.#keys.boundByController] = "yes";
      a[this.#keys.bindCompleted] = "yes";
      (next.spec ??= {}).volumeName = pv.metadata.name!;
      pvc = await client.update(PERSISTENT_VOLUME_CLAIMS, next, { namespace: pvc.metadata.namespace! });
    }
    const status = pvc.status ?? {};
    if (status.phase !== "Bound" || JSON.stringify(status.capacity ?? {}) !== JSON.stringify(pv.spec?.capacity ?? {})) {
      await this.#claimStatus(pvc, { phase: "Bound", accessModes: pv.spec?.accessModes ?? [], capacity: pv.spec?.capacity ?? {} });
    }
  }

  async #volumeStatus(pv: PersistentVolume, status: { phase: string; message?: string }): Promise<PersistentVolume> {
    const next = structuredClone(pv);
    next.status = { ...status, lastPhaseTransitionTime: formatTimestamp(new Date(nowMs(this.#ctx))) };
    return this.#ctx.client.update(PERSISTENT_VOLUMES, next, { subresource: "status" });
  }

  async #claimStatus(pvc: PersistentVolumeClaim, status: NonNullable<PersistentVolumeClaim["status"]>): Promise<void> {
    const next = structuredClone(pvc);
    next.status = { ...next.status, ...status };
    await this.#ctx.client.update(PERSISTENT_VOLUME_CLAIMS, next, { namespace: pvc.metadata.namespace!, subresource: "status" });
  }

  #tell(pvc: PersistentVolumeClaim, type: "Normal" | "Warning", reason: string, message: string): void {
    const key = `${pvc.metadata.uid}/${reason}`;
    if (this.#told.has(key)) return;
    this.#told.add(key);
    this.#events.record(pvc, type, reason, message);
  }
}
