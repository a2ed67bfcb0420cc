// Cluster DNS names (upstream's DNS specification for services and pods, as
// CoreDNS's kubernetes plugin answers them). For a service `S` in namespace
// `N` under the cluster domain `D`:
//   S.N.svc.D                A/AAAA the cluster IPs; for a headless service, its ready endpoints
//   S.N.svc.D                CNAME  an ExternalName service's externalName
//   E.S.N.svc.D              A/AAAA the service's endpoint named E: its hostname, else its address
//                                   with dashes (10-89-0-7)
//   _P._PROTO.S.N.svc.D      SRV    each port named P of protocol PROTO: the cluster IP's name and the
//                                   service port, or for a headless service each endpoint's name and port
//   S.N.svc.D                SRV    the same for every port
//   A-B-C-D.N.pod.D          A      A.B.C.D (upstream's "pods insecure" mode: any address, known namespace)
//   D.C.B.A.in-addr.arpa     PTR    a cluster IP's S.N.svc.D; an endpoint address's E.S.N.svc.D
//                                   (ip6.arpa the same for IPv6)
// Names in the domain that match nothing are NXDOMAIN; a name that exists
// without records of the type asked is NOERROR with no answers. Reverse names
// that are no cluster address are not ours (the caller forwards them).
// Pure lookups over the services and endpoint slices the view gives.

import { isIP } from "node:net";
import type { Service } from "../api/core/types.js";
import type { EndpointSlice } from "../api/discovery/types.js";

export type Answer =
  | { type: "A" | "AAAA"; name: string; address: string }
  | { type: "CNAME"; name: string; target: string }
  | { type: "SRV"; name: string; port: number; weight: number; target: string }
  | { type: "PTR"; name: string; target: string };

export interface LookupResult {
  /** The name is in the cluster domain or is a cluster address's reverse name: we answer for it (NXDOMAIN when nothing matched). */
  authoritative: boolean;
  answers: Answer[];
  /** Address records of the SRV answers' targets (the additional section). */
  additional: Answer[];
  /** The name exists (NOERROR with no answers of the type asked) even if `answers` is empty. */
  exists: boolean;
}

/** A service's endpoint that holds an address (what a reverse lookup finds). */
export interface AddressOwner {
  namespace: string;
  service: string;
  hostname?: string;
}

export interface ClusterView {
  service(namespace: string, name: string): Service | undefined;
  slices(namespace: string, name: string): EndpointSlice[];
  namespaceExists(namespace: string): boolean;
  /** Services whose cluster IPs include `ip`. */
  servicesByIP(ip: string): Service[];
  /** The services' endpoints at `ip`. */
  endpointsByAddress(ip: string): AddressOwner[];
}

interface ReadyEndpoint {
  address: string;
  /** The endpoint's DNS label: its hostname, else its address with dashes. */
  label: string;
  ports: { name: string; protocol: string; port: number }[];
}

/** An address as a DNS label: 10.89.0.7 → 10-89-0-7, fd00::7 → fd00--7. */
export function dashed(address: string): string {
  return address.replace(/[.:]/g, "-");
}

/** The ready endpoints of a service's slices (a missing ready condition counts as ready), by address. */
function readyEndpoints(slices: readonly EndpointSlice[]): ReadyEndpoint[] {
  const out: ReadyEndpoint[] = [];
  const seen = new Set<string>();
  for (const s of slices) {
    if (s.addressType !== "IPv4" && s.addressType !== "IPv6") continue;
    const ports = (s.ports ?? []).filter((p) => typeof p.port === "number").map((p) => ({ name: p.name ?? "", protocol: p.protocol ?? "TCP", port: p.port! }));
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      for (const a of e.addresses ?? []) {
        if (seen.has(a) || isIP(a) === 0) continue;
        seen.add(a);
        out.push({ address: a, label: e.hostname || dashed(a), ports });
      }
    }
  }
  return out.sort((a, b) => a.address.localeCompare(b.address));
}

