// Counter and gauge: one number per label set. Counters only go up (a negative
// amount is an error, as upstream); gauges are set, raised and lowered.

import { Metric } from "./metric.js";
import { SeriesMap } from "./series.js";
import type { Collectable, FamilySnapshot, Labels, MetricOptions } from "./types.js";

interface ValueSeries {
  readonly labelValues: string[];
  readonly labelText: string;
  value: number;
}

abstract class ValueMetric extends Metric implements Collectable {
  protected readonly series: SeriesMap<ValueSeries>;

  constructor(options: MetricOptions) {
    super(options);
    this.series = new SeriesMap({
      metric: this.name,
      labelNames: this.labelNames,
      create: (labelValues, labelText) => ({ labelValues, labelText, value: 0 }),
    });
  }

  /** Current value of one series (0 when never touched). */
  get(labels?: Labels): number {
    return this.series.get(labels).value;
  }

  /** Forgets one series (e.g. a controller that stopped). */
  remove(labels?: Labels): void {
    this.series.delete(labels);
  }

  reset(): void {
    this.series.clear();
  }

  collect(): FamilySnapshot {
    return {
      name: this.name,
      help: this.help,
      kind: this.kind as "counter" | "gauge",
      labelNames: this.labelNames,
      series: [...this.series.values()].map((s) => ({ labelValues: s.labelValues, labelText: s.labelText, value: s.value })),
    };
  }
}

export interface BoundCounter {
  inc(amount?: number): void;
}

export interface BoundGauge {
  set(value: number): void;
  inc(amount?: number): void;
  dec(amount?: number): void;
}

export class Counter extends ValueMetric {
  readonly kind = "counter";

  /** A handle on one series, for hot paths: the label lookup happens once, here. */
  bind(labels?: Labels): BoundCounter {
    const s = this.series.get(labels);
    return {
      inc: (amount = 1) => {
        if (!this.active) return;
        if (!(amount >= 0)) throw new Error(`counter ${this.name}: cannot add ${amount}`);
        s.value += amount;
      },
    };
  }

  inc(labels?: Labels, amount = 1): void {
    if (!this.active) return;
    if (!(amount >= 0)) throw new Error(`counter ${this.name}: cannot add ${amount}`);
    this.series.get(labels).value += amount;
  }
}

export class Gauge extends ValueMetric {
  readonly kind = "gauge";

  /** A handle on one series, for hot paths (the series stays until remove()). */
  bind(labels?: Labels): BoundGauge {
    const s = this.series.get(labels);
    return {
      set: (value) => {
        if (this.active) s.value = value;
      },
      inc: (amount = 1) => {
        if (this.active) s.value += amount;
      },
      dec: (amount = 1) => {
        if (this.active) s.value -= amount;
      },
    };
  }

  set(labels: Labels | undefined, value: number): void {
    if (!this.active) return;
    this.series.get(labels).value = value;
  }

  inc(labels?: Labels, amount = 1): void {
    if (!this.active) return;
    this.series.get(labels).value += amount;
  }

  dec(labels?: Labels, amount = 1): void {
    if (!this.active) return;
    this.series.get(labels).value -= amount;
  }

  /** Sets the gauge to the current Unix time in seconds. */
  setToCurrentTime(labels?: Labels): void {
    this.set(labels, Date.now() / 1000);
  }
}
