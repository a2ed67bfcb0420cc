// The IPAddress objects (networking.<suffix>/v1) of the service allocator:
// each ClusterIP it hands out is recorded as an IPAddress named by the
// address, parentRef the Service, labelled as the allocator's (upstream's
// ipaddress.kubernetes.io/managed-by and ip-family labels), and removed when
// the Service lets the address go. An address whose IPAddress exists (the
// allocator's for another Service, or one a client made) is not handed out.

import type { IPAddress } from "../../api/networking/index.js";
import { ipAddressManagedByLabel, ipAllocatorName } from "../../api/networking/index.js";
import { isApiError, type ApiObject } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import type { RegistryStore } from "../registry/store.js";

/** The Service an allocator-made IPAddress belongs to, as the allocator names owners: `namespace/name`. */
export interface IpRecord {
  /** `namespace/name` of the parent Service; undefined when the parent is not a Service. */
  readonly owner: string | undefined;
  /** Made by the allocator (its managed-by label). */
  readonly managed: boolean;
  readonly createdAt: number;
}

export class IpAddressRecords {
  readonly #store: () => RegistryStore | undefined;
  readonly #naming: Naming;

  constructor(naming: Naming, store: () => RegistryStore | undefined) {
    this.#naming = naming;
    this.#store = store;
  }

  /** The IPAddress of one address, if any. */
  async get(ip: string): Promise<IpRecord | undefined> {
    const store = this.#store();
    if (store === undefined) return undefined;
    try {
      return this.#record((await store.get(undefined, ip)).object as IPAddress);
    } catch (err) {
      if (isApiError(err, "NotFound")) return undefined;
      throw err;
    }
  }

  /** Every IPAddress, by name. */
  async list(): Promise<Map<string, IpRecord>> {
    const store = this.#store();
    const out = new Map<string, IpRecord>();
    if (store === undefined) return out;
    for (const item of (await store.list(undefined, {})).items) {
      const ip = item.object as IPAddress;
      out.set(ip.metadata.name ?? "", this.#record(ip));
    }
    return out;
  }

  /**
   * Records `ip` as `owner`'s (`namespace/name` of a Service). True when it is
   * (now or already); false when another object holds the address.
   */
  async record(ip: string, family: 4 | 6, owner: string): Promise<boolean> {
    const store = this.#store();
    if (store === undefined) return true;
    const [namespace, name] = owner.split("/") as [string, string];
    const object: IPAddress = {
      apiVersion: `${this.#naming.networkingGroup}/v1`,
      kind: "IPAddress",
      metadata: {
        name: ip,
        labels: {
          [ipAddressManagedByLabel(this.#naming)]: ipAllocatorName(this.#naming),
          [`ipaddress.${this.#naming.keyDomain}/ip-family`]: family === 6 ? "IPv6" : "IPv4",
        },
      },
      spec: { parentRef: { group: "", resource: "services", namespace, name } },
    };
    try {
      await store.create(undefined, object as ApiObject);
      return true;
    } catch (err) {
      if (!isApiError(err, "AlreadyExists")) throw err;
      return (await this.get(ip))?.owner === owner;
    }
  }

  /** Deletes the IPAddress of `ip` if it is `owner`'s. */
  async release(ip: string, owner: string): Promise<void> {
    const store = this.#store();
    if (store === undefined) return;
    const current = await this.get(ip);
    if (current?.owner !== owner) return;
    await store.delete(undefined, ip).catch((err) => {
      if (!isApiError(err, "NotFound")) throw err;
    });
  }

  #record(ip: IPAddress): IpRecord {
    const ref = ip.spec?.parentRef;
    const isService = ref != null && (ref.group ?? "") === "" && ref.resource === "services";
    return {
      owner: isService ? `${ref.namespace ?? ""}/${ref.name ?? ""}` : undefined,
      managed: ip.metadata.labels?.[ipAddressManagedByLabel(this.#naming)] === ipAllocatorName(this.#naming),
      createdAt: Date.parse(ip.metadata.creationTimestamp ?? "") || 0,
    };
  }
}