function addressAnswers(name: string, addresses: readonly string[], qtype: string): Answer[] {
  const want = (a: string) => (isIP(a) === 4 ? qtype === "A" || qtype === "ANY" : qtype === "AAAA" || qtype === "ANY");
  return addresses.filter(want).map((address) => ({ type: isIP(address) === 4 ? "A" : "AAAA", name, address }));
}

/** SRV answers with equal priority and upstream's equal share of weight 100 each. */
function srvAnswers(name: string, targets: readonly { port: number; target: string }[]): Answer[] {
  const weight = targets.length === 0 ? 0 : Math.floor(100 / targets.length);
  return targets.map((t) => ({ type: "SRV", name, port: t.port, weight, target: t.target }));
}

/** The address in a reverse name (4.3.2.1.in-addr.arpa, nibbles under ip6.arpa), or undefined. */
export function reverseAddress(name: string): string | undefined {
  const v4 = /^((?:\d{1,3}\.){3}\d{1,3})\.in-addr\.arpa$/.exec(name);
  if (v4) {
    const ip = v4[1]!.split(".").reverse().join(".");
    return isIP(ip) === 4 && !/(^|\.)0\d/.test(ip) ? ip : undefined;
  }
  const v6 = /^((?:[0-9a-f]\.){32})ip6\.arpa$/.exec(name);
  if (v6) {
    const hex = v6[1]!.replace(/\./g, "").split("").reverse().join("");
    const groups = hex.match(/.{4}/g)!.map((g) => g.replace(/^0+(?=.)/, ""));
    const ip = groups.join(":");
    return isIP(ip) === 6 ? canonicalV6(ip) : undefined;
  }
  return undefined;
}

/** An IPv6 address in the form Go and the API server print it: the longest run of zero groups (two or more) as `::`. */
function canonicalV6(ip: string): string {
  const groups = expandV6(ip);
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== "0") { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j;
  }
  if (best.len < 2) return groups.join(":");
  return `${groups.slice(0, best.at).join(":")}::${groups.slice(best.at + best.len).join(":")}`;
}

function expandV6(ip: string): string[] {
  const [head, tail] = ip.includes("::") ? ip.split("::") as [string, string] : [ip, undefined];
  const h = head === "" ? [] : head.split(":");
  const t = tail === undefined || tail === "" ? [] : tail.split(":");
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - h.length - t.length }, () => "0");
  return [...h, ...zeros, ...t].map((g) => g.toLowerCase().replace(/^0+(?=.)/, ""));
}

/** Two spellings of one address compare equal (IPv6 zero runs, case). */
function sameAddress(a: string, b: string): boolean {
  if (isIP(a) !== isIP(b)) return false;
  return isIP(a) === 4 ? a === b : expandV6(a).join(":") === expandV6(b).join(":");
}

function clusterIPs(svc: Service): string[] {
  const spec = svc.spec ?? {};
  const ips = spec.clusterIPs?.length ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : [];
  return ips.filter((ip) => isIP(ip) !== 0);
}

function reverseLookup(view: ClusterView, domain: string, name: string, qtype: string): LookupResult | undefined {
  const ip = reverseAddress(name);
  if (ip === undefined) return undefined;
  const targets = new Set<string>();
  for (const svc of view.servicesByIP(ip)) {
    if (clusterIPs(svc).some((c) => sameAddress(c, ip))) targets.add(`${svc.metadata.name}.${svc.metadata.namespace}.svc.${domain}`);
  }
  for (const e of view.endpointsByAddress(ip)) targets.add(`${e.hostname || dashed(ip)}.${e.service}.${e.namespace}.svc.${domain}`);
  if (targets.size === 0) return undefined;
  const answers: Answer[] = qtype === "PTR" || qtype === "ANY" ? [...targets].sort().map((target) => ({ type: "PTR", name, target })) : [];
  return { authoritative: true, exists: true, answers, additional: [] };
}

