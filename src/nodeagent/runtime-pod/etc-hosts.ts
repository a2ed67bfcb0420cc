// The agent-managed /etc/hosts (upstream's kubelet-managed hosts file): one
// file per pod (<podDir>/etc-hosts), rewritten at every container start and
// mounted at /etc/hosts into each container that does not mount something of
// its own there. A pod on the pod network gets the managed layout (localhost
// lines, its own IPs with its name, and under subdomain its FQDN); a
// host-network pod gets the node's /etc/hosts under a header of its own. Both
// end with the pod's hostAliases. A sandbox without an IP gets no file (the
// runtime's stays), as upstream.

import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Container, Pod } from "../../api/core/types.js";
import type { Mount } from "../cri/index.js";

export const ETC_HOSTS_PATH = "/etc/hosts";
const MANAGED_HEADER = "# Kubernetes-managed hosts file.\n";
const HOST_NETWORK_HEADER = "# Kubernetes-managed hosts file (host network).\n";
const HOSTNAME_MAX = 63;

export interface HostAlias {
  ip?: string;
  hostnames?: string[];
}

/**
 * The pod's hostname (spec.hostname, else its name, cut to 63 characters
 * without a trailing '-' or '.') and, with a subdomain, its domain
 * `<subdomain>.<namespace>.svc.<clusterDomain>`.
 */
export function podHostnameAndDomain(pod: Pod, clusterDomain: string): { hostname: string; domain: string } {
  const spec = pod.spec ?? {};
  let hostname = spec.hostname || pod.metadata.name || "";
  if (hostname.length > HOSTNAME_MAX) hostname = hostname.slice(0, HOSTNAME_MAX).replace(/[-.]+$/, "");
  const subdomain = spec.subdomain ?? "";
  const domain = subdomain !== "" ? `${subdomain}.${pod.metadata.namespace ?? "default"}.svc.${clusterDomain}` : "";
  return { hostname, domain };
}

/** "# Entries added by HostAliases." and one line per alias: its IP, then its names tab-separated ("" for none). */
export function hostAliasEntries(aliases: readonly HostAlias[] | null | undefined): string {
  if (!aliases || aliases.length === 0) return "";
  return "\n# Entries added by HostAliases.\n" + aliases.map((a) => `${a.ip ?? ""}\t${(a.hostnames ?? []).join("\t")}\n`).join("");
}

/** The managed file of a pod on the pod network. */
export function managedHostsContent(ips: readonly string[], hostname: string, domain: string, aliases?: readonly HostAlias[] | null): string {
  let out = MANAGED_HEADER
    + "127.0.0.1\tlocalhost\n"
    + "::1\tlocalhost ip6-localhost ip6-loopback\n"
    + "fe00::0\tip6-localnet\n"
    + "fe00::0\tip6-mcastprefix\n"
    + "fe00::1\tip6-allnodes\n"
    + "fe00::2\tip6-allrouters\n";
  for (const ip of ips) out += domain !== "" ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return out + hostAliasEntries(aliases);
}

/** The file of a host-network pod: the node's hosts file, and the aliases. */
export function hostNetworkHostsContent(nodeHosts: string, aliases?: readonly HostAlias[] | null): string {
  return HOST_NETWORK_HEADER + nodeHosts + hostAliasEntries(aliases);
}

/** Whether `container` gets the managed file: the pod has an IP and the container mounts nothing at /etc/hosts. */
export function mountsManagedHosts(container: Container, podIPs: readonly string[]): boolean {
  return podIPs.length > 0 && !(container.volumeMounts ?? []).some((m) => m.mountPath === ETC_HOSTS_PATH);
}

export interface HostsFileInput {
  pod: Pod;
  podDir: string;
  podIPs: readonly string[];
  clusterDomain: string;
  /** The node's hosts file (host-network pods); default /etc/hosts. */
  nodeHostsFile?: string;
}

/** Writes the pod's file (again: the pod's IPs or aliases may have changed) and returns its mount. */
export function hostsFileMount(input: HostsFileInput): Mount {
  const { pod } = input;
  const aliases = pod.spec?.hostAliases;
  let content: string;
  if (pod.spec?.hostNetwork) {
    content = hostNetworkHostsContent(readFileSync(input.nodeHostsFile ?? ETC_HOSTS_PATH, "utf8"), aliases);
  } else {
    const { hostname, domain } = podHostnameAndDomain(pod, input.clusterDomain);
    content = managedHostsContent(input.podIPs, hostname, domain, aliases);
  }
  mkdirSync(input.podDir, { recursive: true });
  const hostPath = join(input.podDir, "etc-hosts");
  writeFileSync(hostPath, content, { mode: 0o644 });
  return { containerPath: ETC_HOSTS_PATH, hostPath, readonly: false, selinuxRelabel: true, propagation: "PROPAGATION_PRIVATE", uidMappings: [], gidMappings: [], recursiveReadOnly: false, image: null };
}
