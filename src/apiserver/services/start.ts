// Starting the service allocator with the API server: a repair pass, then
// releases that follow the services' watch, a repair every 3 minutes (as
// upstream's repair loops), and the `kubernetes` service in `default`
// pointing at the API server, with the range's first address as upstream.

import { networkInterfaces } from "node:os";
import type { Endpoints, Service } from "../../api/core/types.js";
import { isApiError, type ApiObject } from "../../machinery/index.js";
import type { Storage } from "../../storage/index.js";
import type { RegistryStore } from "../registry/store.js";
import type { ServiceAllocator } from "./allocator.js";
import { bigToIp } from "./ranges.js";

const REPAIR_INTERVAL_MS = 3 * 60_000;

/** Repairs, then follows the services; returns the stop function. */
export async function startServiceAllocator(allocator: ServiceAllocator, o: { storage: Storage; log: (line: string) => void }): Promise<() => void> {
  const revision = await o.storage.currentRevision();
  const { freed, recorded } = await allocator.repair();
  if (freed + recorded > 0) o.log(`service allocator: freed ${freed} unused reservations, recorded ${recorded} held without one`);
  allocator.follow(revision);
  const timer = setInterval(() => void allocator.repair().catch((err: Error) => o.log(`service allocator: repair failed: ${err.message}`)), REPAIR_INTERVAL_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    allocator.stop();
  };
}

/** The address pods reach the API server at: the bind address, or the host's first external IPv4 when bound to all. */
export function advertiseAddress(bindAddress: string): string {
  if (bindAddress !== "0.0.0.0" && bindAddress !== "::") return bindAddress;
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return "127.0.0.1";
}

/** Creates (or corrects) the `kubernetes` service and its endpoints in `default`. */
export async function ensureKubernetesService(
  stores: { services: RegistryStore; endpoints: RegistryStore | undefined },
  o: { allocator: ServiceAllocator; address: string; port: number; log: (line: string) => void; provider: string },
): Promise<void> {
  const ip = bigToIp(o.allocator.ipRange.first, o.allocator.ipRange.family);
  const service: Service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "kubernetes", namespace: "default", labels: { component: "apiserver", provider: o.provider } },
    spec: { type: "ClusterIP", clusterIP: ip, clusterIPs: [ip], sessionAffinity: "None", ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: o.port }] },
  };
  await createIfAbsent(stores.services, service as ApiObject, o.log);
  if (stores.endpoints === undefined) return;
  const endpoints: Endpoints = {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name: "kubernetes", namespace: "default" },
    subsets: [{ addresses: [{ ip: o.address }], ports: [{ name: "https", port: o.port, protocol: "TCP" }] }],
  };
  // The API server's address or port may have changed since the last start: the endpoints follow.
  try {
    const current = (await stores.endpoints.get("default", "kubernetes")).object as Endpoints;
    if (JSON.stringify(current.subsets) !== JSON.stringify(endpoints.subsets)) {
      await stores.endpoints.update("default", "kubernetes", { ...current, subsets: endpoints.subsets } as ApiObject);
    }
  } catch (err) {
    if (!isApiError(err, "NotFound")) throw err;
    await createIfAbsent(stores.endpoints, endpoints as ApiObject, o.log);
  }
}

async function createIfAbsent(store: RegistryStore, obj: ApiObject, log: (line: string) => void): Promise<void> {
  try {
    await store.create("default", obj);
  } catch (err) {
    if (isApiError(err, "AlreadyExists")) return;
    log(`could not create ${obj.kind} default/${obj.metadata?.name}: ${(err as Error).message}`);
  }
}
