// CPU and memory charts from the resource metrics API (metrics.k8s.io,
// served from the node agents' /metrics/resource) with uPlot. The metrics API
// has no watch: the chart samples it every 10 s while it is on screen (the
// agents' own resolution is coarser). Without the API: "metrics not available".

import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { getJson, sleep } from "../api.js";
import { METRICS_GROUP, type Discovery } from "../discovery.js";
import type { Pod } from "./pods.js";

const SAMPLE_MS = 10_000;
const KEEP = 90;

/** A Kubernetes quantity as a number (cores for CPU, bytes for memory). */
export function quantity(q: string | undefined): number {
  if (!q) return 0;
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(q);
  if (!m) return 0;
  const n = Number(m[1]);
  const units: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };
  return n * (units[m[2]!] ?? 1);
}

interface Usage {
  cpu?: string;
  memory?: string;
}

type Series = { t: number[]; values: Map<string, { cpu: number[]; mem: number[] }> };

function useSamples(path: string | undefined, read: (body: unknown) => [string, Usage][]): { series: Series; error: string | undefined; tick: number } {
  const [tick, setTick] = useState(0);
  const [error, setError] = useState<string>();
  const series = useRef<Series>({ t: [], values: new Map() });
  useEffect(() => {
    series.current = { t: [], values: new Map() };
    if (path === undefined) return;
    const abort = new AbortController();
    void (async () => {
      while (!abort.signal.aborted) {
        try {
          const body = await getJson<unknown>(path, { signal: abort.signal });
          const s = series.current;
          const at = Date.now() / 1000;
          s.t.push(at);
          const samples = new Map(read(body));
          for (const name of new Set([...s.values.keys(), ...samples.keys()])) {
            if (!s.values.has(name)) s.values.set(name, { cpu: s.t.slice(1).map(() => NaN), mem: s.t.slice(1).map(() => NaN) });
            const u = samples.get(name);
            s.values.get(name)!.cpu.push(u ? quantity(u.cpu) * 1000 : NaN);
            s.values.get(name)!.mem.push(u ? quantity(u.memory) / 1024 ** 2 : NaN);
          }
          if (s.t.length > KEEP) {
            s.t.shift();
            for (const v of s.values.values()) {
              v.cpu.shift();
              v.mem.shift();
            }
          }
          setError(undefined);
          setTick((x) => x + 1);
        } catch (err) {
          if (!abort.signal.aborted) setError((err as Error).message);
        }
        await sleep(SAMPLE_MS, abort.signal);
      }
    })();
    return () => abort.abort();
  }, [path]);
  return { series: series.current, error, tick };
}

const COLORS = ["#3b82f6", "#ef4444", "#10b981", "#f59e0b", "#8b5cf6", "#ec4899", "#14b8a6", "#64748b"];

function Chart({ title, unit, series, pick, tick }: { title: string; unit: string; series: Series; pick: (v: { cpu: number[]; mem: number[] }) => number[]; tick: number }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  const names = [...series.values.keys()];
  const key = names.join(",");
  useEffect(() => {
    if (!box.current) return;
    plot.current?.destroy();
    plot.current = new uPlot(
      {
        title: `${title} (${unit})`,
        width: Math.min(640, box.current.clientWidth || 640),
        height: 200,
        series: [{}, ...names.map((n, i) => ({ label: n, stroke: COLORS[i % COLORS.length]!, width: 1.5, spanGaps: false }))],
        axes: [{}, { size: 60 }],
      },
      [series.t, ...names.map((n) => pick(series.values.get(n)!))],
      box.current,
    );
    return () => {
      plot.current?.destroy();
      plot.current = undefined;
    };
  }, [key]);
  useEffect(() => {
    plot.current?.setData([series.t, ...names.map((n) => pick(series.values.get(n)!))]);
  }, [tick]);
  // The samples drawn, also as data (for tests and scripts): per series, its values (null where it had no sample).
  const drawn = JSON.stringify(Object.fromEntries(names.map((n) => [n, pick(series.values.get(n)!)])));
  return <div class="chart" ref={box} data-chart={title} data-samples={series.t.length} data-series={drawn} />;
}

function Charts({ path, read, d, what }: { path: string | undefined; read: (body: unknown) => [string, Usage][]; d: Discovery; what: string }) {
  const { series, error, tick } = useSamples(d.metrics ? path : undefined, read);
  if (!d.metrics) return <div class="muted metrics-unavailable">metrics not available: the server serves no {METRICS_GROUP} API</div>;
  return (
    <div class="charts" data-testid="charts">
      {error && <div class="muted">metrics not available for {what}: {error}</div>}
      {series.t.length === 0 && !error && <div class="muted">waiting for the first sample…</div>}
      <Chart title="CPU" unit="millicores" series={series} pick={(v) => v.cpu} tick={tick} />
      <Chart title="Memory" unit="MiB" series={series} pick={(v) => v.mem} tick={tick} />
    </div>
  );
}

export function PodChart({ d, pod }: { d: Discovery; pod: Pod }) {
  const path = d.metrics ? `/apis/${d.metrics.group}/${d.metrics.version}/namespaces/${encodeURIComponent(pod.metadata.namespace ?? "")}/pods/${encodeURIComponent(pod.metadata.name)}` : undefined;
  return <Charts d={d} path={path} what={`pod ${pod.metadata.name}`} read={(b) => ((b as { containers?: { name: string; usage: Usage }[] }).containers ?? []).map((c) => [c.name, c.usage])} />;
}

export function NodeCharts({ d }: { d: Discovery }) {
  const path = d.metrics ? `/apis/${d.metrics.group}/${d.metrics.version}/nodes` : undefined;
  return <Charts d={d} path={path} what="nodes" read={(b) => ((b as { items?: { metadata: { name: string }; usage: Usage }[] }).items ?? []).map((n) => [n.metadata.name, n.usage])} />;
}
