// The shared component base: what every orch component (and the CLI) imports.
// Flag parsing, feature gates, common flags and the version; later health,
// metrics and the z-pages join here.

export {
  FlagError,
  FlagSet,
  ParsedFlags,
  flag,
  formatFlagValue,
  parseBool,
  parseStringMap,
  type FlagDecl,
  type FlagDecls,
  type FlagEntry,
  type FlagErrorCode,
  type FlagKind,
  type FlagName,
  type FlagSetOptions,
  type FlagValue,
  type FlagValues,
  type ParseOutcome,
  type PositionalSpec,
  type StringMap,
} from "./flags.js";
export { formatDuration, parseDuration } from "./duration.js";
export {
  FeatureGateError,
  FeatureGates,
  defaultFeatureGates,
  featureGatesFlag,
  parseFeatureGates,
  type FeatureGateErrorCode,
  type FeatureGateState,
  type FeatureRegistry,
  type FeatureSpec,
  type FeatureStage,
} from "./feature-gates.js";
export { knownFeatures, type FeatureName } from "./features.js";
export { SECURE_SERVING, baseFlags, secureServingFlags } from "./common-flags.js";
export { versionInfo, type VersionInfo } from "./version.js";
export { packageRoot } from "./package-root.js";
