// The text expositions: Prometheus text 0.0.4 (the default) and OpenMetrics
// 1.0.0. Both carry classic histogram buckets only (seed 002, "Endpoints").

import type { FamilySnapshot, SeriesSnapshot } from "./types.js";

export const TEXT_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
export const OPENMETRICS_CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8";

export function formatNumber(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

/** OpenMetrics wants le/quantile values as canonical floats: "1.0", not "1". */
function formatOpenMetricsBound(v: number): string {
  const s = formatNumber(v);
  return Number.isInteger(v) && !s.includes("e") ? `${s}.0` : s;
}

function escapeHelp(help: string, openMetrics: boolean): string {
  let out = help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
  if (openMetrics) out = out.replace(/"/g, '\\"');
  return out;
}

/** `{a="1",le="0.5"}`: the series labels plus one more. */
function withLabel(labelText: string, name: string, value: string): string {
  return labelText === "" ? `{${name}="${value}"}` : `${labelText.slice(0, -1)},${name}="${value}"}`;
}

function writeSeries(out: string[], f: FamilySnapshot, s: SeriesSnapshot, openMetrics: boolean, sampleName: string): void {
  switch (f.kind) {
    case "histogram": {
      const bounds = f.buckets ?? [];
      const counts = s.bucketCounts ?? [];
      for (let i = 0; i < counts.length; i++) {
        const le = i < bounds.length ? (openMetrics ? formatOpenMetricsBound(bounds[i]!) : formatNumber(bounds[i]!)) : "+Inf";
        out.push(`${f.name}_bucket${withLabel(s.labelText, "le", le)} ${formatNumber(counts[i]!)}\n`);
      }
      out.push(`${f.name}_sum${s.labelText} ${formatNumber(s.sum ?? 0)}\n${f.name}_count${s.labelText} ${formatNumber(s.count ?? 0)}\n`);
      return;
    }
    case "summary": {
      for (const [q, v] of s.quantiles ?? []) {
        const ql = openMetrics ? formatOpenMetricsBound(q) : formatNumber(q);
        out.push(`${f.name}${withLabel(s.labelText, "quantile", ql)} ${formatNumber(v)}\n`);
      }
      out.push(`${f.name}_sum${s.labelText} ${formatNumber(s.sum ?? 0)}\n${f.name}_count${s.labelText} ${formatNumber(s.count ?? 0)}\n`);
      return;
    }
    default:
      out.push(`${sampleName}${s.labelText} ${formatNumber(s.value ?? 0)}\n`);
  }
}

/** Text format 0.0.4. Families without series are still announced (HELP/TYPE), as upstream. */
export function encodeText(families: readonly FamilySnapshot[]): string {
  const out: string[] = [];
  for (const f of families) {
    if (f.series.length === 0) continue;
    out.push(`# HELP ${f.name} ${escapeHelp(f.help, false)}\n# TYPE ${f.name} ${f.kind}\n`);
    for (const s of f.series) writeSeries(out, f, s, false, f.name);
  }
  return out.join("");
}

/** OpenMetrics 1.0.0: counter families drop `_total` from their name, samples carry it; ends with `# EOF`. */
export function encodeOpenMetrics(families: readonly FamilySnapshot[]): string {
  const out: string[] = [];
  for (const f of families) {
    if (f.series.length === 0) continue;
    const counter = f.kind === "counter";
    const family = counter && f.name.endsWith("_total") ? f.name.slice(0, -"_total".length) : f.name;
    const type = f.kind === "untyped" ? "unknown" : f.kind;
    out.push(`# TYPE ${family} ${type}\n# HELP ${family} ${escapeHelp(f.help, true)}\n`);
    for (const s of f.series) writeSeries(out, f, s, true, counter ? `${family}_total` : f.name);
  }
  out.push("# EOF\n");
  return out.join("");
}
