// Summary: count, sum and quantiles estimated over the latest observations of
// each series (a bounded ring, so memory stays fixed; upstream uses a decaying
// stream, the reported shape is the same).

import { Metric } from "./metric.js";
import { SeriesMap } from "./series.js";
import type { Collectable, FamilySnapshot, Labels, SummaryOptions } from "./types.js";

interface SummarySeries {
  readonly labelValues: string[];
  readonly labelText: string;
  readonly ring: number[];
  next: number;
  count: number;
  sum: number;
}

export class Summary extends Metric implements Collectable {
  readonly kind = "summary";
  readonly quantiles: readonly number[];
  readonly #maxSamples: number;
  readonly #series: SeriesMap<SummarySeries>;

  constructor(options: SummaryOptions) {
    super(options);
    if (this.labelNames.includes("quantile")) throw new Error(`summary ${options.name}: "quantile" is a reserved label`);
    this.quantiles = Object.freeze([...(options.quantiles ?? [0.5, 0.9, 0.99])]);
    for (const q of this.quantiles) if (!(q >= 0 && q <= 1)) throw new Error(`summary ${options.name}: quantile ${q} outside 0..1`);
    this.#maxSamples = options.maxSamples ?? 1024;
    this.#series = new SeriesMap({
      metric: this.name,
      labelNames: this.labelNames,
      create: (labelValues, labelText) => ({ labelValues, labelText, ring: [], next: 0, count: 0, sum: 0 }),
    });
  }

  observe(labels: Labels | undefined, value: number): void {
    if (!this.active) return;
    const s = this.#series.get(labels);
    if (s.ring.length < this.#maxSamples) s.ring.push(value);
    else s.ring[s.next] = value;
    s.next = (s.next + 1) % this.#maxSamples;
    s.count++;
    s.sum += value;
  }

  reset(): void {
    this.#series.clear();
  }

  collect(): FamilySnapshot {
    const series = [...this.#series.values()].map((s) => {
      const sorted = [...s.ring].sort((a, b) => a - b);
      const quantiles = this.quantiles.map((q): [number, number] => [
        q,
        sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!,
      ]);
      return { labelValues: s.labelValues, labelText: s.labelText, count: s.count, sum: s.sum, quantiles };
    });
    return { name: this.name, help: this.help, kind: "summary", labelNames: this.labelNames, series };
  }
}
