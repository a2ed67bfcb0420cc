// The ServiceCIDR objects the API server keeps (upstream splits this between
// the API server's default-ServiceCIDR loop and the controller manager's
// servicecidrs controller; orch's allocator lives in the API server, so this
// does too): the `kubernetes` ServiceCIDR made at start from
// --service-cluster-ip-range, Ready=True on every ServiceCIDR, the protection
// finalizer (added on create by the kind's strategy, restored here), and on
// deletion the finalizer removed only once no IPAddress is left in a range no
// other ServiceCIDR covers (until then Ready=False, reason Terminating).
// Runs on every change to ServiceCIDRs or IPAddresses, and every 30 s.

import {
  DEFAULT_SERVICE_CIDR,
  ipAddressManagedByLabel,
  ipAllocatorName,
  serviceCIDRFinalizer,
  type IPAddress,
  type MetaCondition,
  type ServiceCIDR,
} from "../../api/networking/index.js";
import { findSubresource } from "../../api/subresources/index.js";
import { cidrContains, formatTimestamp, isApiError, parseCidr, parseIp, type ApiObject, type ParsedCidr } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import type { Storage } from "../../storage/index.js";
import type { RegistryStore } from "../registry/store.js";

const RESYNC_MS = 30_000;
/** Debounce of event bursts (a Service deleted: its IPAddress and the ServiceCIDR's status move together). */
const SETTLE_MS = 50;

export const READY_MESSAGE = "Kubernetes Service CIDR is ready";
export const TERMINATING_MESSAGE = "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR";

export interface ServiceCIDRKeeperOptions {
  storage: Storage;
  naming: Naming;
  serviceCIDRs: RegistryStore;
  ipAddresses: RegistryStore;
  log: (line: string) => void;
}

/** Creates the `kubernetes` ServiceCIDR from the service range if there is none (a different one is reported, not changed). */
export async function ensureDefaultServiceCIDR(store: RegistryStore, cidr: string, log: (line: string) => void): Promise<void> {
  try {
    const current = (await store.get(undefined, DEFAULT_SERVICE_CIDR)).object as ServiceCIDR;
    const cidrs = current.spec?.cidrs ?? [];
    if (!cidrs.includes(cidr)) log(`service CIDRs: the ${DEFAULT_SERVICE_CIDR} ServiceCIDR has ${cidrs.join(",")}, this server's --service-cluster-ip-range is ${cidr}: every API server should have the same range`);
    return;
  } catch (err) {
    if (!isApiError(err, "NotFound")) throw err;
  }
  const object: ServiceCIDR = { apiVersion: `${store.def.group}/v1`, kind: "ServiceCIDR", metadata: { name: DEFAULT_SERVICE_CIDR }, spec: { cidrs: [cidr] } };
  try {
    await store.create(undefined, object as ApiObject);
  } catch (err) {
    if (!isApiError(err, "AlreadyExists")) throw err;
  }
}

export class ServiceCIDRKeeper {
  readonly #o: ServiceCIDRKeeperOptions;
  readonly #finalizer: string;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #settle: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  readonly #watches: { close(): void }[] = [];

  constructor(options: ServiceCIDRKeeperOptions) {
    this.#o = options;
    this.#finalizer = serviceCIDRFinalizer(options.naming);
  }

