// The node's own readings for the summary and the resource metrics: CPU time
// and memory of the root cgroup (v1 cpuacct/memory or v2 cpu.stat/memory.stat;
// /proc/stat and /proc/meminfo without them), the host's interfaces, the file
// system of the agent's root directory, the process limit, and where a
// process's cgroup v2 group lives (for pressure on a v1 hybrid host).

import { existsSync, readdirSync, readFileSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { netDev, type InterfaceCounters } from "../runtime/embedded/host.js";

const CGROUP_ROOT = "/sys/fs/cgroup";
const USER_HZ = 100;

function read(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function keyValues(text: string | undefined, sep = /\s+/): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of (text ?? "").split("\n")) {
    const [k, v] = line.trim().split(sep);
    if (k && v !== undefined) out.set(k.replace(/:$/, ""), Number(v));
  }
  return out;
}

/** Cumulative CPU time of the whole node in nanoseconds. */
export function nodeCpuNanos(): number | undefined {
  const v1 = read(join(CGROUP_ROOT, "cpuacct", "cpuacct.usage"));
  if (v1 !== undefined && Number.isFinite(Number(v1.trim()))) return Number(v1.trim());
  const v2 = keyValues(read(join(CGROUP_ROOT, "cpu.stat"))).get("usage_usec");
  if (v2 !== undefined) return v2 * 1000;
  const stat = read("/proc/stat")?.split("\n").find((l) => l.startsWith("cpu "));
  if (stat === undefined) return undefined;
  // user nice system idle iowait irq softirq steal: busy time is all but idle and iowait.
  const f = stat.trim().split(/\s+/).slice(1).map(Number);
  const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
  return Math.round((busy / USER_HZ) * 1e9);
}

export interface NodeMemory {
  capacity: number;
  usage: number;
  workingSet: number;
  rss: number;
  pageFaults: number;
  majorPageFaults: number;
  available: number;
}

/** The node's memory as upstream reads it: the root cgroup's usage less inactive file pages. */
export function nodeMemory(): NodeMemory {
  const info = keyValues(read("/proc/meminfo"));
  const kb = (k: string): number => (info.get(k) ?? 0) * 1024;
  const capacity = kb("MemTotal");
  const vmstat = keyValues(read("/proc/vmstat"));
  let usage = capacity - kb("MemFree");
  let inactiveFile = kb("Inactive(file)");
  let rss = kb("AnonPages");
  const v1Usage = read(join(CGROUP_ROOT, "memory", "memory.usage_in_bytes"));
  if (v1Usage !== undefined) {
    const stat = keyValues(read(join(CGROUP_ROOT, "memory", "memory.stat")));
    usage = Number(v1Usage.trim());
    inactiveFile = stat.get("total_inactive_file") ?? inactiveFile;
    rss = stat.get("total_rss") ?? rss;
  }
  const workingSet = Math.max(0, usage - inactiveFile);
  return {
    capacity,
    usage,
    workingSet,
    rss,
    pageFaults: vmstat.get("pgfault") ?? 0,
    majorPageFaults: vmstat.get("pgmajfault") ?? 0,
    available: Math.max(0, capacity - workingSet),
  };
}

/** The host's interfaces (the agent's network namespace), loopback left out. */
export function nodeInterfaces(): InterfaceCounters[] {
  return netDev(process.pid);
}

export interface FsReading {
  capacityBytes: number;
  availableBytes: number;
  usedBytes: number;
  inodes: number;
  inodesFree: number;
  inodesUsed: number;
}

/** The file system holding `dir`. */
export function fsOf(dir: string): FsReading | undefined {
  try {
    const s = statfsSync(dir);
    const capacityBytes = s.blocks * s.bsize;
    return {
      capacityBytes,
      availableBytes: s.bavail * s.bsize,
      usedBytes: (s.blocks - s.bfree) * s.bsize,
      inodes: s.files,
      inodesFree: s.ffree,
      inodesUsed: s.files - s.ffree,
    };
  } catch {
    return undefined;
  }
}

/** The kernel's process limit and the number of processes now. */
export function processLimits(): { maxpid: number; curproc: number } {
  const maxpid = Number(read("/proc/sys/kernel/pid_max")?.trim() ?? 0);
  let curproc = 0;
  try {
    curproc = readdirSync("/proc").filter((e) => /^\d+$/.test(e)).length;
  } catch {
    // no /proc
  }
  return { maxpid, curproc };
}

/** Where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup (v2) or /sys/fs/cgroup/unified (v1 hybrid); undefined on pure v1. */
export function unifiedRoot(): string | undefined {
  if (existsSync(join(CGROUP_ROOT, "cgroup.controllers"))) return CGROUP_ROOT;
  if (existsSync(join(CGROUP_ROOT, "unified", "cgroup.procs"))) return join(CGROUP_ROOT, "unified");
  return undefined;
}

/** The directory of `pid`'s cgroup v2 group ("0::/path" in /proc/PID/cgroup), when it is below the root. */
export function unifiedGroupOf(pid: number, root: string | undefined = unifiedRoot()): string | undefined {
  if (root === undefined || !(pid > 0)) return undefined;
  const line = read(`/proc/${pid}/cgroup`)?.split("\n").find((l) => l.startsWith("0::"));
  const path = line?.slice(3).trim();
  if (path === undefined || path === "" || path === "/") return undefined;
  return join(root, path);
}
