// The local-path provisioner: volumes for claims of a StorageClass whose
// provisioner is `<domain>/local-path` (the default class `orch server`
// creates). A claim the binder handed over (annotation
// `volume.<domain>/storage-provisioner`) on the node the scheduler selected
// (`volume.<domain>/selected-node`; the class must be WaitForFirstConsumer)
// gets a directory `<dir>/pvc-<uid>` and a hostPath PersistentVolume with node
// affinity to that node, pre-bound to the claim (the binder completes the
// bind). A Released volume it made with reclaim policy Delete loses its
// directory, then its object. It runs in the controller manager and writes
// the directory on the controller manager's host: single-node clusters
// (`orch server`) only; `config.localPathDir` unset, it does not run.

import { rm, mkdir, chmod } from "node:fs/promises";
import { resolve, sep } from "node:path";
import { keyOf, WorkQueue, type Informer } from "../../client/index.js";
import type { PersistentVolume, PersistentVolumeClaim } from "../../api/core/index.js";
import type { StorageClass } from "../../api/storage/index.js";
import { PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, storageClassResource } from "../../api/resource-refs.js";
import { isApiError } from "../../machinery/index.js";
import { storageKeys, type Naming, type StorageKeys } from "../../machinery/naming.js";
import { errorMessage, type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { EventRecorder } from "../events.js";
import { deleteIfExists } from "../resources.js";
import { runQueue } from "../run-queue.js";

/** The provisioner name of the local-path class: `<domain>/local-path`. */
export function localPathProvisioner(naming: Naming): string {
  return `${naming.keyDomain}/local-path`;
}

/** The default StorageClass `orch server` creates at start. */
export function localPathStorageClass(naming: Naming): StorageClass {
  return {
    apiVersion: `${naming.storageGroup}/v1`,
    kind: "StorageClass",
    metadata: { name: "local-path", annotations: { [storageKeys(naming).defaultClass]: "true" } },
    provisioner: localPathProvisioner(naming),
    reclaimPolicy: "Delete",
    volumeBindingMode: "WaitForFirstConsumer",
  };
}

export const localPathProvisionerController: ControllerDescriptor = {
  name: "local-path-provisioner",
  enabledByDefault: true,
  run: async (context) => {
    const dir = context.config?.localPathDir;
    if (!dir) return;
    await new LocalPathProvisioner(context, dir).run();
  },
};

const CLAIM = "pvc:";
const VOLUME = "pv:";

export class LocalPathProvisioner {
  readonly #ctx: ControllerContext;
  readonly #dir: string;
  readonly #name: string;
  readonly #keys: StorageKeys;
  readonly #queue = new WorkQueue({ name: "local_path_provisioner", baseDelayMs: 100, maxDelayMs: 30_000 });
  readonly #events: EventRecorder;
  readonly #claims: Informer<PersistentVolumeClaim>;
  readonly #volumes: Informer<PersistentVolume>;
  readonly #classes: Informer<StorageClass>;

  constructor(context: ControllerContext, dir: string) {
    this.#ctx = context;
    this.#dir = resolve(dir);
    this.#name = localPathProvisioner(context.naming);
    this.#keys = storageKeys(context.naming);
    this.#events = new EventRecorder(context, `${this.#name}_provisioner`);
    this.#claims = context.informers.informerFor<PersistentVolumeClaim>({ resource: PERSISTENT_VOLUME_CLAIMS });
    this.#volumes = context.informers.informerFor<PersistentVolume>({ resource: PERSISTENT_VOLUMES });
    this.#classes = context.informers.informerFor<StorageClass>({ resource: storageClassResource(context.naming) });
  }

  async run(): Promise<void> {
    const claim = (pvc: PersistentVolumeClaim) => {
      if (pvc.metadata.annotations?.[this.#keys.storageProvisioner] === this.#name && !pvc.spec?.volumeName) this.#queue.add(CLAIM + keyOf(pvc));
    };
    const volume = (pv: PersistentVolume) => {
      if (pv.metadata.annotations?.[this.#keys.provisionedBy] === this.#name && pv.status?.phase === "Released") this.#queue.add(VOLUME + keyOf(pv));
    };
    this.#claims.addEventHandler({ onAdd: claim, onUpdate: (_o, n) => claim(n) });
    this.#volumes.addEventHandler({ onAdd: volume, onUpdate: (_o, n) => volume(n) });
    await runQueue(this.#ctx, {
      name: "local-path-provisioner",
      queue: this.#queue,
      workers: 1,
      informers: [this.#claims, this.#volumes, this.#classes],
      process: (key) => (key.startsWith(CLAIM) ? this.provision(key.slice(CLAIM.length)) : this.reclaim(key.slice(VOLUME.length))),
    });
  }

  /** The directory of a volume: under the provisioner's folder, or undefined for a path that is not. */
  #pathOf(pv: PersistentVolume): string | undefined {
    const path = pv.spec?.hostPath?.path;
    if (!path) return undefined;
    const full = resolve(path);
    return full.startsWith(this.#dir + sep) ? full : undefined;
  }

  /** Makes the directory and the volume of one claim; exported for tests. */
  async provision(key: string): Promise<void> {
    const pvc = this.#claims.get(key);
    if (pvc === undefined || pvc.metadata.deletionTimestamp || pvc.spec?.volumeName) return;
    if (pvc.metadata.annotations?.[this.#keys.storageProvisioner] !== this.#name) return;
    const cls = this.#classes.get(pvc.spec?.storageClassName ?? "");
    if (cls === undefined || cls.provisioner !== this.#name) return;
    const node = pvc.metadata.annotations?.[this.#keys.selectedNode];
    if (!node) {
      this.#events.record(pvc, "Warning", "ProvisioningFailed", `failed to provision volume with StorageClass "${cls.metadata.name}": a local-path volume needs a selected node (volumeBindingMode WaitForFirstConsumer)`);
      return;
    }
    if ((pvc.spec?.volumeMode ?? "Filesystem") !== "Filesystem") {
      this.#events.record(pvc, "Warning", "ProvisioningFailed", `failed to provision volume with StorageClass "${cls.metadata.name}": only Filesystem volumes are supported`);
      return;
    }
    const name = `pvc-${pvc.metadata.uid}`;
    const path = `${this.#dir}${sep}${name}`;
    this.#events.record(pvc, "Normal", "Provisioning", `External provisioner is provisioning volume for claim "${key}"`);
    await mkdir(path, { recursive: true });
    // Any container user may write, as upstream's local-path provisioner leaves it.
    await chmod(path, 0o777);
    const pv: PersistentVolume = {
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: { name, annotations: { [this.#keys.provisionedBy]: this.#name } },
      spec: {
        capacity: { storage: String(pvc.spec?.resources?.requests?.["storage"] ?? "0") },
        accessModes: pvc.spec?.accessModes ?? ["ReadWriteOnce"],
        persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? "Delete",
        storageClassName: cls.metadata.name!,
        volumeMode: "Filesystem",
        hostPath: { path, type: "DirectoryOrCreate" },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: [node] }] }] } },
        claimRef: { kind: "PersistentVolumeClaim", apiVersion: "v1", namespace: pvc.metadata.namespace!, name: pvc.metadata.name!, uid: pvc.metadata.uid! },
        ...(cls.mountOptions ? { mountOptions: cls.mountOptions } : {}),
      },
    };
    try {
      await this.#ctx.client.create(PERSISTENT_VOLUMES, pv);
    } catch (err) {
      if (!isApiError(err, "AlreadyExists")) {
        this.#events.record(pvc, "Warning", "ProvisioningFailed", `failed to provision volume with StorageClass "${cls.metadata.name}": ${errorMessage(err)}`);
        throw err;
      }
      return;
    }
    this.#events.record(pvc, "Normal", "ProvisioningSucceeded", `Successfully provisioned volume ${name}`);
  }

  /** Removes the directory, then the object, of a Released volume it made with policy Delete; exported for tests. */
  async reclaim(name: string): Promise<void> {
    const pv = this.#volumes.get(name);
    if (pv === undefined || pv.status?.phase !== "Released" || pv.metadata.annotations?.[this.#keys.provisionedBy] !== this.#name) return;
    if ((pv.spec?.persistentVolumeReclaimPolicy ?? "Retain") !== "Delete") return;
    const path = this.#pathOf(pv);
    if (path !== undefined) await rm(path, { recursive: true, force: true });
    await deleteIfExists(this.#ctx.client, PERSISTENT_VOLUMES, { name, preconditions: { uid: pv.metadata.uid! } });
  }
}
