// The text expositions built from one Reading (Prometheus text format 0.0.4,
// each sample stamped with the reading's time as upstream's collectors do):
// /metrics/resource with exactly the seed's stable families (seed 002, "Stable
// metrics": node, pod and container CPU and working set, container start
// time, resource_scrape_error), and the container metrics
// (/metrics/statscollector, upstream's /metrics/cadvisor) with the pressure
// counters container_pressure_{cpu,memory,io}_{waiting,stalled}_seconds_total
// (waiting: the `some` total, stalled: the `full` total, in seconds).

import type { ContainerReading, PodReading, Pressure, Reading } from "./collect.js";
import { PSI_RESOURCES } from "./psi.js";

type Labels = Readonly<Record<string, string>>;

interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge";
  samples: { labels: Labels; value: number }[];
}

function escape(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function number(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

/** Families in name order; empty families keep their HELP and TYPE lines, as upstream's registry prints them. */
export function render(families: readonly Family[], timestampMs: number | undefined): string {
  const lines: string[] = [];
  for (const f of [...families].sort((a, b) => a.name.localeCompare(b.name))) {
    lines.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) {
      const keys = Object.keys(s.labels).sort();
      const labels = keys.length === 0 ? "" : `{${keys.map((k) => `${k}="${escape(s.labels[k]!)}"`).join(",")}}`;
      lines.push(`${f.name}${labels} ${number(s.value)}${timestampMs === undefined ? "" : ` ${timestampMs}`}`);
    }
  }
  return lines.join("\n") + "\n";
}

/** An empty metric family to fill with samples. */
function fam(name: string, type: Family["type"], help: string): Family {
  return { name, help, type, samples: [] };
}

/** /metrics/resource. `error` makes resource_scrape_error 1 and leaves the other families empty. */
export function resourceMetrics(reading: Reading | undefined): string {
  // Every family of this endpoint is a stable one (seed 002), marked so in its help.
  const stable = (name: string, type: Family["type"], help: string): Family => fam(name, type, `[STABLE] ${help}`);
  const nodeCpu = stable("node_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the node in core-seconds");
  const nodeMem = stable("node_memory_working_set_bytes", "gauge", "Current working set of the node in bytes");
  const podCpu = stable("pod_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the pod in core-seconds");
  const podMem = stable("pod_memory_working_set_bytes", "gauge", "Current working set of the pod in bytes");
  const cCpu = stable("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the container in core-seconds");
  const cMem = stable("container_memory_working_set_bytes", "gauge", "Current working set of the container in bytes");
  const cStart = stable("container_start_time_seconds", "gauge", "Start time of the container since unix epoch in seconds");
  const scrapeError = stable("resource_scrape_error", "gauge", "1 if there was an error while getting container metrics, 0 otherwise");
  const families = [nodeCpu, nodeMem, podCpu, podMem, cCpu, cMem, cStart, scrapeError];
  if (reading === undefined) {
    scrapeError.samples.push({ labels: {}, value: 1 });
    return render(families, undefined);
  }
  const n = reading.node;
  if (n.cpuNanos !== undefined) nodeCpu.samples.push({ labels: {}, value: n.cpuNanos / 1e9 });
  if (n.workingSet !== undefined) nodeMem.samples.push({ labels: {}, value: n.workingSet });
  for (const p of reading.pods) {
    const pl = { pod: p.name, namespace: p.namespace };
    if (p.cpuNanos !== undefined) podCpu.samples.push({ labels: pl, value: p.cpuNanos / 1e9 });
    if (p.workingSet !== undefined) podMem.samples.push({ labels: pl, value: p.workingSet });
    for (const c of p.containers) {
      const cl = { ...pl, container: c.name };
      if (c.cpuNanos !== undefined) cCpu.samples.push({ labels: cl, value: c.cpuNanos / 1e9 });
      if (c.workingSet !== undefined) cMem.samples.push({ labels: cl, value: c.workingSet });
      if (c.startedAt > 0) cStart.samples.push({ labels: cl, value: Math.floor(c.startedAt / 1e9) });
    }
  }
  scrapeError.samples.push({ labels: {}, value: 0 });
  return render(families, reading.at);
}

/** The container metrics (cAdvisor's names and labels: container, id, image, name, namespace, pod). */
export function containerMetrics(reading: Reading, machine: { cores: number }): string {
  const cpu = fam("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed in seconds.");
  const ws = fam("container_memory_working_set_bytes", "gauge", "Current working set in bytes.");
  const usage = fam("container_memory_usage_bytes", "gauge", "Current memory usage in bytes, including all memory regardless of when it was accessed");
  const rss = fam("container_memory_rss", "gauge", "Size of RSS in bytes.");
  const fsUsage = fam("container_fs_usage_bytes", "gauge", "Number of bytes that are consumed by the container on this filesystem.");
  const start = fam("container_start_time_seconds", "gauge", "Start time of the container since unix epoch in seconds.");
  const rx = fam("container_network_receive_bytes_total", "counter", "Cumulative count of bytes received");
  const tx = fam("container_network_transmit_bytes_total", "counter", "Cumulative count of bytes transmitted");
  const pressure = PSI_RESOURCES.flatMap((r) => [
    { r, kind: "some" as const, f: fam(`container_pressure_${r}_waiting_seconds_total`, "counter", `Total time duration tasks in the container have waited due to ${r} congestion.`) },
    { r, kind: "full" as const, f: fam(`container_pressure_${r}_stalled_seconds_total`, "counter", `Total time duration no tasks in the container could make progress due to ${r} congestion.`) },
  ]);
  const cores = fam("machine_cpu_cores", "gauge", "Number of logical CPU cores.");
  const memBytes = fam("machine_memory_bytes", "gauge", "Amount of memory installed on the machine.");
  const addPressure = (labels: Labels, psi: Pressure): void => {
    for (const { r, kind, f } of pressure) {
      const p = psi[r];
      if (p !== undefined) f.samples.push({ labels, value: p[kind].total / 1e6 });
    }
  };
  const addCpuMemory = (labels: Labels, r: { cpuNanos?: number; workingSet?: number; usage?: number; rss?: number }): void => {
    if (r.cpuNanos !== undefined) cpu.samples.push({ labels, value: r.cpuNanos / 1e9 });
    if (r.workingSet !== undefined) ws.samples.push({ labels, value: r.workingSet });
    if (r.usage !== undefined) usage.samples.push({ labels, value: r.usage });
    if (r.rss !== undefined) rss.samples.push({ labels, value: r.rss });
  };
  // The root ("/"): the node.
  const root = { container: "", id: "/", image: "", name: "", namespace: "", pod: "" };
  addCpuMemory(root, reading.node);
  addPressure(root, reading.node.psi);
  for (const i of reading.node.interfaces) {
    rx.samples.push({ labels: { ...root, interface: i.name }, value: i.rxBytes });
    tx.samples.push({ labels: { ...root, interface: i.name }, value: i.txBytes });
  }
  for (const p of reading.pods) podSeries(p);
  cores.samples.push({ labels: {}, value: machine.cores });
  memBytes.samples.push({ labels: {}, value: reading.node.capacity });
  return render([cpu, ws, usage, rss, fsUsage, start, rx, tx, ...pressure.map((p) => p.f), cores, memBytes], reading.at);

  function podSeries(p: PodReading): void {
    const pod = { container: "", id: `/pod${p.uid}`, image: "", name: "", namespace: p.namespace, pod: p.name };
    addCpuMemory(pod, p);
    addPressure(pod, p.psi);
    for (const i of p.interfaces) {
      rx.samples.push({ labels: { ...pod, interface: i.name }, value: i.rxBytes });
      tx.samples.push({ labels: { ...pod, interface: i.name }, value: i.txBytes });
    }
    for (const c of p.containers) containerSeries(p, c);
  }

  function containerSeries(p: PodReading, c: ContainerReading): void {
    const labels = { container: c.name, id: c.id, image: c.image, name: c.id, namespace: p.namespace, pod: p.name };
    addCpuMemory(labels, c);
    addPressure(labels, c.psi);
    if (c.rootfsUsed !== undefined) fsUsage.samples.push({ labels: { ...labels, device: c.rootfsMount ?? "" }, value: c.rootfsUsed });
    if (c.startedAt > 0) start.samples.push({ labels, value: c.startedAt / 1e9 });
  }
}
