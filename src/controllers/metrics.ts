// The slice of the component metrics registry (src/component/metrics, the
// observability engineer's) that controllers use, as a structural type, so a
// controller can be handed the real registry in its options; without one,
// metrics are recorded nowhere.

export type MetricLabels = Readonly<Record<string, string>>;

export interface CounterLike {
  inc(labels?: MetricLabels, amount?: number): void;
}
export interface GaugeLike {
  set(labels: MetricLabels, value: number): void;
}
export interface HistogramLike {
  observe(labels: MetricLabels, value: number): void;
}

interface MetricOptions {
  name: string;
  help: string;
  labelNames?: readonly string[];
  stabilityLevel?: "ALPHA" | "BETA" | "STABLE";
}

export interface MetricsRegistryLike {
  counter(options: MetricOptions): CounterLike;
  gauge(options: MetricOptions): GaugeLike;
  histogram(options: MetricOptions & { buckets?: readonly number[] }): HistogramLike;
}

const NOOP = { inc() {}, set() {}, observe() {} };

/** The registry given, or one that drops everything. */
export function metricsOrNoop(registry: MetricsRegistryLike | undefined): MetricsRegistryLike {
  return registry ?? { counter: () => NOOP, gauge: () => NOOP, histogram: () => NOOP };
}

/** Buckets of upstream's ExponentialBuckets(start, factor, count). */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start * factor ** i);
}
