// The stable admission histograms of seed 002: per step (mutating "admit",
// "validate"), per built-in plugin ("controller") and per webhook. The chain
// (src/apiserver/admission/, built on another branch) is timed by wrapping:
// `instrumentPlugins` times each plugin and `instrumentChain` each phase, so
// the chain itself needs no metrics code. Structural types keep this file
// independent of the chain's module.

import type { Histogram, MetricsRegistry } from "../component/metrics/index.js";

const STEP_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 2.5];
const WEBHOOK_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25];

/** What the metrics need of a request's admission attributes. */
interface Attributes {
  readonly operation: string;
}

interface Mutating<A extends Attributes> {
  readonly name: string;
  admit(attrs: A): void | Promise<void>;
}

interface Validating<A extends Attributes> {
  readonly name: string;
  validate(attrs: A): void | Promise<void>;
}

export class AdmissionMetrics {
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

  /** Wraps each plugin so its time lands in apiserver_admission_controller_admission_duration_seconds. */
  instrumentPlugins<A extends Attributes, M extends Mutating<A>, V extends Validating<A>>(options: {
    readonly mutating?: readonly M[];
    readonly validating?: readonly V[];
  }): { mutating: M[]; validating: V[] } {
    return {
      mutating: (options.mutating ?? []).map((p) => ({ ...p, admit: (a: A) => this.#time(this.#controller, p.name, "admit", a, () => p.admit(a)) }) as M),
      validating: (options.validating ?? []).map((p) => ({ ...p, validate: (a: A) => this.#time(this.#controller, p.name, "validate", a, () => p.validate(a)) }) as V),
    };
  }

  /** Wraps a chain's two phases so each lands in apiserver_admission_step_admission_duration_seconds. */
  instrumentChain<A extends Attributes, C extends { admit(a: A): Promise<void>; validate(a: A): Promise<void> }>(chain: C): C {
    const admit = chain.admit.bind(chain);
    const validate = chain.validate.bind(chain);
    return Object.assign(Object.create(chain) as C, {
      admit: (a: A) => this.#time(this.#step, undefined, "admit", a, () => admit(a)),
      validate: (a: A) => this.#time(this.#step, undefined, "validate", a, () => validate(a)),
    });
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
