// Cluster DNS inside `orch server`: the DNS server (server.ts) over informers
// on Services, EndpointSlices and Namespaces, and the `orch-dns` Service in the
// system namespace (the range's tenth address, as upstream's kube-dns) whose
// Endpoints point at it, so pods reach it through the proxy at a cluster IP.
// It answers loopback, this host's addresses and private ranges only.

import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import type { Naming } from "../machinery/naming.js";
import type { Endpoints, Service } from "../api/core/types.js";
import type { EndpointSlice } from "../api/discovery/types.js";
import { InformerFactory, type IndexFunc, type RestClient } from "../client/index.js";
import { isApiError } from "../machinery/index.js";
import { endpointSliceLabels } from "../api/discovery/labels.js";
import { startDnsServer, type DnsServer } from "./server.js";
import type { AddressOwner } from "./records.js";
import { ENDPOINTS, NAMESPACES, SERVICES, endpointSliceResource } from "../api/resource-refs.js";

/** The cluster DNS Service in the system namespace: `orch-dns` (upstream `kube-dns`). */
export function dnsServiceName(naming: Naming): string {
  return `${naming.systemNamespace.slice(0, -"-system".length)}-dns`;
}

export interface ClusterDnsOptions {
  client: RestClient;
  naming: Naming;
  domain: string;
  /** Where the server listens: an address pods can reach through the proxy (not loopback). */
  address: string;
  port: number;
  signal: AbortSignal;
  log: (line: string) => void;
}

/** The informer index the server answers from: a service's EndpointSlices under "namespace/service". */
export const SERVICE_SLICES_INDEX = "service";
export function serviceSlicesIndex(serviceLabel: string): IndexFunc<EndpointSlice> {
  return (s) => {
    const service = s.metadata?.labels?.[serviceLabel];
    return service === undefined ? [] : [`${s.metadata?.namespace}/${service}`];
  };
}

/** Reverse lookups: services under each cluster IP, endpoint slices under each address. */
export const SERVICE_IP_INDEX = "clusterIP";
export const SLICE_ADDRESS_INDEX = "address";
export const serviceIPIndex: IndexFunc<Service> = (s) => [...new Set([s.spec?.clusterIP, ...(s.spec?.clusterIPs ?? [])])].filter((ip): ip is string => !!ip && isIP(ip) !== 0);
export const sliceAddressIndex: IndexFunc<EndpointSlice> = (s) => [...new Set((s.endpoints ?? []).flatMap((e) => e.addresses ?? []))];

/** The services' ready endpoints at `ip` in the slices given. */
export function addressOwners(slices: readonly EndpointSlice[], serviceLabel: string, ip: string): AddressOwner[] {
  const out: AddressOwner[] = [];
  for (const s of slices) {
    const service = s.metadata?.labels?.[serviceLabel];
    if (service === undefined) continue;
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready !== false && (e.addresses ?? []).includes(ip)) out.push({ namespace: s.metadata.namespace ?? "", service, ...(e.hostname ? { hostname: e.hostname } : {}) });
    }
  }
  return out;
}

/** Loopback, this host's own addresses, and private ranges (RFC 1918, CGNAT, ULA, link-local). */
export function privateOrLocal(ip: string): boolean {
  const v4 = ip.replace(/^::ffff:/, "");
  if (isIP(v4) === 4) {
    const [a, b] = v4.split(".").map(Number) as [number, number];
    if (a === 127 || a === 10 || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b < 128) || (a === 169 && b === 254)) return true;
  } else if (ip === "::1" || /^f[cd]/i.test(ip) || /^fe80:/i.test(ip)) return true;
  return Object.values(networkInterfaces()).some((list) => (list ?? []).some((n) => n.address === v4));
}

/** The first external IPv4 address of this host (the address pods reach the node at). */
export function nodeAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) for (const n of list ?? []) if (n.family === "IPv4" && !n.internal) return n.address;
  return undefined;
}

