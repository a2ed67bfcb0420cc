// The metrics registry: one per component (no module globals). It registers
// metrics idempotently, applies the stability rules (deprecation hides a metric
// after its grace period unless --show-hidden-metrics-for-version; names in
// --disabled-metrics record nothing), counts them in its own self-metrics and
// renders the expositions. Seed 002, "Metric record shape" and "Versioning".

import { CustomCollector, type CollectorOptions } from "./collector.js";
import { Counter, Gauge } from "./counter.js";
import { Histogram } from "./histogram.js";
import { EMULATION_VERSION } from "../version.js";
import type { Metric } from "./metric.js";
import { encodeProtobuf } from "./protobuf-format.js";
import { Summary } from "./summary.js";
import { encodeOpenMetrics, encodeText } from "./text-format.js";
import { TimingRatioHistogram } from "./timing-ratio-histogram.js";
import type { Collectable, FamilySnapshot, HistogramOptions, MetricOptions, StabilityLevel, SummaryOptions } from "./types.js";

/** The release orch's metrics stability rules compare deprecations with (the seeds' release). */
export const METRICS_VERSION = EMULATION_VERSION;

export interface MetricsRegistryOptions {
  /** Current release as "major.minor" (default METRICS_VERSION). */
  readonly version?: string;
  /** `--show-hidden-metrics-for-version`: must be the previous minor release; shows every hidden metric. */
  readonly showHiddenMetricsForVersion?: string;
  /** `--disabled-metrics`: names that record and expose nothing. */
  readonly disabledMetrics?: readonly string[];
  /** Gate NativeHistograms: histograms keep native buckets as well (protobuf exposition only). */
  readonly nativeHistograms?: boolean;
  /** Expose registered_metrics_total, hidden_metrics_total and disabled_metrics_total (default true; /metrics/slis has none). */
  readonly selfMetrics?: boolean;
}

export type ExpositionFormat = "text" | "openmetrics" | "protobuf";

type Registered = Metric & Collectable;

/** Releases a deprecated metric stays visible after its deprecation, by level (STABLE: three, as upstream's stable contract). */
const GRACE_RELEASES: Readonly<Record<StabilityLevel, number>> = { STABLE: 3, BETA: 1, ALPHA: 1, INTERNAL: 1 };

export function parseMinorVersion(v: string): { major: number; minor: number } | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$/.exec(v.trim());
  return m === null ? undefined : { major: Number(m[1]), minor: Number(m[2]) };
}

/** Upstream's check of --show-hidden-metrics-for-version: empty, or exactly the previous minor release. */
export function validateShowHiddenMetricsVersion(value: string, version = METRICS_VERSION): string | undefined {
  if (value === "") return undefined;
  const current = parseMinorVersion(version)!;
  const valid = `${current.major}.${current.minor - 1}`;
  return value === valid ? undefined : `--show-hidden-metrics-for-version must be omitted or have the value '${valid}'. Only the previous minor version is allowed`;
}

export class MetricsRegistry {
  readonly nativeHistograms: boolean;
  readonly #version: { major: number; minor: number };
  readonly #showHidden: boolean;
  readonly #disabled: ReadonlySet<string>;
  readonly #metrics = new Map<string, Registered>();
  readonly #registeredTotal: Counter;
  readonly #hiddenTotal: Counter;
  readonly #disabledTotal: Counter;

