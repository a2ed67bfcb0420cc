// Timing-ratio histogram (upstream's TimingRatioHistogram): tracks a ratio that
// changes over time (numerator / denominator, e.g. seats in use / seats) and
// exposes, per bucket, the seconds the ratio spent at or below that bound. Each
// change charges the elapsed time to the previous value, so the cost is per
// change, not per second.

import { Metric } from "./metric.js";
import { SeriesMap } from "./series.js";
import type { Collectable, FamilySnapshot, HistogramOptions, Labels } from "./types.js";

interface RatioSeries {
  readonly labelValues: string[];
  readonly labelText: string;
  numerator: number;
  denominator: number;
  since: number;
  /** Seconds per bucket (not cumulative); last is +Inf. */
  readonly seconds: number[];
  count: number;
  sum: number;
}

export class TimingRatioHistogram extends Metric implements Collectable {
  readonly kind = "histogram";
  readonly buckets: readonly number[];
  readonly #series: SeriesMap<RatioSeries>;
  readonly #now: () => number;

  constructor(options: HistogramOptions & { initialDenominator?: number; now?: () => number }) {
    super(options);
    this.buckets = Object.freeze([...(options.buckets ?? [0, 0.25, 0.5, 0.75, 0.9, 1])]);
    this.#now = options.now ?? (() => performance.now() / 1000);
    const n = this.buckets.length + 1;
    const denominator = options.initialDenominator ?? 1;
    this.#series = new SeriesMap({
      metric: this.name,
      labelNames: this.labelNames,
      create: (labelValues, labelText) => ({
        labelValues, labelText, numerator: 0, denominator, since: this.#now(), seconds: new Array<number>(n).fill(0), count: 0, sum: 0,
      }),
    });
  }

  set(labels: Labels | undefined, numerator: number): void {
    if (!this.active) return;
    const s = this.#charge(labels);
    s.numerator = numerator;
  }

  add(labels: Labels | undefined, delta: number): void {
    if (!this.active) return;
    const s = this.#charge(labels);
    s.numerator += delta;
  }

  setDenominator(labels: Labels | undefined, denominator: number): void {
    if (!this.active) return;
    const s = this.#charge(labels);
    s.denominator = denominator;
  }

  #charge(labels: Labels | undefined): RatioSeries {
    const s = this.#series.get(labels);
    this.#chargeSeries(s);
    return s;
  }

  #chargeSeries(s: RatioSeries): void {
    const now = this.#now();
    const elapsed = now - s.since;
    s.since = now;
    if (elapsed <= 0) return;
    const ratio = s.denominator === 0 ? 0 : s.numerator / s.denominator;
    let i = 0;
    while (i < this.buckets.length && ratio > this.buckets[i]!) i++;
    s.seconds[i]! += elapsed;
    s.count += elapsed;
    s.sum += ratio * elapsed;
  }

  collect(): FamilySnapshot {
    const series = [...this.#series.values()].map((s) => {
      this.#chargeSeries(s);
      let acc = 0;
      return {
        labelValues: s.labelValues, labelText: s.labelText, count: s.count, sum: s.sum,
        bucketCounts: s.seconds.map((v) => (acc += v)),
      };
    });
    return { name: this.name, help: this.help, kind: "histogram", labelNames: this.labelNames, buckets: this.buckets, series };
  }
}
