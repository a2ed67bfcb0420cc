// /stats/summary: upstream's Summary API (stats/v1alpha1) from one Reading:
// the node (cpu, memory, network, fs, runtime image fs, rlimit, io), its pods
// (cpu, memory, network, volumes, ephemeral-storage, process_stats, io) and
// their containers (cpu, memory, rootfs, logs, swap, io), with `psi` on cpu,
// memory and io wherever the host gives pressure files (seed 002, "Pressure
// metrics"): the node always on a PSI kernel, pods and containers where their
// cgroup v2 group is known.

import type { InterfaceCounters } from "../runtime/embedded/host.js";
import type { FsReading } from "./host-stats.js";
import type { ContainerReading, CpuMemory, PodReading, Pressure, Reading } from "./collect.js";
import type { PsiResource } from "./psi.js";

type Json = Record<string, unknown>;

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

function defined(o: Json): Json {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function psiOf(p: Pressure, r: PsiResource): Json | undefined {
  const s = p[r];
  return s === undefined ? undefined : { full: { ...s.full }, some: { ...s.some } };
}

function cpu(r: CpuMemory, p: Pressure, time: string): Json {
  return defined({ time, usageNanoCores: r.nanoCores, usageCoreNanoSeconds: r.cpuNanos, psi: psiOf(p, "cpu") });
}

function memory(r: CpuMemory, p: Pressure, time: string): Json {
  return defined({ time, availableBytes: r.available, usageBytes: r.usage, workingSetBytes: r.workingSet, rssBytes: r.rss, pageFaults: r.pageFaults, majorPageFaults: r.majorPageFaults, psi: psiOf(p, "memory") });
}

function io(p: Pressure, time: string): Json | undefined {
  const psi = psiOf(p, "io");
  return psi === undefined ? undefined : { time, psi };
}

function network(interfaces: readonly InterfaceCounters[], time: string): Json | undefined {
  if (interfaces.length === 0) return undefined;
  const all = interfaces.map((i) => ({ name: i.name, rxBytes: i.rxBytes, rxErrors: i.rxErrors, txBytes: i.txBytes, txErrors: i.txErrors }));
  const first = all.find((i) => i.name === "eth0") ?? all[0]!;
  return { time, ...first, interfaces: all };
}

function fs(f: FsReading | undefined, time: string): Json | undefined {
  return f === undefined ? undefined : { time, ...f };
}

function container(c: ContainerReading, time: string): Json {
  return defined({
    name: c.name,
    startTime: iso(c.startedAt / 1e6),
    cpu: cpu(c, c.psi, time),
    memory: memory(c, c.psi, time),
    rootfs: c.rootfsUsed === undefined ? undefined : { time, usedBytes: c.rootfsUsed },
    logs: { time, usedBytes: c.logsUsed },
    swap: c.swap === undefined ? undefined : { time, swapUsageBytes: c.swap },
    io: io(c.psi, time),
  });
}

function pod(p: PodReading, time: string): Json {
  const ephemeral = p.containers.reduce((n, c) => n + (c.rootfsUsed ?? 0) + c.logsUsed, 0) + p.volumes.reduce((n, v) => n + v.usedBytes, 0);
  return defined({
    podRef: { name: p.name, namespace: p.namespace, uid: p.uid },
    startTime: p.startTime,
    containers: p.containers.map((c) => container(c, time)),
    cpu: cpu(p, p.psi, time),
    memory: memory(p, p.psi, time),
    network: network(p.interfaces, time),
    volume: p.volumes.map((v) => ({ time, usedBytes: v.usedBytes, name: v.name })),
    "ephemeral-storage": { time, usedBytes: ephemeral },
    process_stats: p.processCount === undefined ? undefined : { process_count: p.processCount },
    io: io(p.psi, time),
  });
}

/** The Summary document. */
export function summary(reading: Reading, nodeName: string, nodeStartTime: string): Json {
  const time = iso(reading.at);
  const n = reading.node;
  return {
    node: defined({
      nodeName,
      systemContainers: [],
      startTime: nodeStartTime,
      cpu: cpu(n, n.psi, time),
      memory: memory(n, n.psi, time),
      network: network(n.interfaces, time),
      fs: fs(n.fs, time),
      runtime: n.imageFs === undefined ? undefined : { imageFs: fs(n.imageFs, time), containerFs: fs(n.imageFs, time) },
      rlimit: { time, ...n.rlimit },
      io: io(n.psi, time),
    }),
    pods: reading.pods.map((p) => pod(p, time)),
  };
}
