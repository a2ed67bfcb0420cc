// Feature gates: `--feature-gates=A=true,B=false` checked against the registry
// in ./features.ts, giving each component an immutable gate set to query.
// Contract (upstream component-base/featuregate, seed 000 "Versioning" 2): an
// unknown gate, a non-boolean value or changing a locked gate is an error.

import { flag, parseBool, parseStringMap, type FlagDecl, type StringMap } from "./flags.js";
import { knownFeatures, type FeatureName, type FeatureSpec, type FeatureStage } from "./features.js";

export type FeatureRegistry = Readonly<Record<string, FeatureSpec>>;

export type FeatureGateErrorCode = "unknown-gate" | "invalid-value" | "locked";

export class FeatureGateError extends Error {
  readonly code: FeatureGateErrorCode;
  readonly gate: string;
  constructor(options: { code: FeatureGateErrorCode; gate: string; message: string }) {
    super(options.message);
    this.name = "FeatureGateError";
    this.code = options.code;
    this.gate = options.gate;
  }
}

/** One gate as a component sees it: what /flagz, /metrics (orch_feature_enabled) and docs list. */
export interface FeatureGateState {
  readonly name: string;
  readonly stage: FeatureStage;
  readonly default: boolean;
  readonly lockToDefault: boolean;
  readonly enabled: boolean;
  /** Set explicitly by --feature-gates (AllAlpha/AllBeta do not count). */
  readonly set: boolean;
  readonly description: string;
}

// Upstream's meta-gates: each switches every gate of its stage that is not set explicitly.
const META_GATES: Readonly<Record<string, FeatureStage>> = { AllAlpha: "ALPHA", AllBeta: "BETA" };

/** An immutable set of gate values; one per component (in `orch server`, one shared by all). */
export class FeatureGates<N extends string = FeatureName> {
  readonly warnings: readonly string[];
  #registry: FeatureRegistry;
  #enabled: ReadonlyMap<string, boolean>;
  #explicit: ReadonlyMap<string, boolean>;

  private constructor(options: { registry: FeatureRegistry; explicit: ReadonlyMap<string, boolean>; warnings: readonly string[] }) {
    this.#registry = options.registry;
    this.#explicit = options.explicit;
    this.warnings = Object.freeze([...options.warnings]);
    const enabled = new Map<string, boolean>();
    for (const [name, spec] of Object.entries(this.#registry)) {
      let value = this.#explicit.get(name);
      if (value === undefined && !spec.lockToDefault && !(name in META_GATES)) {
        for (const [meta, stage] of Object.entries(META_GATES)) {
          if (spec.stage === stage && this.#explicit.has(meta)) value = this.#explicit.get(meta);
        }
      }
      enabled.set(name, value ?? spec.default);
    }
    this.#enabled = enabled;
  }

  /** Validates settings against `registry` and builds the gate set; throws FeatureGateError. */
  static from<R extends FeatureRegistry>(options: {
    registry: R;
    settings: string | Readonly<Record<string, string | boolean>>;
  }): FeatureGates<Extract<keyof R, string>> {
    const { registry } = options;
    const settings = typeof options.settings === "string" ? parseSettings(options.settings) : options.settings;
    const explicit = new Map<string, boolean>();
    const warnings: string[] = [];
    for (const [name, raw] of Object.entries(settings)) {
      const spec = Object.hasOwn(registry, name) ? registry[name] : undefined;
      if (spec === undefined) {
        throw new FeatureGateError({ code: "unknown-gate", gate: name, message: `unrecognized feature gate: ${name}` });
      }
      let value: boolean;
      try {
        value = typeof raw === "boolean" ? raw : parseBool(raw);
      } catch (err) {
        throw new FeatureGateError({
          code: "invalid-value",
          gate: name,
          message: `invalid value of ${name}=${String(raw)}, err: ${(err as Error).message}`,
        });
      }
      if (spec.lockToDefault && value !== spec.default) {
        throw new FeatureGateError({
          code: "locked",
          gate: name,
          message: `cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`,
        });
      }
      if (spec.stage === "GA" || spec.stage === "DEPRECATED") {
        const what = spec.stage === "GA" ? "GA" : "deprecated";
        warnings.push(`Setting ${what} feature gate ${name}=${value}. It will be removed in a future release.`);
      }
      explicit.set(name, value);
    }
    return new FeatureGates<Extract<keyof R, string>>({ registry, explicit, warnings });
  }

  /** Whether the gate is on. Asking for an unregistered gate is a programming error and throws. */
  enabled(name: N): boolean {
    const value = this.#enabled.get(name);
    if (value === undefined) throw new Error(`feature gate ${name} is not registered`);
    return value;
  }

  /** Every registered gate, sorted by name. */
  list(): readonly FeatureGateState[] {
    return [...this.#enabled.keys()].sort().map((name) => {
      const spec = this.#registry[name] as FeatureSpec;
      return Object.freeze({
        name,
        stage: spec.stage,
        default: spec.default,
        lockToDefault: spec.lockToDefault === true,
        enabled: this.#enabled.get(name) === true,
        set: this.#explicit.has(name),
        description: spec.description,
      });
    });
  }

  /** The explicit settings as `--feature-gates` spells them: "A=true,B=false", sorted. */
  toString(): string {
    return [...this.#explicit.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, value]) => `${name}=${value}`)
      .join(",");
  }
}

function parseSettings(text: string): StringMap {
  try {
    return parseStringMap(text);
  } catch (err) {
    const item = /"(.*)"/.exec((err as Error).message)?.[1] ?? text;
    throw new FeatureGateError({ code: "invalid-value", gate: item, message: `missing bool value for ${item}` });
  }
}

/** Gates set by `--feature-gates` (a parsed map flag) against orch's registry; throws FeatureGateError. */
export function parseFeatureGates(settings: string | Readonly<Record<string, string | boolean>>): FeatureGates<FeatureName> {
  return FeatureGates.from({ registry: knownFeatures, settings });
}

/** Every gate at its default. */
export function defaultFeatureGates(): FeatureGates<FeatureName> {
  return FeatureGates.from({ registry: knownFeatures, settings: {} });
}

/** The `--feature-gates` flag: a map flag checked against the registry at parse time (exit 2 on error). */
export function featureGatesFlag(options: { registry?: FeatureRegistry; section?: string } = {}): FlagDecl<StringMap> {
  const registry = options.registry ?? knownFeatures;
  // Like upstream, --help lists only gates one may still change: GA and deprecated ones are on their way out.
  const listed = Object.entries(registry)
    .filter(([, spec]) => spec.stage !== "GA" && spec.stage !== "DEPRECATED")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, spec]) => `${name}=true|false (${spec.stage} - default=${spec.default})`);
  return flag.map({
    description:
      "A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:\n" +
      listed.join("\n"),
    typeName: "mapStringBool",
    section: options.section ?? "Feature gate flags",
    check(value) {
      try {
        FeatureGates.from({ registry, settings: value });
        return undefined;
      } catch (err) {
        if (err instanceof FeatureGateError) return err.message;
        throw err;
      }
    },
  });
}
