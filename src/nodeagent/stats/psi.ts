// Pressure stall information (seed 002, "Pressure metrics"): the kernel's
// `some`/`full` lines of /proc/pressure/{cpu,memory,io} (the node) and of a
// cgroup v2 group's {cpu,memory,io}.pressure files (pods and containers). On
// a cgroup v1 host the unified hierarchy (/sys/fs/cgroup/unified) still has
// these files for every group a process joined there.

import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface PsiData {
  /** Cumulative stall time in microseconds. */
  total: number;
  /** Percentage of wall-clock time stalled over 10 s, 60 s, 300 s. */
  avg10: number;
  avg60: number;
  avg300: number;
}

export interface PsiStats {
  full: PsiData;
  some: PsiData;
}

export type PsiResource = "cpu" | "memory" | "io";
export const PSI_RESOURCES: readonly PsiResource[] = ["cpu", "memory", "io"];

/** Parses a pressure file; undefined when it has no `some` line. A missing `full` line (cpu before 5.13) reads as zeros. */
export function parsePsi(text: string): PsiStats | undefined {
  const lines = new Map<string, PsiData>();
  for (const line of text.split("\n")) {
    const [kind, ...fields] = line.trim().split(/\s+/);
    if (kind !== "some" && kind !== "full") continue;
    const values = new Map(fields.map((f) => f.split("=") as [string, string]));
    const num = (k: string): number => {
      const v = Number(values.get(k));
      return Number.isFinite(v) ? v : 0;
    };
    lines.set(kind, { total: num("total"), avg10: num("avg10"), avg60: num("avg60"), avg300: num("avg300") });
  }
  const some = lines.get("some");
  if (some === undefined) return undefined;
  return { some, full: lines.get("full") ?? { total: 0, avg10: 0, avg60: 0, avg300: 0 } };
}

export function readPsi(file: string): PsiStats | undefined {
  try {
    return parsePsi(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

/** The node's pressure (/proc/pressure/<resource>); undefined without PSI in the kernel. */
export function nodePsi(resource: PsiResource, procRoot = "/proc"): PsiStats | undefined {
  return readPsi(join(procRoot, "pressure", resource));
}

/** A cgroup's pressure, `dir` being its directory in a cgroup v2 hierarchy. */
export function cgroupPsi(dir: string, resource: PsiResource): PsiStats | undefined {
  return readPsi(join(dir, `${resource}.pressure`));
}
