// Facts about the host and its processes that the embedded runtime reads:
// the pod IP, users in an image's /etc/passwd, process start times and usage
// from /proc, disk usage of a writable layer, signal numbers.

import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { constants as osConstants, networkInterfaces } from "node:os";
import { join } from "node:path";

export function lookupUser(root: string, name: string): { uid: number; gid: number } | undefined {
  try {
    for (const line of readFileSync(join(root, "etc", "passwd"), "utf8").split("\n")) {
      const f = line.split(":");
      if (f[0] === name && f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) };
    }
  } catch {
    // no passwd file
  }
  return undefined;
}

/** Host-network pods' IP: re-read at most every HOST_IP_TTL_MS, as networkInterfaces() lists every veth on the host (milliseconds per call with hundreds of pods). */
const HOST_IP_TTL_MS = 10_000;
let hostIpCache: { ip: string; at: number } | undefined;

export function hostIp(now = performance.now()): string {
  if (hostIpCache !== undefined && now - hostIpCache.at < HOST_IP_TTL_MS) return hostIpCache.ip;
  let ip = "127.0.0.1";
  search: for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.family === "IPv4" && !a.internal) {
        ip = a.address;
        break search;
      }
    }
  }
  hostIpCache = { ip, at: now };
  return ip;
}

/** /proc/<pid>/stat field 22 (start time in clock ticks), "" when the process is gone. */
export function procStart(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    return "";
  }
}

/** CPU and memory of one process from /proc, when there is no cgroup to read. */
export function procUsage(pid: number): { cpuNanos?: number; rss?: number; workingSet?: number; memoryUsage?: number; pageFaults?: number; majorPageFaults?: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = 100; // USER_HZ on Linux
    const cpu = ((Number(f[11]) + Number(f[12])) / ticks) * 1e9;
    const rss = Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]) * 4096;
    return { cpuNanos: cpu, rss, workingSet: rss, memoryUsage: rss, pageFaults: Number(f[7]), majorPageFaults: Number(f[9]) };
  } catch {
    return {};
  }
}

export function diskUsage(dir: string): number {
  let total = 0;
  const walk = (d: string, depth: number): void => {
    if (depth > 32) return;
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e);
      const st = lstatSync(p, { throwIfNoEntry: false });
      if (st === undefined) continue;
      if (st.isDirectory()) walk(p, depth + 1);
      else total += st.size;
    }
  };
  if (existsSync(dir) && statSync(dir).isDirectory()) walk(dir, 0);
  return total;
}

export function signalNumber(signal: NodeJS.Signals | null): number {
  return signal === null ? 0 : osConstants.signals[signal] ?? 0;
}

export interface InterfaceCounters {
  name: string;
  rxBytes: number;
  rxErrors: number;
  txBytes: number;
  txErrors: number;
}

/** Interface counters of the network namespace `pid` lives in (/proc/<pid>/net/dev), loopback left out. */
export function netDev(pid: number): InterfaceCounters[] {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/net/dev`, "utf8");
  } catch {
    return [];
  }
  const out: InterfaceCounters[] = [];
  for (const line of text.split("\n").slice(2)) {
    const m = /^\s*([^:]+):\s*(.*)$/.exec(line);
    if (m === null || m[1] === "lo") continue;
    const f = m[2]!.trim().split(/\s+/).map(Number);
    out.push({ name: m[1]!, rxBytes: f[0]!, rxErrors: f[2]!, txBytes: f[8]!, txErrors: f[10]! });
  }
  return out;
}

/**
 * Why `command` cannot be run inside `root` with `path` (the container's
 * PATH), in runc's words, or undefined when it can. Links are not followed:
 * an absolute link points into the container's root, not the host's.
 */
export function missingExecutable(root: string, command: string, path: string): string | undefined {
  const present = (p: string): boolean => lstatSync(join(root, p), { throwIfNoEntry: false }) !== undefined;
  if (command.includes("/")) return present(command) ? undefined : `exec: "${command}": stat ${command}: no such file or directory`;
  for (const dir of path.split(":")) if (dir !== "" && present(join(dir, command))) return undefined;
  return `exec: "${command}": executable file not found in $PATH`;
}
