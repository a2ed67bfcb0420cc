// Container and pod stats of the embedded runtime, as upstream runtimes report
// them: CPU and memory from the container's cgroup (or /proc when there is
// none), CPU rate from the previous sample, the writable layer's disk use; a
// pod's sums its running containers', plus its network namespace's counters
// and its process count.

import { join } from "node:path";
import type * as cri from "../../cri/types.js";
import type { Cgroups } from "./cgroups.js";
import { diskUsage, netDev, procUsage } from "./host.js";
import { containerCgroup, type RuntimeLayout } from "./layout.js";
import { nowNs, type ContainerRecord, type SandboxRecord } from "./records.js";

export interface RuntimeStatsOptions {
  cgroups: Cgroups;
  layout: RuntimeLayout;
  sandbox: (id: string) => SandboxRecord;
  /** The sandbox's containers now running. */
  running: (sandboxId: string) => ContainerRecord[];
}

const u = (v: number | undefined): { value: number } | null => (v === undefined ? null : { value: v });

export class RuntimeStats {
  readonly #o: RuntimeStatsOptions;
  readonly #cpuSamples = new Map<string, { at: number; nanos: number }>();

  constructor(options: RuntimeStatsOptions) {
    this.#o = options;
  }

  /** A removed container's last CPU sample goes with it. */
  forget(containerId: string): void {
    this.#cpuSamples.delete(containerId);
  }

  container(c: ContainerRecord): cri.DeepPartial<cri.ContainerStats> {
    const { cgroups } = this.#o;
    const ts = nowNs();
    const attributes = { id: c.id, metadata: c.config.metadata, labels: c.config.labels, annotations: c.config.annotations };
    if (c.state !== "CONTAINER_RUNNING") return { attributes, cpu: { timestamp: ts }, memory: { timestamp: ts }, writableLayer: null, swap: null };
    let usage = cgroups.version !== undefined ? cgroups.usage(containerCgroup(this.#o.sandbox(c.podSandboxId), c)) : {};
    if (usage.cpuNanos === undefined) usage = procUsage(c.pid);
    let nanoCores: number | undefined;
    const prev = this.#cpuSamples.get(c.id);
    if (usage.cpuNanos !== undefined) {
      if (prev !== undefined && ts > prev.at) nanoCores = Math.max(0, Math.round(((usage.cpuNanos - prev.nanos) / (ts - prev.at)) * 1e9));
      this.#cpuSamples.set(c.id, { at: ts, nanos: usage.cpuNanos });
    }
    const available = usage.memoryLimit !== undefined && usage.workingSet !== undefined && usage.memoryLimit < 2 ** 62 ? Math.max(0, usage.memoryLimit - usage.workingSet) : undefined;
    const upper = join(this.#o.layout.containerDir(c.id), "upper");
    return {
      attributes,
      cpu: { timestamp: ts, usageCoreNanoSeconds: u(usage.cpuNanos), usageNanoCores: u(nanoCores) },
      memory: { timestamp: ts, workingSetBytes: u(usage.workingSet), availableBytes: u(available), usageBytes: u(usage.memoryUsage), rssBytes: u(usage.rss), pageFaults: u(usage.pageFaults), majorPageFaults: u(usage.majorPageFaults) },
      writableLayer: { timestamp: ts, fsId: { mountpoint: upper }, usedBytes: { value: c.imageId === "" ? 0 : diskUsage(upper) }, inodesUsed: { value: 0 } },
      swap: usage.swapUsage === undefined ? null : { timestamp: ts, swapUsageBytes: u(usage.swapUsage) },
    };
  }

  /** A pod's usage: its running containers' summed, the network of its namespace, its process count. */
  pod(s: SandboxRecord): cri.DeepPartial<cri.PodSandboxStats> {
    const { cgroups } = this.#o;
    const ts = nowNs();
    const running = this.#o.running(s.id);
    const containers = running.map((c) => this.container(c));
    const sum = (pick: (c: cri.DeepPartial<cri.ContainerStats>) => number | null | undefined): { value: number } | null => {
      const values = containers.map(pick).filter((v): v is number => typeof v === "number");
      return values.length === 0 ? null : { value: values.reduce((a, b) => a + b, 0) };
    };
    const counters = s.netns !== "" && running[0] !== undefined ? netDev(running[0].pid) : [];
    const iface = (i: (typeof counters)[number]) => ({ name: i.name, rxBytes: { value: i.rxBytes }, rxErrors: { value: i.rxErrors }, txBytes: { value: i.txBytes }, txErrors: { value: i.txErrors } });
    const processes = running.reduce((n, c) => n + (cgroups.version !== undefined ? cgroups.pids(containerCgroup(s, c)).length : 1), 0);
    return {
      attributes: { id: s.id, metadata: s.config.metadata, labels: s.config.labels, annotations: s.config.annotations },
      linux: {
        cpu: { timestamp: ts, usageCoreNanoSeconds: sum((c) => c.cpu?.usageCoreNanoSeconds?.value), usageNanoCores: sum((c) => c.cpu?.usageNanoCores?.value) },
        memory: {
          timestamp: ts,
          workingSetBytes: sum((c) => c.memory?.workingSetBytes?.value),
          usageBytes: sum((c) => c.memory?.usageBytes?.value),
          rssBytes: sum((c) => c.memory?.rssBytes?.value),
          pageFaults: sum((c) => c.memory?.pageFaults?.value),
          majorPageFaults: sum((c) => c.memory?.majorPageFaults?.value),
        },
        network: counters.length === 0 ? null : { timestamp: ts, defaultInterface: iface(counters.find((i) => i.name === "eth0") ?? counters[0]!), interfaces: counters.filter((i) => i.name !== "eth0").map(iface) },
        process: { timestamp: ts, processCount: { value: processes } },
        containers,
      },
    };
  }
}