export function lookup(view: ClusterView, domain: string, qname: string, qtype: string): LookupResult {
  const name = qname.toLowerCase().replace(/\.$/, "");
  const none: LookupResult = { authoritative: true, answers: [], additional: [], exists: false };
  const found = (answers: Answer[], additional: Answer[] = []): LookupResult => ({ authoritative: true, exists: true, answers, additional });
  if (name.endsWith(".in-addr.arpa") || name.endsWith(".ip6.arpa")) return reverseLookup(view, domain, name, qtype) ?? { ...none, authoritative: false };
  if (name !== domain && !name.endsWith(`.${domain}`)) return { ...none, authoritative: false };
  if (name === domain) return found([]);
  const labels = name.slice(0, -domain.length - 1).split(".");
  const kind = labels.pop()!;
  if (kind !== "svc" && kind !== "pod") return none;
  if (labels.length === 0) return found([]);
  const ns = labels.at(-1)!;
  if (!view.namespaceExists(ns)) return none;
  if (labels.length === 1) return found([]);
  if (kind === "pod") {
    if (labels.length !== 2) return none;
    const v4 = labels[0]!.replace(/-/g, ".");
    const v6 = labels[0]!.replace(/-/g, ":");
    const address = isIP(v4) === 4 ? v4 : isIP(v6) === 6 ? v6 : undefined;
    return address === undefined ? none : found(addressAnswers(name, [address], qtype));
  }
  const svcName = labels.at(-2)!;
  const svc = view.service(ns, svcName);
  if (svc === undefined || labels.length > 4) return none;
  const spec = svc.spec ?? {};
  const fqdn = `${svcName}.${ns}.svc.${domain}`;
  if (spec.type === "ExternalName") {
    // Only the service's own name: CNAME to the external name, whatever the type asked.
    if (labels.length !== 2) return none;
    return found(spec.externalName ? [{ type: "CNAME", name: fqdn, target: spec.externalName.replace(/\.$/, "") }] : []);
  }
  const headless = spec.clusterIP === "None";
  const endpoints = () => readyEndpoints(view.slices(ns, svcName));
  const wants = (type: string) => qtype === type || qtype === "ANY";

  if (labels.length === 3) {
    // E.S.N.svc.D: the endpoint named E (of any service, as upstream).
    const hit = endpoints().filter((e) => e.label === labels[0]);
    return hit.length === 0 ? none : found(addressAnswers(name, hit.map((e) => e.address), qtype));
  }

  // S.N.svc.D, or _P._PROTO.S.N.svc.D for one named port.
  let portName: string | undefined;
  let proto: string | undefined;
  if (labels.length === 4) {
    if (!labels[0]!.startsWith("_") || !labels[1]!.startsWith("_")) return none;
    portName = labels[0]!.slice(1);
    proto = labels[1]!.slice(1).toUpperCase();
  }
  const matches = (p: { name?: string | null; protocol?: string | null }) => portName === undefined || ((p.name ?? "") === portName && (p.protocol ?? "TCP").toUpperCase() === proto);

  if (!headless) {
    const ports = (spec.ports ?? []).filter((p) => p != null && typeof p.port === "number" && matches(p));
    if (portName !== undefined && ports.length === 0) return none;
    const answers = wants("SRV") ? srvAnswers(name, ports.map((p) => ({ port: p.port!, target: fqdn }))) : [];
    const additional = answers.length > 0 ? addressAnswers(fqdn, clusterIPs(svc), "ANY") : [];
    if (portName !== undefined) return found(answers, additional);
    return found([...addressAnswers(name, clusterIPs(svc), qtype), ...answers], additional);
  }

  // Headless: the ready endpoints; none is NXDOMAIN, as upstream.
  const eps = endpoints();
  const targets = eps.flatMap((e) => e.ports.filter(matches).map((p) => ({ port: p.port, target: `${e.label}.${fqdn}`, address: e.address })));
  if (eps.length === 0 || (portName !== undefined && targets.length === 0)) return none;
  const answers = wants("SRV") ? srvAnswers(name, targets) : [];
  const additional = answers.length > 0 ? [...new Map(targets.map((t) => [t.target, t])).values()].flatMap((t) => addressAnswers(t.target, [t.address], "ANY")) : [];
  if (portName !== undefined) return found(answers, additional);
  return found([...addressAnswers(name, eps.map((e) => e.address), qtype), ...answers], additional);
}
