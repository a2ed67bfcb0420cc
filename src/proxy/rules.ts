// The proxy's iptables rules from services and endpoint slices, as one
// iptables-restore input (pure: no I/O, so it is tested as text). Our own
// chains in the nat table: SERVICES (matched cluster IP and port → one chain
// per service port), NODEPORTS (local addresses, by port), SVC-* (a random
// choice among ready endpoints), SEP-* (DNAT to one endpoint), MARK-MASQ and
// POSTROUTING (masquerade what was marked). In the filter table, traffic to a
// service port without endpoints is rejected at once rather than left to time
// out. IPv4 only; every service connection is masqueraded (upstream's
// --masquerade-all), which works without br_netfilter on bridged pods.
// Session affinity (`sessionAffinity: ClientIP`) is the kernel's `recent`
// match, as upstream writes it: each endpoint chain records the client's
// address in a list named after the chain (--set), and the service chain,
// before its random choice, sends a client seen within the timeout back to
// the endpoint it had (--rcheck --seconds T --reap).

import { createHash } from "node:crypto";
import type { Service, ServicePort } from "../api/core/types.js";
import type { EndpointSlice } from "../api/discovery/types.js";

export interface ChainNames {
  services: string;
  nodePorts: string;
  markMasq: string;
  postrouting: string;
  /** The filter table's chain for service ports without endpoints. */
  reject: string;
  /** Prefixes of per-service and per-endpoint chains. */
  svc: string;
  sep: string;
  ext: string;
}

/** Our chain names under a prefix ("ORCH" by default); iptables allows 28 characters. */
export function chainNames(prefix = "ORCH"): ChainNames {
  return {
    services: `${prefix}-SERVICES`,
    nodePorts: `${prefix}-NODEPORTS`,
    markMasq: `${prefix}-MARK-MASQ`,
    postrouting: `${prefix}-POSTROUTING`,
    reject: `${prefix}-SVC-REJECT`,
    svc: `${prefix}-SVC-`,
    sep: `${prefix}-SEP-`,
    ext: `${prefix}-EXT-`,
  };
}

/** The mark that asks POSTROUTING to masquerade (upstream's 0x4000 bit). */
export const MASQ_MARK = "0x4000/0x4000";

export interface ServiceRules {
  /** iptables-restore input for the nat and filter tables (--noflush: only our chains are replaced). */
  restore: string;
  /** Our per-service chains this sync writes (the caller deletes stale ones). */
  chains: string[];
  /** Service ports programmed, and how many have no endpoint. */
  servicePorts: number;
  withoutEndpoints: number;
}

const hash = (text: string, prefix: string) => `${prefix}${createHash("sha256").update(text).digest("base64url").replace(/[-_]/g, "").slice(0, 16).toUpperCase()}`;

/** The ready IPv4 endpoints of one service port, as "ip:port" (deduplicated, sorted: a stable order keeps rules unchanged). */
export function readyEndpoints(port: ServicePort, slices: readonly EndpointSlice[]): string[] {
  const out = new Set<string>();
  for (const slice of slices) {
    if (slice.addressType !== "IPv4") continue;
    const match = (slice.ports ?? []).find((p) => (p.name ?? "") === (port.name ?? "") && (p.protocol ?? "TCP") === (port.protocol ?? "TCP"));
    if (match?.port == null) continue;
    for (const e of slice.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      for (const a of e.addresses ?? []) out.add(`${a}:${match.port}`);
    }
  }
  return [...out].sort();
}

/** One service port the proxy serves: a cluster IP (IPv4) port of TCP or UDP, with its ready endpoints. */
export interface ProxiedPort {
  ns: string;
  name: string;
  ip: string;
  port: ServicePort & { port: number };
  /** tcp or udp. */
  proto: string;
  endpoints: string[];
  /** ClientIP session affinity: how long a client stays with its endpoint, in seconds (undefined: no affinity). */
  affinitySeconds: number | undefined;
}

/** upstream's default of sessionAffinityConfig.clientIP.timeoutSeconds (3 hours). */
export const DEFAULT_AFFINITY_SECONDS = 10800;

/** The affinity timeout of a service with `sessionAffinity: ClientIP`, else undefined. */
export function affinitySeconds(svc: Service): number | undefined {
  if (svc.spec?.sessionAffinity !== "ClientIP") return undefined;
  const t = svc.spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  return typeof t === "number" && t > 0 ? t : DEFAULT_AFFINITY_SECONDS;
}

