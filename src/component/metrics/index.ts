// The metrics package every orch component uses: one MetricsRegistry per
// component, passed in options (no module globals). Seed 002.

export { MetricsRegistry, METRICS_VERSION, parseMinorVersion, validateShowHiddenMetricsVersion, type ExpositionFormat, type MetricsRegistryOptions } from "./registry.js";
export { Counter, Gauge, type BoundCounter, type BoundGauge } from "./counter.js";
export { Histogram, DEFAULT_BUCKETS, exponentialBuckets, linearBuckets } from "./histogram.js";
export { Summary } from "./summary.js";
export { TimingRatioHistogram } from "./timing-ratio-histogram.js";
export { CustomCollector, type CollectorOptions, type CollectorSample, type CollectorSource } from "./collector.js";
export { Metric } from "./metric.js";
export { NATIVE_MAX_BUCKETS } from "./native-histogram.js";
export { TEXT_CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE, encodeText, encodeOpenMetrics } from "./text-format.js";
export { PROTOBUF_CONTENT_TYPE, encodeProtobuf } from "./protobuf-format.js";
export type { FamilySnapshot, HistogramOptions, Labels, MetricKind, MetricOptions, SeriesSnapshot, StabilityLevel, SummaryOptions } from "./types.js";
