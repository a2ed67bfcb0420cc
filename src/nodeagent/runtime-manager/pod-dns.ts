// A pod's DNS settings for its sandbox (the resolv.conf the runtime writes), as
// upstream's kubelet forms them from the pod's dnsPolicy and dnsConfig:
//   ClusterFirst (not on the host network) and ClusterFirstWithHostNet: the
//     cluster DNS servers only; search <ns>.svc.<domain> svc.<domain> <domain>
//     then the host's search domains; options ndots:5.
//   Default, or ClusterFirst on the host network, or ClusterFirst without a
//     cluster DNS server: the host's resolv.conf (nameservers, search, options).
//   None: nothing but the pod's dnsConfig.
// The pod's dnsConfig is then appended (duplicates dropped; its options
// override ones of the same name), and the result is cut to upstream's limits:
// 3 nameservers; 6 search domains of at most 253 characters, 256 in all.

import { readFileSync } from "node:fs";
import type { Pod } from "../../api/core/types.js";
import type { DNSConfig } from "../cri/types.js";

export const MAX_NAMESERVERS = 3;
export const MAX_SEARCH_PATHS = 6;
export const MAX_SEARCH_CHARS = 256;
const MAX_DOMAIN_LENGTH = 253;
/** resolv.conf files larger than this are refused, as upstream's kubelet does. */
const MAX_RESOLV_CONF_BYTES = 10 << 20;

export interface PodDnsInput {
  clusterDNS: readonly string[];
  clusterDomain: string;
  /** The host's DNS settings (hostDnsConfig). */
  hostDns: DNSConfig;
  /** Told what upstream reports as a Warning event on the pod (MissingClusterDNS, DNSConfigForming). */
  dnsWarning?: (reason: string, message: string) => void;
  /** The agent's name in the naming table (kubelet under k8s.io), which the warnings name. Default "kubelet". */
  agentName?: string;
}

interface PodDNSConfig {
  nameservers?: string[] | null;
  searches?: string[] | null;
  options?: { name?: string; value?: string | null }[] | null;
}

/** resolv.conf's nameserver lines (all), last search line, last options line; "#" comments skipped. */
export function parseResolvConf(text: string): DNSConfig {
  const out: DNSConfig = { servers: [], searches: [], options: [] };
  for (const line of text.split("\n")) {
    const fields = line.trim().split(/\s+/).filter((f) => f !== "");
    if (fields.length === 0 || fields[0]!.startsWith("#")) continue;
    if (fields[0] === "nameserver" && fields[1] !== undefined) out.servers.push(fields[1]);
    if (fields[0] === "search") out.searches = fields.slice(1).map((s) => s.replace(/\.$/, ""));
    if (fields[0] === "options") out.options = fields.slice(1);
  }
  return out;
}

/**
 * The host's DNS settings from the agent's resolvConf file. An empty path means
 * "no host resolver", which upstream turns into the node's own (127.0.0.1, search
 * "."); a file that cannot be read (or is over 10 MiB) counts as empty.
 */
export function hostDnsConfig(path: string): DNSConfig {
  if (path === "") return { servers: ["127.0.0.1"], searches: ["."], options: [] };
  try {
    const text = readFileSync(path, "utf8");
    return parseResolvConf(text.length > MAX_RESOLV_CONF_BYTES ? "" : text);
  } catch {
    return { servers: [], searches: [], options: [] };
  }
}

function unique(list: readonly string[]): string[] {
  return [...new Set(list)];
}

/** Options by name, later ones winning: "ndots:5" and {name: ndots, value: "2"} are one option. */
function mergeOptions(existing: readonly string[], extra: PodDNSConfig["options"]): string[] {
  const byName = new Map<string, string>();
  for (const o of existing) {
    const i = o.indexOf(":");
    byName.set(i === -1 ? o : o.slice(0, i), i === -1 ? "" : o.slice(i + 1));
  }
  for (const o of extra ?? []) byName.set(o.name ?? "", o.value ?? "");
  return [...byName].map(([name, value]) => (value === "" ? name : `${name}:${value}`));
}

/** The search list cut to the limits: at most 6 paths, none over 253 characters, 256 characters joined. */
export function searchWithinLimits(searches: readonly string[]): string[] {
  let out = searches.slice(0, MAX_SEARCH_PATHS).filter((s) => s.length <= MAX_DOMAIN_LENGTH);
  while (out.join(" ").length > MAX_SEARCH_CHARS) out = out.slice(0, -1);
  return out;
}

export function podDnsConfig(pod: Pod, input: PodDnsInput): DNSConfig {
  const spec = pod.spec ?? {};
  const policy = spec.dnsPolicy ?? "ClusterFirst";
  const host = input.hostDns;
  let dns: DNSConfig;
  const cluster = policy === "ClusterFirstWithHostNet" || (policy === "ClusterFirst" && !spec.hostNetwork) || !["None", "Default", "ClusterFirst", "ClusterFirstWithHostNet"].includes(policy);
  if (policy === "None") {
    dns = { servers: [], searches: [], options: [] };
  } else if (cluster && input.clusterDNS.length > 0) {
    const d = input.clusterDomain;
    const ns = pod.metadata.namespace ?? "default";
    dns = {
      servers: [...input.clusterDNS],
      searches: d === "" ? host.searches : unique([`${ns}.svc.${d}`, `svc.${d}`, d, ...host.searches]),
      options: ["ndots:5"],
    };
  } else {
    if (cluster) {
      const ref = `${pod.metadata.name ?? ""}_${pod.metadata.namespace ?? ""}(${pod.metadata.uid ?? ""})`;
      input.dnsWarning?.("MissingClusterDNS", `pod: "${ref}". ${input.agentName ?? "kubelet"} does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`);
    }
    dns = host;
  }
  const extra = spec["dnsConfig"] as PodDNSConfig | null | undefined;
  if (extra) {
    dns = {
      servers: unique([...dns.servers, ...(extra.nameservers ?? [])]),
      searches: unique([...dns.searches, ...(extra.searches ?? [])]),
      options: mergeOptions(dns.options, extra.options),
    };
  }
  const servers = dns.servers.slice(0, MAX_NAMESERVERS);
  if (servers.length < dns.servers.length) input.dnsWarning?.("DNSConfigForming", `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${servers.join(" ")}`);
  const searches = searchWithinLimits(dns.searches);
  if (searches.length < dns.searches.length) input.dnsWarning?.("DNSConfigForming", `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${searches.join(" ")}`);
  return { servers, searches, options: dns.options };
}
