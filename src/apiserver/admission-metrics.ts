// The stable admission histograms of seed 002: per step (mutating "admit",
// "validate"), per built-in plugin ("controller") and per webhook. The chain
// (src/apiserver/admission/) calls `time` through its AdmissionTiming hook,
// so it needs no metrics code of its own.

import type { Histogram, MetricsRegistry } from "../component/metrics/index.js";
import type { AdmissionOperation, AdmissionTiming } from "./admission/index.js";

const STEP_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 2.5];
const WEBHOOK_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25];

/** What the metrics need of a request's admission attributes. */
interface Attributes {
  readonly operation: string;
}

export class AdmissionMetrics implements AdmissionTiming {
  readonly #step: Histogram;
  readonly #controller: Histogram;
  readonly webhook: Histogram;

  constructor(registry: MetricsRegistry) {
    this.#step = registry.histogram({
      name: "apiserver_admission_step_admission_duration_seconds", stabilityLevel: "STABLE",
      labelNames: ["operation", "rejected", "type"], buckets: STEP_BUCKETS,
      help: "Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).",
    });
    this.#controller = registry.histogram({
      name: "apiserver_admission_controller_admission_duration_seconds", stabilityLevel: "STABLE",
      labelNames: ["name", "operation", "rejected", "type"], buckets: STEP_BUCKETS,
      help: "Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
    });
    this.webhook = registry.histogram({
      name: "apiserver_admission_webhook_admission_duration_seconds", stabilityLevel: "STABLE",
      labelNames: ["name", "operation", "rejected", "type"], buckets: WEBHOOK_BUCKETS,
      help: "Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
    });
  }

  /**
   * The chain's timing hook (AdmissionTiming): a phase lands in
   * apiserver_admission_step_admission_duration_seconds, a plugin in
   * apiserver_admission_controller_admission_duration_seconds.
   */
  time(type: "admit" | "validate", operation: AdmissionOperation, plugin: string | undefined, run: () => void | Promise<void>): Promise<void> {
    return plugin === undefined ? this.#time(this.#step, undefined, type, { operation }, run) : this.#time(this.#controller, plugin, type, { operation }, run);
  }

  async #time(h: Histogram, name: string | undefined, type: "admit" | "validate", attrs: Attributes, run: () => void | Promise<void>): Promise<void> {
    const started = performance.now();
    let rejected = true;
    try {
      await run();
      rejected = false;
    } finally {
      const labels = { operation: attrs.operation, rejected: String(rejected), type };
      h.observe(name === undefined ? labels : { ...labels, name }, (performance.now() - started) / 1000);
    }
  }
}