/** The ports both data planes serve, services in name order (headless, ExternalName, IPv6 and SCTP are not proxied). */
export function* proxiedPorts(services: readonly Service[], slicesOf: (namespace: string, name: string) => EndpointSlice[]): Generator<ProxiedPort> {
  const sorted = [...services].sort((a, b) => `${a.metadata?.namespace}/${a.metadata?.name}`.localeCompare(`${b.metadata?.namespace}/${b.metadata?.name}`));
  for (const svc of sorted) {
    const spec = svc.spec ?? {};
    const ip = spec.clusterIP ?? "";
    if (spec.type === "ExternalName" || ip === "" || ip === "None" || ip.includes(":")) continue;
    const ns = svc.metadata?.namespace ?? "";
    const name = svc.metadata?.name ?? "";
    const slices = slicesOf(ns, name);
    const affinity = affinitySeconds(svc);
    for (const port of spec.ports ?? []) {
      if (!port?.port) continue;
      const proto = (port.protocol ?? "TCP").toLowerCase();
      if (proto === "sctp") continue;
      yield { ns, name, ip, port: port as ServicePort & { port: number }, proto, endpoints: readyEndpoints(port, slices), affinitySeconds: affinity };
    }
  }
}

export function buildRules(services: readonly Service[], slicesOf: (namespace: string, name: string) => EndpointSlice[], names: ChainNames = chainNames()): ServiceRules {
  const nat: string[] = [];
  const filter: string[] = [];
  const chains: string[] = [];
  const natChains = [names.services, names.nodePorts, names.markMasq, names.postrouting];
  let servicePorts = 0;
  let withoutEndpoints = 0;
  for (const { ns, name, ip, port, proto, endpoints, affinitySeconds: affinity } of proxiedPorts(services, slicesOf)) {
    servicePorts++;
    const id = `${ns}/${name}:${port.name ?? ""}/${proto}`;
    const comment = `-m comment --comment "${id}"`;
    if (endpoints.length === 0) {
      withoutEndpoints++;
      filter.push(`-A ${names.reject} ${comment} -d ${ip}/32 -p ${proto} -m ${proto} --dport ${port.port} -j REJECT --reject-with icmp-port-unreachable`);
      if (port.nodePort) filter.push(`-A ${names.reject} ${comment} -m addrtype --dst-type LOCAL -p ${proto} -m ${proto} --dport ${port.nodePort} -j REJECT --reject-with icmp-port-unreachable`);
      continue;
    }
    const svcChain = hash(id, names.svc);
    chains.push(svcChain);
    natChains.push(svcChain);
    nat.push(`-A ${names.services} ${comment} -d ${ip}/32 -p ${proto} -m ${proto} --dport ${port.port} -j ${svcChain}`);
    if (port.nodePort) {
      const extChain = hash(id, names.ext);
      chains.push(extChain);
      natChains.push(extChain);
      nat.push(`-A ${names.nodePorts} ${comment} -p ${proto} -m ${proto} --dport ${port.nodePort} -j ${extChain}`);
      nat.push(`-A ${extChain} -j ${names.markMasq}`, `-A ${extChain} -j ${svcChain}`);
    }
    nat.push(`-A ${svcChain} -j ${names.markMasq}`);
    const sepChains = endpoints.map((ep) => hash(`${id}|${ep}`, names.sep));
    chains.push(...sepChains);
    natChains.push(...sepChains);
    // Affinity first: a client seen within the timeout goes back to its endpoint (the list is named after the endpoint chain).
    if (affinity !== undefined) {
      for (const sep of sepChains) nat.push(`-A ${svcChain} ${comment} -m recent --name ${sep} --rcheck --seconds ${affinity} --reap -j ${sep}`);
    }
    endpoints.forEach((ep, i) => {
      const sepChain = sepChains[i]!;
      const left = endpoints.length - i;
      // Each endpoint in turn takes 1/left of what the earlier ones did not: an even split.
      const pick = left > 1 ? ` -m statistic --mode random --probability ${(1 / left).toFixed(10)}` : "";
      nat.push(`-A ${svcChain} ${comment}${pick} -j ${sepChain}`);
      const remember = affinity !== undefined ? ` -m recent --name ${sepChain} --set` : "";
      nat.push(`-A ${sepChain} ${comment}${remember} -p ${proto} -m ${proto} -j DNAT --to-destination ${ep}`);
    });
  }
  // Node ports last, for local destination addresses only (upstream's order).
  nat.push(`-A ${names.services} -m addrtype --dst-type LOCAL -j ${names.nodePorts}`);
  nat.push(`-A ${names.markMasq} -j MARK --set-xmark ${MASQ_MARK}`);
  nat.push(`-A ${names.postrouting} -m mark ! --mark ${MASQ_MARK} -j RETURN`, `-A ${names.postrouting} -j MARK --set-xmark 0x4000/0x0`, `-A ${names.postrouting} -j MASQUERADE --random-fully`);
  const restore = [
    "*nat",
    ...natChains.map((c) => `:${c} - [0:0]`),
    ...nat,
    "COMMIT",
    "*filter",
    `:${names.reject} - [0:0]`,
    ...filter,
    "COMMIT",
    "",
  ].join("\n");
  return { restore, chains, servicePorts, withoutEndpoints };
}
