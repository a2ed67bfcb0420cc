// The few Prometheus text-format readings bench/density needs: counters
// summed over matching series, and latency quantiles from the difference of
// two scrapes of a histogram (interpolated inside the bucket, as
// histogram_quantile does).

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export type Samples = readonly Sample[];

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(LABEL)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

const matches = (s: Sample, name: string, want: Readonly<Record<string, string>>) => s.name === name && Object.entries(want).every(([k, v]) => s.labels[k] === v);

export function sumCounter(samples: Samples, name: string, labels: Readonly<Record<string, string>> = {}): number {
  return samples.filter((s) => matches(s, name, labels)).reduce((sum, s) => sum + s.value, 0);
}

/** Cumulative bucket counts by upper bound for series of `verbs`, summed. */
function buckets(samples: Samples, name: string, verbs: readonly string[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const s of samples) {
    if (s.name !== `${name}_bucket` || !verbs.includes(s.labels["verb"] ?? "")) continue;
    const le = s.labels["le"] === "+Inf" ? Infinity : Number(s.labels["le"]);
    out.set(le, (out.get(le) ?? 0) + s.value);
  }
  return out;
}

/** The `ps` quantiles (0-100) of what was observed between two scrapes; NaN when nothing was. */
export function latencyQuantiles(before: Samples, after: Samples, name: string, verbs: readonly string[], ps: readonly number[]): number[] {
  const b = buckets(before, name, verbs);
  const a = buckets(after, name, verbs);
  const bounds = [...a.keys()].sort((x, y) => x - y);
  const counts = bounds.map((le) => (a.get(le) ?? 0) - (b.get(le) ?? 0));
  const total = counts[counts.length - 1] ?? 0;
  return ps.map((p) => {
    if (total <= 0) return NaN;
    const rank = (p / 100) * total;
    for (let i = 0; i < bounds.length; i++) {
      if (counts[i]! >= rank) {
        const hi = bounds[i]!;
        const lo = i === 0 ? 0 : bounds[i - 1]!;
        if (hi === Infinity) return lo;
        const below = i === 0 ? 0 : counts[i - 1]!;
        const inBucket = counts[i]! - below;
        return lo + (hi - lo) * (inBucket === 0 ? 0 : (rank - below) / inBucket);
      }
    }
    return NaN;
  });
}
