// Custom collectors: metrics whose values are read at scrape time rather than
// recorded as they change (upstream's StableCollector), e.g. object counts read
// from the store. `collect` runs on every scrape, so it must be cheap.

import { Metric } from "./metric.js";
import { renderLabels, labelValuesOf } from "./series.js";
import type { Collectable, FamilySnapshot, Labels, MetricOptions } from "./types.js";

export interface CollectorSample {
  readonly labels?: Labels;
  readonly value: number;
}

export type CollectorSource = () => Iterable<CollectorSample>;

export interface CollectorOptions extends MetricOptions {
  readonly kind: "counter" | "gauge" | "untyped";
  /** The first source; more join with addSource (several work queues feeding one family). */
  readonly collect?: CollectorSource;
}

export class CustomCollector extends Metric implements Collectable {
  readonly kind: "counter" | "gauge" | "untyped";
  readonly #sources = new Set<CollectorSource>();

  constructor(options: CollectorOptions) {
    super(options);
    this.kind = options.kind;
    if (options.collect !== undefined) this.#sources.add(options.collect);
  }

  /** Adds a source of samples; returns its remover. */
  addSource(source: CollectorSource): () => void {
    this.#sources.add(source);
    return () => this.#sources.delete(source);
  }

  collect(): FamilySnapshot {
    const series = [];
    if (this.active) {
      for (const source of this.#sources) for (const sample of source()) {
        const labelValues = labelValuesOf(this.name, this.labelNames, sample.labels);
        series.push({ labelValues, labelText: renderLabels(this.labelNames, labelValues), value: sample.value });
      }
    }
    return { name: this.name, help: this.help, kind: this.kind, labelNames: this.labelNames, series };
  }
}
