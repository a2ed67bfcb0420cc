// Histogram: classic cumulative buckets always, and native exponential buckets
// too when the registry has the NativeHistograms gate on (seed 002, "Native
// histograms"); the text formats show classic buckets only.

import { Metric } from "./metric.js";
import { NativeBuckets } from "./native-histogram.js";
import { SeriesMap } from "./series.js";
import type { Collectable, FamilySnapshot, HistogramOptions, Labels } from "./types.js";

/** Upstream's prometheus.DefBuckets. */
export const DEFAULT_BUCKETS: readonly number[] = Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);

/** `count` buckets starting at `start`, each `factor` times the previous. */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start * factor ** i);
}

/** `count` buckets starting at `start`, `width` apart. */
export function linearBuckets(start: number, width: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start + width * i);
}

interface HistogramSeries {
  readonly labelValues: string[];
  readonly labelText: string;
  /** Per bucket (not cumulative); the last is +Inf. */
  readonly counts: number[];
  count: number;
  sum: number;
  readonly native: NativeBuckets | undefined;
}

export class Histogram extends Metric implements Collectable {
  readonly kind = "histogram";
  readonly buckets: readonly number[];
  readonly #series: SeriesMap<HistogramSeries>;

  constructor(options: HistogramOptions & { native?: boolean }) {
    super(options);
    const buckets = [...(options.buckets ?? DEFAULT_BUCKETS)].filter((b) => b !== Infinity);
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]! > buckets[i - 1]!)) throw new Error(`histogram ${options.name}: buckets must be strictly increasing`);
    }
    if (this.labelNames.includes("le")) throw new Error(`histogram ${options.name}: "le" is a reserved label`);
    this.buckets = Object.freeze(buckets);
    const n = buckets.length + 1;
    const native = options.native === true;
    this.#series = new SeriesMap({
      metric: this.name,
      labelNames: this.labelNames,
      create: (labelValues, labelText) => ({
        labelValues, labelText, counts: new Array<number>(n).fill(0), count: 0, sum: 0,
        native: native ? new NativeBuckets() : undefined,
      }),
    });
  }

  observe(labels: Labels | undefined, value: number): void {
    if (!this.active) return;
    this.#observeSeries(this.#series.get(labels), value);
  }

  /** A handle on one series, for hot paths: the label lookup happens once, here. */
  bind(labels?: Labels): { observe(value: number): void } {
    const s = this.#series.get(labels);
    return {
      observe: (value) => {
        if (this.active) this.#observeSeries(s, value);
      },
    };
  }

  #observeSeries(s: HistogramSeries, value: number): void {
    const b = this.buckets;
    let i = 0;
    while (i < b.length && value > b[i]!) i++;
    s.counts[i]!++;
    s.count++;
    s.sum += value;
    s.native?.observe(value);
  }

  /** Starts a timer; calling the result observes the elapsed seconds (and returns them). */
  startTimer(labels?: Labels): () => number {
    const start = process.hrtime.bigint();
    return () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      this.observe(labels, seconds);
      return seconds;
    };
  }

  remove(labels?: Labels): void {
    this.#series.delete(labels);
  }

  reset(): void {
    this.#series.clear();
  }

  collect(): FamilySnapshot {
    const series = [];
    for (const s of this.#series.values()) {
      const cumulative = new Array<number>(s.counts.length);
      let acc = 0;
      for (let i = 0; i < s.counts.length; i++) cumulative[i] = acc += s.counts[i]!;
      series.push({
        labelValues: s.labelValues, labelText: s.labelText, count: s.count, sum: s.sum, bucketCounts: cumulative,
        ...(s.native === undefined ? {} : { native: s.native.snapshot() }),
      });
    }
    return { name: this.name, help: this.help, kind: "histogram", labelNames: this.labelNames, buckets: this.buckets, series };
  }
}
