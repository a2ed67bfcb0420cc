// The base every metric kind shares: its declaration (name, help, labels,
// stability, deprecation) and whether it is live. A hidden or disabled metric
// keeps its object, so callers never branch, but records nothing.

import { validateLabelNames, validateMetricName } from "./series.js";
import type { MetricOptions, StabilityLevel } from "./types.js";

export abstract class Metric {
  readonly name: string;
  readonly rawHelp: string;
  readonly labelNames: readonly string[];
  readonly stabilityLevel: StabilityLevel;
  readonly deprecatedVersion: string | undefined;
  /** Set by the registry: false while the metric is hidden or disabled. */
  active = true;

  constructor(options: MetricOptions) {
    validateMetricName(options.name);
    const labelNames = Object.freeze([...(options.labelNames ?? [])]);
    validateLabelNames(options.name, labelNames);
    this.name = options.name;
    this.rawHelp = options.help;
    this.labelNames = labelNames;
    this.stabilityLevel = options.stabilityLevel ?? "ALPHA";
    this.deprecatedVersion = options.deprecatedVersion;
  }

  /** Upstream's exposed help: `[STABLE] (Deprecated since 1.34.0) text`. */
  get help(): string {
    const deprecated = this.deprecatedVersion === undefined ? "" : `(Deprecated since ${this.deprecatedVersion}) `;
    return `[${this.stabilityLevel}] ${deprecated}${this.rawHelp}`;
  }

  abstract readonly kind: string;
}
