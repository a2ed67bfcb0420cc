// The metrics every component exposes about itself (seed 002, beta metrics on
// all six): orch_build_info and orch_feature_enabled, and the registry a
// component's flags and gates ask for.

import { namingFor } from "../machinery/naming.js";
import type { FeatureGates } from "./feature-gates.js";
import { MetricsRegistry } from "./metrics/index.js";
import { versionInfo } from "./version.js";

export interface ComponentRegistryOptions {
  readonly featureGates: FeatureGates;
  /** `--show-hidden-metrics-for-version`. */
  readonly showHiddenMetricsForVersion?: string;
  /** `--disabled-metrics`. */
  readonly disabledMetrics?: readonly string[];
  readonly metricPrefix?: string;
}

/** A registry for one component: NativeHistograms from its gates, plus build info and gate states. */
export function componentRegistry(options: ComponentRegistryOptions): MetricsRegistry {
  const registry = new MetricsRegistry({
    nativeHistograms: options.featureGates.enabled("NativeHistograms"),
    ...(options.showHiddenMetricsForVersion ? { showHiddenMetricsForVersion: options.showHiddenMetricsForVersion } : {}),
    ...(options.disabledMetrics ? { disabledMetrics: options.disabledMetrics } : {}),
  });
  registerComponentMetrics(registry, options.featureGates, options.metricPrefix);
  return registry;
}

/** Adds orch_build_info and orch_feature_enabled to `registry` (idempotent). */
export function registerComponentMetrics(registry: MetricsRegistry, featureGates: FeatureGates, prefix = namingFor().metricPrefix): void {
  const v = versionInfo();
  registry.gauge({
    name: `${prefix}build_info`, stabilityLevel: "BETA",
    labelNames: ["build_date", "compiler", "git_commit", "git_tree_state", "git_version", "go_version", "major", "minor", "platform"],
    help: "A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, runtime version, and compiler from which orch was built, and platform on which it is running.",
  }).set({
    build_date: v.buildDate, compiler: v.compiler, git_commit: v.gitCommit, git_tree_state: v.gitTreeState,
    git_version: v.gitVersion, go_version: v.goVersion, major: v.major, minor: v.minor, platform: v.platform,
  }, 1);
  const enabled = registry.gauge({
    name: `${prefix}feature_enabled`, stabilityLevel: "BETA", labelNames: ["name", "stage"],
    help: "Whether each feature gate is enabled (1) or not (0), with its stage (empty for GA).",
  });
  for (const gate of featureGates.list()) {
    // Upstream labels GA gates with an empty stage.
    enabled.set({ name: gate.name, stage: gate.stage === "GA" ? "" : gate.stage }, gate.enabled ? 1 : 0);
  }
}
