// Shared benchmark plumbing: repeated runs, medians, a printed table and
// `--json` output. Every benchmark states what it compares against.

import { readFileSync } from "node:fs";

export interface Metric {
  /** What was measured, e.g. "durable writes/s, 32 writers". */
  name: string;
  unit: string;
  /** Better when higher (throughput) or lower (latency, time). */
  better: "higher" | "lower";
  /** Target for this machine, if the issue sets one. */
  target?: number;
  /** Targets that differ per column (e.g. per runtime); printed instead of `target`. */
  targets?: Record<string, number>;
}

export interface Report {
  title: string;
  comparedWith: string;
  runs: number;
  metrics: Metric[];
  /** column (e.g. backend) → metric name → samples, one per run */
  samples: Record<string, Record<string, number[]>>;
  /** A column the others are compared with: each other column gets a ratio column, > 1 meaning better than it (higher/ratioTo for throughput, ratioTo/lower for latency and size). */
  ratioTo?: string;
}

/** How `value` compares with `base` for `m`: > 1 is better. */
export function ratio(m: Metric, value: number, base: number): number {
  return m.better === "higher" ? value / base : base / value;
}

/** CPU time (user + system) of a process so far, in µs (Linux: /proc/PID/stat). */
export function cpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * (1_000_000 / 100);
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function parseArgs(argv: string[]): { json: boolean; runs: number; only: string[] } {
  const json = argv.includes("--json");
  const runsArg = argv.find((a) => a.startsWith("--runs="));
  const onlyArg = argv.find((a) => a.startsWith("--only="));
  return {
    json,
    runs: runsArg === undefined ? 3 : Math.max(1, Number(runsArg.slice("--runs=".length))),
    only: onlyArg === undefined ? [] : onlyArg.slice("--only=".length).split(","),
  };
}

function format(n: number): string {
  if (!Number.isFinite(n)) return "-";
  if (Math.abs(n) >= 100) return Math.round(n).toLocaleString("en-US");
  return n.toFixed(2);
}

function targetText(m: Metric, columns: string[]): string {
  const op = m.better === "higher" ? "≥" : "<";
  if (m.targets !== undefined) return columns.filter((c) => m.targets![c] !== undefined).map((c) => `${c} ${op} ${format(m.targets![c]!)}`).join(", ");
  return m.target === undefined ? "" : `${op} ${format(m.target)}`;
}

/** A ratio for the table; "-" when either side has no finite median (e.g. a fan-out with lost deliveries). */
function ratioText(r: number): string {
  return Number.isFinite(r) && r > 0 ? `${r.toFixed(2)}×` : "-";
}

export function printReport(report: Report, json: boolean): void {
  const columns = Object.keys(report.samples);
  const medians = (column: string, metric: string) => median(report.samples[column]?.[metric] ?? []);
  const ratioColumns = report.ratioTo !== undefined && columns.includes(report.ratioTo) ? columns.filter((c) => c !== report.ratioTo) : [];
  if (json) {
    const out = {
      title: report.title,
      comparedWith: report.comparedWith,
      runs: report.runs,
      results: report.metrics.map((m) => ({
        ...m,
        median: Object.fromEntries(columns.map((c) => [c, medians(c, m.name)])),
        samples: Object.fromEntries(columns.map((c) => [c, report.samples[c]?.[m.name] ?? []])),
        ...(ratioColumns.length === 0 ? {} : { ratios: Object.fromEntries(ratioColumns.map((c) => [`${c}/${report.ratioTo}`, ratio(m, medians(c, m.name), medians(report.ratioTo!, m.name))])) }),
      })),
    };
    process.stdout.write(JSON.stringify(out, null, 2) + "\n");
    return;
  }
  const header = ["metric", "unit", ...columns, ...ratioColumns.map((c) => `${c} vs ${report.ratioTo}`), "target"];
  const rows = report.metrics.map((m) => [
    m.name,
    m.unit,
    ...columns.map((c) => format(medians(c, m.name))),
    ...ratioColumns.map((c) => ratioText(ratio(m, medians(c, m.name), medians(report.ratioTo!, m.name)))),
    targetText(m, columns),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  console.log(`${report.title}`);
  console.log(`compared with: ${report.comparedWith}; medians of ${report.runs} runs`);
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
  if (ratioColumns.length > 0) console.log(`ratios: > 1× means better than ${report.ratioTo} (throughput: ours/theirs; latency and size: theirs/ours)`);
}
