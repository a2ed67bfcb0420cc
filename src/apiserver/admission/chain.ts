// The admission chain (seed 000, "Dry run" 1 and 3): mutating plugins, then
// validating plugins, run by the registry store at one place in its write
// pipeline (see registry/store.ts). A plugin that may have side effects
// refuses dry-run requests instead of running, so a dry run never acts.

import { badRequest } from "../../machinery/index.js";
import type { AdmissionAttributes, AdmissionOptions, AdmissionPlugin, AdmissionTiming, MutatingPlugin, ValidatingPlugin } from "../../api/admission.js";

export class AdmissionChain {
  readonly #mutating: readonly MutatingPlugin[];
  readonly #validating: readonly ValidatingPlugin[];
  readonly #timing: AdmissionTiming | undefined;

  constructor(options: AdmissionOptions = {}) {
    this.#mutating = options.mutating ?? [];
    this.#validating = options.validating ?? [];
    this.#timing = options.timing;
  }

  /** A chain with more plugins after these (server wiring adds built-ins, tests add their own). */
  with(options: AdmissionOptions): AdmissionChain {
    return new AdmissionChain({
      mutating: [...this.#mutating, ...(options.mutating ?? [])],
      validating: [...this.#validating, ...(options.validating ?? [])],
      timing: options.timing ?? this.#timing,
    });
  }

  get empty(): boolean {
    return this.#mutating.length === 0 && this.#validating.length === 0;
  }

  admit(attrs: AdmissionAttributes): Promise<void> {
    return this.#phase("admit", attrs, this.#mutating, (p) => (p as MutatingPlugin).admit(attrs));
  }

  validate(attrs: AdmissionAttributes): Promise<void> {
    return this.#phase("validate", attrs, this.#validating, (p) => (p as ValidatingPlugin).validate(attrs));
  }

  /**
   * One phase: each plugin that handles the request, in order; timed per
   * phase and per plugin when a timing is set. Plugins that answer
   * synchronously run in one loop with no promise between them; the phase
   * waits only where a plugin returns a promise.
   */
  #phase(type: "admit" | "validate", attrs: AdmissionAttributes, plugins: readonly AdmissionPlugin[], call: (p: AdmissionPlugin) => void | Promise<void>): Promise<void> {
    const timing = this.#timing;
    const each = (from: number): void | Promise<void> => {
      for (let i = from; i < plugins.length; i++) {
        const p = plugins[i]!;
        if (!runs(p, attrs)) continue;
        const result = timing === undefined ? call(p) : timing.time(type, attrs.operation, p.name, () => call(p));
        if (result instanceof Promise) return result.then(() => each(i + 1));
      }
    };
    try {
      const result = timing === undefined ? each(0) : timing.time(type, attrs.operation, undefined, () => each(0));
      return result instanceof Promise ? result : DONE;
    } catch (err) {
      return Promise.reject(err);
    }
  }
}

const DONE: Promise<void> = Promise.resolve();

function runs(plugin: AdmissionPlugin, attrs: AdmissionAttributes): boolean {
  if (plugin.handles !== undefined && !plugin.handles(attrs)) return false;
  const effects = plugin.sideEffects ?? "None";
  if (attrs.dryRun && effects !== "None" && effects !== "NoneOnDryRun") {
    // Upstream's wording for webhooks (NewDryRunUnsupportedErr), for our plugins.
    throw badRequest(`admission plugin ${JSON.stringify(plugin.name)} has side effects and does not support dry run`);
  }
  return true;
}
