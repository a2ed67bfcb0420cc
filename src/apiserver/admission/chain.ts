// The admission chain (seed 000, "Dry run" 1 and 3): mutating plugins, then
// validating plugins, run by the registry store at one place in its write
// pipeline (see registry/store.ts). A plugin that may have side effects
// refuses dry-run requests instead of running, so a dry run never acts.

import { badRequest, type ApiObject, type GroupResource } from "../../machinery/index.js";

export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE";

/** What a plugin sees of one request. `object` is the plugin's to change in the mutating phase only. */
export interface AdmissionAttributes {
  readonly operation: AdmissionOperation;
  readonly resource: GroupResource;
  readonly kind: string;
  readonly subresource: string | undefined;
  readonly namespace: string | undefined;
  readonly name: string;
  /** The object being written (CREATE, UPDATE); undefined on DELETE. */
  readonly object: ApiObject | undefined;
  /** The stored object (UPDATE, DELETE). */
  readonly oldObject: ApiObject | undefined;
  readonly dryRun: boolean;
}

/**
 * Upstream's webhook sideEffects classes: `None` and `NoneOnDryRun` may run
 * on dry-run requests (the latter must skip its effects when `dryRun`);
 * `Some` and `Unknown` make a dry-run request they handle fail.
 */
export type SideEffects = "None" | "NoneOnDryRun" | "Some" | "Unknown";

interface PluginBase {
  readonly name: string;
  /** Default "None": built-in plugins only read and change the request. */
  readonly sideEffects?: SideEffects;
  /** Whether the plugin looks at this request at all (default: every request). */
  handles?(attrs: AdmissionAttributes): boolean;
}

export interface MutatingPlugin extends PluginBase {
  /** Change `attrs.object` in place, or throw an ApiError to refuse the request. */
  admit(attrs: AdmissionAttributes): void | Promise<void>;
}

export interface ValidatingPlugin extends PluginBase {
  /** Throw an ApiError to refuse the request; the object must not be changed. */
  validate(attrs: AdmissionAttributes): void | Promise<void>;
}

/**
 * Times the chain's work (the admission metrics implement it): each phase
 * (`plugin` undefined) and each plugin within it. `run`'s outcome is passed on.
 */
export interface AdmissionTiming {
  time(type: "admit" | "validate", operation: AdmissionOperation, plugin: string | undefined, run: () => void | Promise<void>): Promise<void>;
}

export interface AdmissionOptions {
  readonly mutating?: readonly MutatingPlugin[];
  readonly validating?: readonly ValidatingPlugin[];
  /** Kept by with(): every chain made from this one is timed alike. */
  readonly timing?: AdmissionTiming;
}

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

  /** One phase: each plugin that handles the request, in order; timed per phase and per plugin when a timing is set. */
  #phase(type: "admit" | "validate", attrs: AdmissionAttributes, plugins: readonly PluginBase[], call: (p: PluginBase) => void | Promise<void>): Promise<void> {
    const timing = this.#timing;
    const each = async () => {
      for (const p of plugins) {
        if (!runs(p, attrs)) continue;
        await (timing === undefined ? call(p) : timing.time(type, attrs.operation, p.name, () => call(p)));
      }
    };
    return timing === undefined ? each() : timing.time(type, attrs.operation, undefined, each);
  }
}

function runs(plugin: PluginBase, attrs: AdmissionAttributes): boolean {
  if (plugin.handles !== undefined && !plugin.handles(attrs)) return false;
  const effects = plugin.sideEffects ?? "None";
  if (attrs.dryRun && effects !== "None" && effects !== "NoneOnDryRun") {
    // Upstream's wording for webhooks (NewDryRunUnsupportedErr), for our plugins.
    throw badRequest(`admission plugin ${JSON.stringify(plugin.name)} has side effects and does not support dry run`);
  }
  return true;
}
