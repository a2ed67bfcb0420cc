// The shared component base: what every orch component (and the CLI) imports.
// Flag parsing, feature gates, common flags, the version, health checks, the
// metrics registry (./metrics/), the z-pages and the component HTTPS server.

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
export { formatDuration, parseDuration } from "../machinery/duration.js";
export {
  FeatureGateError,
  FeatureGates,
  defaultFeatureGates,
  featureGatesFlag,
  parseFeatureGates,
  type FeatureGateErrorCode,
  type FeatureGateState,
  type FeatureRegistry,
} from "./feature-gates.js";
export { knownFeatures, type FeatureName, type FeatureSpec, type FeatureStage } from "./features.js";
export { METRICS, SECURE_SERVING, baseFlags, metricsFlags, secureServingFlags, tlsServingFlags } from "./common-flags.js";
export { API_COMPATIBILITY_VERSION, EMULATION_VERSION, MINIMUM_COMPATIBILITY_VERSION, orchVersion, versionInfo, type VersionInfo } from "./version.js";
export { HealthChecks, conditionCheck, logCheck, pingCheck, type HealthCheck, type HealthEndpoint } from "./health.js";
export { ComponentEndpoints, componentEndpoints, isPublicPath, negotiateMetrics, type ExtraHandler } from "./endpoints.js";
export { componentRegistry, registerComponentMetrics, type ComponentRegistryOptions } from "./component-metrics.js";
export { rawReply, readTlsFiles, startComponentServer, type ComponentServerOptions, type RunningComponentServer, type UpgradeHandler } from "./component-server.js";
export { persistedServingCert, type CertDirOptions } from "./persisted-serving-cert.js";
export { ScraperAuth, nodeAgentAttributes, type AccessAttributes, type AccessDecision, type AccessPolicy, type AccessReviewAnswer, type ApiServerCheck, type CallerInfo, type ResourceAttributes, type TokenReviewAnswer } from "./scraper-auth.js";
export { flagz, statusz, negotiateZPage, REDACTED, ZPAGE_API_VERSION } from "./zpages.js";
export { packageRoot } from "./package-root.js";
