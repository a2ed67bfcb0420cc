// The shapes shared by every metric kind, the registry and the encoders: metric
// options (seed 002, "Metric record shape") and the read-only family snapshot an
// encoder walks at scrape time.

/** Seed 002, "Versioning" 1. INTERNAL is upstream's level for metrics outside any guarantee. */
export type StabilityLevel = "STABLE" | "BETA" | "ALPHA" | "INTERNAL";

/** Label values by label name. Omit (or pass {}) for a metric without labels. */
export type Labels = Readonly<Record<string, string>>;

export interface MetricOptions {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly string[];
  /** ALPHA when omitted, as upstream. */
  readonly stabilityLevel?: StabilityLevel;
  /** "1.34.0": the release that deprecated the metric; it is hidden from the next release on. */
  readonly deprecatedVersion?: string;
}

export interface HistogramOptions extends MetricOptions {
  /** Classic bucket upper bounds, ascending; +Inf is implied. Upstream's DefBuckets when omitted. */
  readonly buckets?: readonly number[];
}

export interface SummaryOptions extends MetricOptions {
  /** Quantiles to report (0..1). Default: 0.5, 0.9, 0.99. */
  readonly quantiles?: readonly number[];
  /** Observations kept per series to estimate quantiles from. Default 1024. */
  readonly maxSamples?: number;
}

export type MetricKind = "counter" | "gauge" | "histogram" | "summary" | "untyped";

/** A native (sparse, exponential) histogram's state as the protobuf exposition carries it. */
export interface NativeHistogramSnapshot {
  readonly schema: number;
  readonly zeroThreshold: number;
  readonly zeroCount: number;
  /** [offset, length] pairs; offsets relative to the end of the previous span. */
  readonly positiveSpans: readonly (readonly [number, number])[];
  /** Count of each positive bucket, in index order, absolute (not delta-encoded). */
  readonly positiveCounts: readonly number[];
  readonly negativeSpans: readonly (readonly [number, number])[];
  readonly negativeCounts: readonly number[];
}

export interface SeriesSnapshot {
  /** Values in the family's labelNames order. */
  readonly labelValues: readonly string[];
  /** Pre-rendered `{a="1",b="2"}` (or "") for the text formats. */
  readonly labelText: string;
  /** counter, gauge, untyped. */
  readonly value?: number;
  /** histogram, summary. */
  readonly count?: number;
  readonly sum?: number;
  /** histogram: cumulative counts per classic bucket (last is +Inf). */
  readonly bucketCounts?: readonly number[];
  readonly native?: NativeHistogramSnapshot;
  /** summary: [quantile, value] pairs. */
  readonly quantiles?: readonly (readonly [number, number])[];
}

export interface FamilySnapshot {
  readonly name: string;
  /** The help text as exposed: stability prefix and deprecation note included. */
  readonly help: string;
  readonly kind: MetricKind;
  readonly labelNames: readonly string[];
  /** histogram: classic upper bounds without +Inf. */
  readonly buckets?: readonly number[];
  readonly series: readonly SeriesSnapshot[];
}

/** Anything the registry can scrape: built-in metrics and custom collectors. */
export interface Collectable {
  readonly name: string;
  collect(): FamilySnapshot;
}
