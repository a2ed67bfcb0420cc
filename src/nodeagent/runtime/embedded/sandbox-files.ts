// A sandbox's /etc files (hostname, hosts, resolv.conf), which its containers
// mount: written off the event loop, so other pods' starts go on meanwhile.
// resolv.conf is the agent's DNS config (search, nameserver and options lines,
// as containerd writes them) when it has any, else the host's.

import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type * as cri from "../../cri/types.js";

export interface SandboxFiles {
  hostname: string;
  ip: string;
  dns: cri.DNSConfig | null;
  /** The pod's log directory, made here too ("" for none). */
  logDirectory: string;
}

export async function writeSandboxFiles(dir: string, f: SandboxFiles): Promise<void> {
  const dns = f.dns;
  const resolv = dns !== null && dns.servers.length + dns.searches.length + dns.options.length > 0
    ? [...(dns.searches.length ? [`search ${dns.searches.join(" ")}`] : []), ...dns.servers.map((s) => `nameserver ${s}`), ...(dns.options.length ? [`options ${dns.options.join(" ")}`] : [])].join("\n") + "\n"
    : existsSync("/etc/resolv.conf") ? readFileSync("/etc/resolv.conf", "utf8") : "";
  await mkdir(dir, { recursive: true });
  await Promise.all([
    writeFile(join(dir, "hostname"), `${f.hostname}\n`),
    writeFile(join(dir, "hosts"), `127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n${f.ip}\t${f.hostname}\n`),
    writeFile(join(dir, "resolv.conf"), resolv),
    f.logDirectory !== "" ? mkdir(f.logDirectory, { recursive: true }) : undefined,
  ]);
}