/** Starts the server and keeps the orch-dns Service and Endpoints pointing at it; resolves to the service's cluster IP. */
export async function startClusterDns(o: ClusterDnsOptions): Promise<{ server: DnsServer; serviceIP: string }> {
  const informers = new InformerFactory({ client: o.client, log: o.log });
  const services = informers.informerFor<Service>({ resource: SERVICES });
  const slices = informers.informerFor<EndpointSlice>({ resource: endpointSliceResource(o.naming) });
  const namespaces = informers.informerFor({ resource: NAMESPACES });
  // Every query asks for one service's slices: an index, not a scan of every slice per query.
  const serviceLabel = endpointSliceLabels(o.naming).serviceName;
  slices.addIndexers({ [SERVICE_SLICES_INDEX]: serviceSlicesIndex(serviceLabel), [SLICE_ADDRESS_INDEX]: sliceAddressIndex });
  services.addIndexers({ [SERVICE_IP_INDEX]: serviceIPIndex });
  informers.start(o.signal);
  const server = await startDnsServer({
    address: o.address,
    port: o.port,
    domain: o.domain,
    allowed: privateOrLocal,
    log: o.log,
    view: {
      service: (ns, name) => services.get(`${ns}/${name}`),
      slices: (ns, name) => slices.byIndex(SERVICE_SLICES_INDEX, `${ns}/${name}`),
      namespaceExists: (ns) => namespaces.get(ns) !== undefined,
      servicesByIP: (ip) => services.byIndex(SERVICE_IP_INDEX, ip),
      endpointsByAddress: (ip) => addressOwners(slices.byIndex(SLICE_ADDRESS_INDEX, ip), serviceLabel, ip),
    },
  });
  o.signal.addEventListener("abort", () => void server.close(), { once: true });
  const serviceIP = await ensureDnsService(o, server.port);
  await informers.waitForSync(o.signal);
  return { server, serviceIP };
}

/** The cluster DNS Service (orch-dns or kube-dns; ports 53/UDP and 53/TCP, no selector) and its Endpoints at this server. */
async function ensureDnsService(o: ClusterDnsOptions, port: number): Promise<string> {
  const namespace = o.naming.systemNamespace;
  const name = dnsServiceName(o.naming);
  const ports = [{ name: "dns", port: 53, protocol: "UDP" }, { name: "dns-tcp", port: 53, protocol: "TCP" }];
  let svc: Service;
  try {
    svc = await o.client.get<Service>(SERVICES, { namespace, name });
  } catch (err) {
    if (!isApiError(err, "NotFound")) throw err;
    // The tenth address of the range, as upstream's kube-dns (10.96.0.10 for the default range), if free.
    const ip = await tenthAddress(o.client);
    const body = (clusterIP?: string): Service => ({
      apiVersion: "v1", kind: "Service",
      metadata: { name, namespace, labels: { [`${o.naming.keyDomain}/cluster-service`]: "true", [`${o.naming.keyDomain}/name`]: "DNS" } },
      spec: { ...(clusterIP ? { clusterIP } : {}), ports: ports.map((p) => ({ ...p, targetPort: 53 })) },
    });
    svc = await o.client.create<Service>(SERVICES, body(ip)).catch(() => o.client.create<Service>(SERVICES, body()));
  }
  const endpoints: Endpoints = {
    apiVersion: "v1", kind: "Endpoints",
    metadata: { name, namespace },
    subsets: [{ addresses: [{ ip: o.address }], ports: ports.map((p) => ({ ...p, port })) }],
  };
  try {
    const current = await o.client.get<Endpoints>(ENDPOINTS, { namespace, name });
    await o.client.update(ENDPOINTS, { ...current, subsets: endpoints.subsets });
  } catch (err) {
    if (!isApiError(err, "NotFound")) throw err;
    await o.client.create(ENDPOINTS, endpoints);
  }
  return svc.spec?.clusterIP ?? "";
}

/** The kubernetes service holds the range's first address; the tenth is the same base plus nine. */
async function tenthAddress(client: RestClient): Promise<string | undefined> {
  try {
    const k = await client.get<Service>(SERVICES, { namespace: "default", name: "kubernetes" });
    const first = k.spec?.clusterIP ?? "";
    if (isIP(first) !== 4) return undefined;
    const parts = first.split(".").map(Number);
    parts[3] = parts[3]! + 9;
    return parts[3]! < 255 ? parts.join(".") : undefined;
  } catch {
    return undefined;
  }
}
