// What the agent reads about its machine: name, addresses, CPU and memory,
// the root directory's file system, PIDs and the OS. Node status, admission
// and the pressure conditions read these (seed 001, "Node status").

import { readFileSync, statfsSync } from "node:fs";
import { arch, cpus, hostname, networkInterfaces, release, totalmem } from "node:os";

export interface FsStats {
  capacityBytes: number;
  availableBytes: number;
  inodes: number;
  inodesFree: number;
}

export interface PidStats {
  max: number;
  running: number;
}

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

/** The host name, lower-cased as upstream's node name (--hostname-override wins). */
export function nodeHostname(override?: string): string {
  return (override || hostname()).trim().toLowerCase();
}

/** The first non-internal IPv4 address, else the loopback one: the node's InternalIP. */
export function primaryAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return "127.0.0.1";
}

export function cpuCount(): number {
  return cpus().length;
}

export function memoryTotalBytes(): number {
  return totalmem();
}

/** MemAvailable from /proc/meminfo (what upstream's memory.available signal uses). */
export function memoryAvailableBytes(): number {
  const m = /^MemAvailable:\s+(\d+) kB$/m.exec(readText("/proc/meminfo") ?? "");
  return m ? Number(m[1]) * 1024 : 0;
}

export function fsStats(path: string): FsStats {
  const s = statfsSync(path);
  return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize, inodes: s.files, inodesFree: s.ffree };
}

/** kernel.pid_max and the processes now running (upstream's pid.available signal). */
export function pidStats(): PidStats {
  const max = Number((readText("/proc/sys/kernel/pid_max") ?? "32768").trim());
  // The fourth field of /proc/loadavg is "running/total" scheduling entities.
  const m = /(\d+)\/(\d+)/.exec((readText("/proc/loadavg") ?? "").split(" ")[3] ?? "");
  return { max, running: m ? Number(m[2]) : 0 };
}

/** Total swap in bytes from /proc/swaps (0 when none is on). */
export function swapTotalBytes(): number {
  const lines = (readText("/proc/swaps") ?? "").trim().split("\n").slice(1);
  return lines.reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[2] ?? 0) * 1024, 0);
}

/** Go's GOARCH spelling, which the arch label and nodeInfo use. */
export function goArch(): string {
  const a = arch();
  return a === "x64" ? "amd64" : a === "ia32" ? "386" : a;
}

export function osImage(): string {
  const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readText("/etc/os-release") ?? "");
  return m?.[1] ?? "Unknown";
}

export function kernelVersion(): string {
  return release();
}

export function machineID(): string {
  return (readText("/etc/machine-id") ?? "").trim();
}

export function bootID(): string {
  return (readText("/proc/sys/kernel/random/boot_id") ?? "").trim();
}

/** Whether an IPv4 address is private, loopback, link-local or documentation space (not externally routable). */
export function isPrivateIPv4(ip: string): boolean {
  const [a = 0, b = 0] = ip.split(".").map(Number);
  return a === 10 || a === 127 || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b < 128) || (a === 192 && b === 0);
}
