// One reading of the node, its pods and their containers, the source of
// /stats/summary, /metrics/resource and the container metrics. Containers and
// pods come from the runtime over CRI, so both runtimes (embedded and
// containerd) answer the same way: ListContainers and ListContainerStats for
// the containers, ListPodSandbox (and ListPodSandboxStats where the runtime
// has it) for the pods, a verbose ContainerStatus for each running
// container's pid, whose cgroup v2 group gives its pressure. A pod's usage is
// its running containers' sum (as upstream's CRI stats provider); its
// pressure is its group's, the common parent of its containers' groups when
// that parent is named after the sandbox (the embedded runtime's layout;
// containerd with the cgroupfs driver gives pods no group of their own).

import { readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { CriClient } from "../cri/index.js";
import type * as cri from "../cri/types.js";
import { diskUsage, type InterfaceCounters } from "../runtime/embedded/host.js";
import { fsOf, nodeCpuNanos, nodeInterfaces, nodeMemory, processLimits, unifiedGroupOf, unifiedRoot, type FsReading, type NodeMemory } from "./host-stats.js";
import { cgroupPsi, nodePsi, PSI_RESOURCES, type PsiResource, type PsiStats } from "./psi.js";

export type Pressure = Partial<Record<PsiResource, PsiStats>>;

export interface CpuMemory {
  cpuNanos?: number;
  nanoCores?: number;
  workingSet?: number;
  usage?: number;
  rss?: number;
  available?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

export interface ContainerReading extends CpuMemory {
  name: string;
  id: string;
  image: string;
  /** Unix nanoseconds. */
  startedAt: number;
  rootfsUsed?: number;
  rootfsMount?: string;
  logsUsed: number;
  swap?: number;
  psi: Pressure;
}

export interface PodReading extends CpuMemory {
  name: string;
  namespace: string;
  uid: string;
  sandboxId: string;
  startTime?: string;
  containers: ContainerReading[];
  interfaces: InterfaceCounters[];
  processCount?: number;
  volumes: { name: string; usedBytes: number }[];
  psi: Pressure;
}

export interface NodeReading extends CpuMemory {
  capacity: number;
  interfaces: InterfaceCounters[];
  fs?: FsReading;
  imageFs?: FsReading;
  rlimit: { maxpid: number; curproc: number };
  psi: Pressure;
}

export interface Reading {
  /** Unix milliseconds of the reading. */
  at: number;
  node: NodeReading;
  pods: PodReading[];
}

export interface CollectorOptions {
  runtime: CriClient;
  rootDir: string;
  podLogsDir: string;
  /** Pod start times by uid (the agent's pod statuses). */
  podStartTimes: () => ReadonlyMap<string, string>;
}

const val = (v: { value: number } | null | undefined): number | undefined => (v == null ? undefined : Number(v.value));

function cpuMemoryOf(stats: cri.ContainerStats | undefined): CpuMemory {
  if (stats === undefined) return {};
  const out: CpuMemory = {};
  const set = <K extends keyof CpuMemory>(k: K, v: number | undefined): void => {
    if (v !== undefined) out[k] = v;
  };
  set("cpuNanos", val(stats.cpu?.usageCoreNanoSeconds));
  set("nanoCores", val(stats.cpu?.usageNanoCores));
  set("workingSet", val(stats.memory?.workingSetBytes));
  set("usage", val(stats.memory?.usageBytes));
  set("rss", val(stats.memory?.rssBytes));
  set("available", val(stats.memory?.availableBytes));
  set("pageFaults", val(stats.memory?.pageFaults));
  set("majorPageFaults", val(stats.memory?.majorPageFaults));
  return out;
}

const SUMMED = ["cpuNanos", "nanoCores", "workingSet", "usage", "rss", "pageFaults", "majorPageFaults"] as const;

function sum(readings: readonly CpuMemory[]): CpuMemory {
  const out: CpuMemory = {};
  for (const k of SUMMED) {
    const values = readings.map((r) => r[k]).filter((v): v is number => v !== undefined);
    if (values.length > 0) out[k] = values.reduce((a, b) => a + b, 0);
  }
  return out;
}

function pressureOf(dir: string | undefined): Pressure {
  const out: Pressure = {};
  if (dir === undefined) return out;
  for (const r of PSI_RESOURCES) {
    const p = cgroupPsi(dir, r);
    if (p !== undefined) out[r] = p;
  }
  return out;
}

export class StatsCollector {
  readonly #o: CollectorOptions;
  #lastNodeCpu: { at: number; nanos: number } | undefined;

  constructor(options: CollectorOptions) {
    this.#o = options;
  }

  async read(): Promise<Reading> {
    const { runtime } = this.#o;
    const at = Date.now();
    const [sandboxes, containers, stats, podStats] = await Promise.all([
      runtime.listPodSandbox({ filter: { state: { state: "SANDBOX_READY" } } }),
      runtime.listContainers({ filter: { state: { state: "CONTAINER_RUNNING" } } }),
      runtime.listContainerStats({}),
      // containerd before 1.6 and some runtimes lack it: pods then have no network counters.
      runtime.listPodSandboxStats({}).catch(() => ({ stats: [] as cri.PodSandboxStats[] })),
    ]);
    const statsById = new Map(stats.stats.map((s) => [s.attributes?.id ?? "", s]));
    const podStatsById = new Map(podStats.stats.map((s) => [s.attributes?.id ?? "", s]));
    const unified = unifiedRoot();
    const startTimes = this.#o.podStartTimes();
    const pods: PodReading[] = [];
    for (const sandbox of sandboxes.items) {
      const meta = sandbox.metadata;
      if (meta === null) continue;
      const own = containers.containers.filter((c) => c.podSandboxId === sandbox.id);
      const groups: string[] = [];
      const readings: ContainerReading[] = [];
      for (const c of own) {
        const status = await runtime.containerStatus({ containerId: c.id, verbose: true }).catch(() => undefined);
        if (status?.status == null) continue;
        let pid = 0;
        try {
          pid = Number((JSON.parse(status.info["info"] ?? "{}") as { pid?: number }).pid ?? 0);
        } catch {
          // no verbose info: no pressure
        }
        const group = unifiedGroupOf(pid, unified);
        if (group !== undefined) groups.push(group);
        const s = statsById.get(c.id);
        const name = c.metadata?.name ?? "";
        const logDir = join(this.#o.podLogsDir, `${meta.namespace}_${meta.name}_${meta.uid}`, name);
        readings.push({
          name,
          id: c.id,
          image: status.status.image?.image ?? c.image?.image ?? "",
          startedAt: Number(status.status.startedAt),
          ...cpuMemoryOf(s),
          ...(val(s?.writableLayer?.usedBytes) !== undefined ? { rootfsUsed: val(s?.writableLayer?.usedBytes)! } : {}),
          ...(s?.writableLayer?.fsId?.mountpoint ? { rootfsMount: s.writableLayer.fsId.mountpoint } : {}),
          ...(val(s?.swap?.swapUsageBytes) !== undefined ? { swap: val(s?.swap?.swapUsageBytes)! } : {}),
          logsUsed: diskUsage(logDir),
          psi: pressureOf(group),
        });
      }
      const parents = new Set(groups.map((g) => dirname(g)));
      const podGroup = parents.size === 1 ? [...parents][0]! : undefined;
      const ps = podStatsById.get(sandbox.id)?.linux;
      const interfaces = (ps?.network?.interfaces ?? []).map((i) => ({ name: i.name, rxBytes: val(i.rxBytes) ?? 0, rxErrors: val(i.rxErrors) ?? 0, txBytes: val(i.txBytes) ?? 0, txErrors: val(i.txErrors) ?? 0 }));
      const processCount = val(ps?.process?.processCount);
      const startTime = startTimes.get(meta.uid);
      pods.push({
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        sandboxId: sandbox.id,
        ...(startTime !== undefined ? { startTime } : {}),
        containers: readings,
        ...sum(readings),
        interfaces,
        ...(processCount !== undefined ? { processCount } : {}),
        volumes: this.#volumes(meta.uid),
        psi: podGroup !== undefined && basename(podGroup) === sandbox.id ? pressureOf(podGroup) : {},
      });
    }
    return { at, node: this.#node(at), pods };
  }

  #node(at: number): NodeReading {
    const memory: NodeMemory = nodeMemory();
    const nanos = nodeCpuNanos();
    let nanoCores: number | undefined;
    if (nanos !== undefined) {
      const prev = this.#lastNodeCpu;
      if (prev !== undefined && at > prev.at) nanoCores = Math.max(0, Math.round(((nanos - prev.nanos) / ((at - prev.at) * 1e6)) * 1e9));
      this.#lastNodeCpu = { at, nanos };
    }
    const psi: Pressure = {};
    for (const r of PSI_RESOURCES) {
      const p = nodePsi(r);
      if (p !== undefined) psi[r] = p;
    }
    const fs = fsOf(this.#o.rootDir);
    return {
      capacity: memory.capacity,
      ...(nanos !== undefined ? { cpuNanos: nanos } : {}),
      ...(nanoCores !== undefined ? { nanoCores } : {}),
      workingSet: memory.workingSet,
      usage: memory.usage,
      rss: memory.rss,
      available: memory.available,
      pageFaults: memory.pageFaults,
      majorPageFaults: memory.majorPageFaults,
      interfaces: nodeInterfaces(),
      ...(fs !== undefined ? { fs, imageFs: fs } : {}),
      rlimit: processLimits(),
      psi,
    };
  }

  /** The pod's volumes under <root>/pods/<uid>/volumes/<plugin>/<name>, with the bytes they hold. */
  #volumes(uid: string): { name: string; usedBytes: number }[] {
    const base = join(this.#o.rootDir, "pods", uid, "volumes");
    const out: { name: string; usedBytes: number }[] = [];
    for (const plugin of listDir(base)) {
      for (const name of listDir(join(base, plugin))) out.push({ name, usedBytes: diskUsage(join(base, plugin, name)) });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
