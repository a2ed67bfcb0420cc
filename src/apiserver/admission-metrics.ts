// The stable admission histograms of seed 002: per step (mutating "admit",
// "validate"), per built-in plugin ("controller") and per webhook. The chain
// (src/apiserver/admission/) calls `time` through its AdmissionTiming hook,
// so it needs no metrics code of its own.

import type { Histogram, MetricsRegistry } from "../component/metrics/index.js";
import type { AdmissionOperation, AdmissionTiming } from "./admission/index.js";

const STEP_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 2.5];
const WEBHOOK_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25];

/** An observation into one series, its labels looked up once (Histogram.bind). */
type Bound = { observe(value: number): void };

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
   * apiserver_admission_controller_admission_duration_seconds. A plugin that
   * answers synchronously is timed synchronously: a pod create runs about
   * twenty plugins, and an async wrapper each was 5 % of its CPU.
   */
  time(type: "admit" | "validate", operation: AdmissionOperation, plugin: string | undefined, run: () => void | Promise<void>): void | Promise<void> {
    const started = performance.now();
    let result: void | Promise<void>;
    try {
      result = run();
    } catch (err) {
      this.#observe(plugin, type, operation, true, started);
      throw err;
    }
    if (!(result instanceof Promise)) return this.#observe(plugin, type, operation, false, started);
    return result.then(
      () => this.#observe(plugin, type, operation, false, started),
      (err: unknown) => {
        this.#observe(plugin, type, operation, true, started);
        throw err;
      },
    );
  }

  /** One webhook call (the webhook plugins' `timed` hook). */
  readonly webhookCall = (call: { name: string; type: "admit" | "validate"; operation: string; rejected: boolean }, seconds: number): void => {
    this.webhook.observe({ name: call.name, operation: call.operation, rejected: String(call.rejected), type: call.type }, seconds);
  };

  /** Series by name, type, operation and outcome, each bound on first use. */
  readonly #bound = new Map<string, Bound>();

  #observe(plugin: string | undefined, type: "admit" | "validate", operation: string, rejected: boolean, started: number): void {
    const key = `${plugin ?? ""}\u0000${type}\u0000${operation}\u0000${rejected ? "1" : "0"}\u0000${plugin === undefined ? "step" : "controller"}`;
    let h = this.#bound.get(key);
    if (h === undefined) {
      const labels = { operation, rejected: String(rejected), type };
      h = plugin === undefined ? this.#step.bind(labels) : this.#controller.bind({ ...labels, name: plugin });
      this.#bound.set(key, h);
    }
    h.observe((performance.now() - started) / 1000);
  }
}