  constructor(options: MetricsRegistryOptions = {}) {
    const version = options.version ?? METRICS_VERSION;
    const parsed = parseMinorVersion(version);
    if (parsed === undefined) throw new Error(`invalid version ${JSON.stringify(version)}`);
    this.#version = parsed;
    const showHidden = options.showHiddenMetricsForVersion ?? "";
    const err = validateShowHiddenMetricsVersion(showHidden, version);
    if (err !== undefined) throw new Error(err);
    this.#showHidden = showHidden !== "";
    this.#disabled = new Set(options.disabledMetrics ?? []);
    this.nativeHistograms = options.nativeHistograms === true;
    // The registry's own metrics (seed 002, beta metrics on all six components).
    this.#registeredTotal = this.#add(new Counter({
      name: "registered_metrics_total", stabilityLevel: "BETA", labelNames: ["stability_level", "deprecated_version"],
      help: "The count of registered metrics broken by stability level and deprecation version.",
    }), false);
    this.#disabledTotal = this.#add(new Counter({
      name: "disabled_metrics_total", stabilityLevel: "BETA", help: "The count of disabled metrics.",
    }), false);
    this.#hiddenTotal = this.#add(new Counter({
      name: "hidden_metrics_total", stabilityLevel: "BETA", help: "The count of hidden metrics.",
    }), false);
    this.#disabledTotal.inc({}, 0);
    this.#hiddenTotal.inc({}, 0);
    if (options.selfMetrics === false) {
      for (const m of [this.#registeredTotal, this.#disabledTotal, this.#hiddenTotal]) this.#metrics.delete(m.name);
    }
  }

  counter(options: MetricOptions): Counter {
    return this.#register(options, Counter, () => new Counter(options));
  }

  gauge(options: MetricOptions): Gauge {
    return this.#register(options, Gauge, () => new Gauge(options));
  }

  histogram(options: HistogramOptions): Histogram {
    return this.#register(options, Histogram, () => new Histogram({ ...options, native: this.nativeHistograms }));
  }

  summary(options: SummaryOptions): Summary {
    return this.#register(options, Summary, () => new Summary(options));
  }

  timingRatioHistogram(options: HistogramOptions & { initialDenominator?: number; now?: () => number }): TimingRatioHistogram {
    return this.#register(options, TimingRatioHistogram, () => new TimingRatioHistogram(options));
  }

  /** A metric whose samples `collect` produces at scrape time. */
  collector(options: CollectorOptions): CustomCollector {
    return this.#register(options, CustomCollector, () => new CustomCollector(options));
  }

  /** The registered metric of that name, whatever its kind. */
  get(name: string): Metric | undefined {
    return this.#metrics.get(name);
  }

  /** Whether `name` is registered and exposed (not hidden, not disabled). */
  isExposed(name: string): boolean {
    return this.#metrics.get(name)?.active === true;
  }

  unregister(name: string): boolean {
    return this.#metrics.delete(name);
  }

  /** Snapshots of every exposed family, sorted by name. */
  collect(): FamilySnapshot[] {
    const out: FamilySnapshot[] = [];
    for (const m of this.#metrics.values()) if (m.active) out.push(m.collect());
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Text exposition format 0.0.4. */
  expose(): string {
    return encodeText(this.collect());
  }

  exposeAs(format: "text" | "openmetrics"): string;
  exposeAs(format: "protobuf"): Uint8Array;
  exposeAs(format: ExpositionFormat): string | Uint8Array;
  exposeAs(format: ExpositionFormat): string | Uint8Array {
    const families = this.collect();
    if (format === "protobuf") return encodeProtobuf(families);
    return format === "openmetrics" ? encodeOpenMetrics(families) : encodeText(families);
  }

  #register<M extends Registered>(options: MetricOptions, kind: abstract new (...args: never[]) => M, create: () => M): M {
    const existing = this.#metrics.get(options.name);
    if (existing !== undefined) {
      if (!(existing instanceof kind)) {
        throw new Error(`metric ${options.name} is already registered as a ${existing.kind} (${existing.constructor.name})`);
      }
      return existing;
    }
    return this.#add(create(), true);
  }

  #add<M extends Registered>(metric: M, count: boolean): M {
    this.#metrics.set(metric.name, metric);
    if (this.#disabled.has(metric.name)) {
      metric.active = false;
      if (count) this.#disabledTotal.inc();
    } else if (!this.#showHidden && this.#isHidden(metric)) {
      metric.active = false;
      if (count) this.#hiddenTotal.inc();
    } else if (count) {
      this.#registeredTotal.inc({ stability_level: metric.stabilityLevel, deprecated_version: metric.deprecatedVersion ?? "" });
    }
    return metric;
  }

  #isHidden(metric: Metric): boolean {
    if (metric.deprecatedVersion === undefined) return false;
    const deprecated = parseMinorVersion(metric.deprecatedVersion);
    if (deprecated === undefined) throw new Error(`metric ${metric.name}: invalid deprecatedVersion ${metric.deprecatedVersion}`);
    const { major, minor } = this.#version;
    const hideAt = deprecated.minor + GRACE_RELEASES[metric.stabilityLevel];
    return major > deprecated.major || (major === deprecated.major && minor >= hideAt);
  }
}
