// Cluster DNS names (upstream's DNS specification for services): for a
// service `S` in namespace `N` under the cluster domain `D`,
//   S.N.svc.D                A     the cluster IP; for a headless service, its ready endpoints
//   _P._PROTO.S.N.svc.D      SRV   each named port (the port, and S.N.svc.D as target)
//   S.N.svc.D                CNAME an ExternalName service's externalName
//   H.S.N.svc.D              A     a headless service's endpoint with hostname H
// Pure lookups over the services and endpoint slices it is given.

import type { Service } from "../api/core/types.js";
import type { EndpointSlice } from "../api/discovery/types.js";

export type Answer =
  | { type: "A"; name: string; address: string }
  | { type: "CNAME"; name: string; target: string }
  | { type: "SRV"; name: string; port: number; target: string };

export interface LookupResult {
  /** The name is in the cluster domain: we answer for it (NXDOMAIN when nothing matched). */
  authoritative: boolean;
  answers: Answer[];
  /** The name exists (NOERROR with no answers of the type asked) even if `answers` is empty. */
  exists: boolean;
}

export interface ClusterView {
  service(namespace: string, name: string): Service | undefined;
  slices(namespace: string, name: string): EndpointSlice[];
  namespaceExists(namespace: string): boolean;
}

function readyAddresses(slices: readonly EndpointSlice[]): { address: string; hostname?: string }[] {
  const out: { address: string; hostname?: string }[] = [];
  const seen = new Set<string>();
  for (const s of slices) {
    if (s.addressType !== "IPv4") continue;
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      for (const a of e.addresses ?? []) {
        if (seen.has(a)) continue;
        seen.add(a);
        out.push({ address: a, ...(e.hostname ? { hostname: e.hostname } : {}) });
      }
    }
  }
  return out.sort((a, b) => a.address.localeCompare(b.address));
}

export function lookup(view: ClusterView, domain: string, qname: string, qtype: string): LookupResult {
  const name = qname.toLowerCase().replace(/\.$/, "");
  const suffix = `.svc.${domain}`;
  if (name !== domain && !name.endsWith(`.${domain}`)) return { authoritative: false, answers: [], exists: false };
  const none = { authoritative: true, answers: [], exists: false };
  if (!name.endsWith(suffix)) return { ...none, exists: name === domain || name === `svc.${domain}` };
  const labels = name.slice(0, -suffix.length).split(".");
  // N, S.N, H.S.N or _P._PROTO.S.N
  if (labels.length === 1) return { ...none, exists: view.namespaceExists(labels[0]!) };
  const [ns, svcName] = [labels.at(-1)!, labels.at(-2)!];
  const svc = view.service(ns, svcName);
  if (svc === undefined) return none;
  const spec = svc.spec ?? {};
  const fqdn = `${svcName}.${ns}${suffix}`;
  const headless = spec.clusterIP === "None";
  if (labels.length === 2) {
    if (spec.type === "ExternalName") return { authoritative: true, exists: true, answers: spec.externalName ? [{ type: "CNAME", name: fqdn, target: spec.externalName }] : [] };
    if (qtype !== "A" && qtype !== "ANY") return { authoritative: true, exists: true, answers: [] };
    const addresses = headless ? readyAddresses(view.slices(ns, svcName)).map((e) => e.address) : spec.clusterIP ? [spec.clusterIP] : [];
    return { authoritative: true, exists: true, answers: addresses.filter((a) => !a.includes(":")).map((address) => ({ type: "A", name: fqdn, address })) };
  }
  if (labels.length === 3 && headless) {
    const host = labels[0]!;
    const hit = readyAddresses(view.slices(ns, svcName)).filter((e) => e.hostname === host);
    if (hit.length === 0) return none;
    return { authoritative: true, exists: true, answers: qtype === "A" || qtype === "ANY" ? hit.map((e) => ({ type: "A", name: `${host}.${fqdn}`, address: e.address })) : [] };
  }
  if (labels.length === 4 && labels[0]!.startsWith("_") && labels[1]!.startsWith("_")) {
    const portName = labels[0]!.slice(1);
    const proto = labels[1]!.slice(1).toUpperCase();
    const port = (spec.ports ?? []).find((p) => p?.name === portName && (p.protocol ?? "TCP") === proto);
    if (port?.port == null) return none;
    const answers: Answer[] = qtype === "SRV" || qtype === "ANY" ? [{ type: "SRV", name: `${labels[0]}.${labels[1]}.${fqdn}`, port: port.port, target: fqdn }] : [];
    return { authoritative: true, exists: true, answers };
  }
  return none;
}