  /** Reconciles now, then on every change and every 30 s, until stop(). */
  async start(): Promise<void> {
    const revision = await this.#o.storage.currentRevision();
    await this.reconcile().catch((err: Error) => this.#o.log(`service CIDRs: ${err.message}`));
    for (const store of [this.#o.serviceCIDRs, this.#o.ipAddresses]) this.#follow(store.prefix, revision);
    this.#timer = setInterval(() => this.#kick(), RESYNC_MS);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearTimeout(this.#settle);
    for (const w of this.#watches) w.close();
  }

  /** Waits for the pass under way (tests). */
  async idle(): Promise<void> {
    while (this.#running !== undefined || this.#settle !== undefined) {
      await (this.#running ?? new Promise((r) => setTimeout(r, SETTLE_MS)));
    }
  }

  #follow(prefix: string, fromRevision: number): void {
    const watch = this.#o.storage.watch(prefix, { fromRevision, prevKv: false });
    this.#watches.push(watch);
    void (async () => {
      try {
        for await (const e of watch) if (e.type !== "progress") this.#kick();
      } catch (err) {
        if (this.#stopped) return;
        // A compacted or broken watch: start over from now (the pass it triggers catches up).
        this.#o.log(`service CIDRs: the watch of ${prefix} ended: ${(err as Error).message}`);
        const revision = await this.#o.storage.currentRevision().catch(() => 0);
        if (!this.#stopped) {
          this.#follow(prefix, revision);
          this.#kick();
        }
      }
    })();
  }

  #kick(): void {
    if (this.#stopped || this.#settle !== undefined) return;
    this.#settle = setTimeout(() => {
      this.#settle = undefined;
      if (this.#running !== undefined) {
        this.#again = true;
        return;
      }
      this.#running = (async () => {
        do {
          this.#again = false;
          await this.reconcile().catch((err: Error) => this.#o.log(`service CIDRs: ${err.message}`));
        } while (this.#again && !this.#stopped);
      })().finally(() => {
        this.#running = undefined;
      });
    }, SETTLE_MS);
  }

  /** One pass over every ServiceCIDR. */
  async reconcile(): Promise<void> {
    const cidrs = (await this.#o.serviceCIDRs.list(undefined, {})).items.map((i) => i.object as ServiceCIDR);
    for (const sc of cidrs) {
      const name = sc.metadata.name!;
      if (sc.metadata.deletionTimestamp) {
        if (!(sc.metadata.finalizers ?? []).includes(this.#finalizer)) continue;
        if (await this.#canDelete(sc, cidrs)) await this.#modify(name, false, (obj) => ({ ...obj, metadata: { ...obj.metadata, finalizers: (obj.metadata.finalizers ?? []).filter((f) => f !== this.#finalizer) } }));
        else await this.#setReady(sc, { type: "Ready", status: "False", reason: "Terminating", message: TERMINATING_MESSAGE });
        continue;
      }
      if (!(sc.metadata.finalizers ?? []).includes(this.#finalizer)) {
        await this.#modify(name, false, (obj) => ({ ...obj, metadata: { ...obj.metadata, finalizers: [...(obj.metadata.finalizers ?? []), this.#finalizer] } }));
      }
      await this.#setReady(sc, { type: "Ready", status: "True", message: READY_MESSAGE });
    }
  }

  /**
   * upstream's canDeleteCIDR: yes when every range is inside another ServiceCIDR, or when no
   * allocator-made IPAddress of the range's family lies only in this ServiceCIDR.
   */
  async #canDelete(sc: ServiceCIDR, all: readonly ServiceCIDR[]): Promise<boolean> {
    const others = all.filter((o) => o.metadata.name !== sc.metadata.name).flatMap((o) => (o.spec?.cidrs ?? []).map((c) => parseCidr(c))).filter((c): c is ParsedCidr => c !== undefined);
    const mine = (sc.spec?.cidrs ?? []).map((c) => parseCidr(c)).filter((c): c is ParsedCidr => c !== undefined);
    const covered = (c: ParsedCidr) => others.some((o) => o.family === c.family && o.bits <= c.bits && cidrContains(o, { family: c.family, value: c.network, leadingZeros: false }));
    if (mine.every(covered)) return true;
    const managedBy = ipAddressManagedByLabel(this.#o.naming);
    const allocator = ipAllocatorName(this.#o.naming);
    for (const item of (await this.#o.ipAddresses.list(undefined, {})).items) {
      const ipObject = item.object as IPAddress;
      if (ipObject.metadata.labels?.[managedBy] !== allocator) continue;
      const ip = parseIp(ipObject.metadata.name ?? "");
      if (ip === undefined) continue;
      if (mine.some((c) => cidrContains(c, ip)) && !others.some((c) => cidrContains(c, ip))) return false;
    }
    return true;
  }

  /** Sets the Ready condition through /status when it differs (lastTransitionTime moves only with its status). */
  async #setReady(sc: ServiceCIDR, want: MetaCondition): Promise<void> {
    const current = (sc.status?.conditions ?? []).find((c) => c.type === "Ready");
    if (current !== undefined && current.status === want.status && (current.reason ?? "") === (want.reason ?? "") && current.message === want.message) return;
    await this.#modify(sc.metadata.name!, true, (obj) => {
      const next = obj as ServiceCIDR;
      const conditions = (next.status?.conditions ?? []).filter((c) => c.type !== "Ready");
      const old = (next.status?.conditions ?? []).find((c) => c.type === "Ready");
      const lastTransitionTime = old !== undefined && old.status === want.status && old.lastTransitionTime ? old.lastTransitionTime : formatTimestamp(new Date());
      conditions.push({ ...want, lastTransitionTime });
      next.status = { ...next.status, conditions };
      return next as ApiObject;
    });
  }

  async #modify(name: string, status: boolean, mutate: (obj: ApiObject) => ApiObject): Promise<void> {
    const subresource = status ? findSubresource(this.#o.serviceCIDRs.def, "status") : undefined;
    try {
      await this.#o.serviceCIDRs.modify(undefined, name, mutate, subresource !== undefined ? { subresource } : {});
    } catch (err) {
      if (!isApiError(err, "NotFound")) throw err;
    }
  }
}

/** Where ServiceCIDRs and IPAddresses are served: the `kubernetes` ServiceCIDR, then the keeper; returns it (stop() on close). */
export async function startServiceCIDRs(o: {
  storage: Storage;
  naming: Naming;
  stores: { for(gr: { group: string; resource: string }): RegistryStore | undefined };
  range: string;
  log: (line: string) => void;
}): Promise<ServiceCIDRKeeper | undefined> {
  const serviceCIDRs = o.stores.for({ group: o.naming.networkingGroup, resource: "servicecidrs" });
  const ipAddresses = o.stores.for({ group: o.naming.networkingGroup, resource: "ipaddresses" });
  if (serviceCIDRs === undefined || ipAddresses === undefined) return undefined;
  await ensureDefaultServiceCIDR(serviceCIDRs, o.range, o.log).catch((err: Error) => o.log(`service CIDRs: could not create the ${DEFAULT_SERVICE_CIDR} ServiceCIDR: ${err.message}`));
  const keeper = new ServiceCIDRKeeper({ storage: o.storage, naming: o.naming, serviceCIDRs, ipAddresses, log: o.log });
  await keeper.start();
  return keeper;
}
