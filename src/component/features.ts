// Every feature gate orch knows, in one table (upstream keeps its in
// pkg/features). Add a gate here and only here; docs/cli.md lists them all and a
// test fails when it does not. Stages and defaults come from the seed cited.

/** Upstream's prerelease stages. The metric `orch_feature_enabled` labels GA as "" as upstream does. */
export type FeatureStage = "ALPHA" | "BETA" | "GA" | "DEPRECATED";

/** One row of the table: what feature-gates.ts checks a setting against. */
export interface FeatureSpec {
  readonly stage: FeatureStage;
  readonly default: boolean;
  /** The gate cannot be set to anything but its default (GA gates on their way out). */
  readonly lockToDefault?: boolean;
  readonly description: string;
}

export const knownFeatures = {
  // Upstream's two meta-gates: set every not-explicitly-set ALPHA (BETA) gate at once.
  AllAlpha: { stage: "ALPHA", default: false, description: "Sets every alpha gate not set explicitly." },
  AllBeta: { stage: "BETA", default: false, description: "Sets every beta gate not set explicitly." },

  // API server (seed 000).
  APIResponseCompression: {
    stage: "BETA", default: true,
    description: "gzip get/list responses for clients sending Accept-Encoding: gzip (seed 000, \"Media types\" 6).",
  },
  AllowUnsafeMalformedObjectDeletion: {
    stage: "ALPHA", default: false,
    description: "Allows deleting objects that cannot be read or decoded (seed 000, \"Deletion\").",
  },
  CBORServingAndStorage: {
    stage: "ALPHA", default: false,
    description: "Serves application/cbor and application/cbor-seq (seed 000, \"Media types\").",
  },
  ConsistentGetFromCache: {
    stage: "BETA", default: true,
    description: "orch's own: a consistent GET on etcd reads only the object's revision (keys-only) and answers from the watch cache when it holds that version.",
  },
  ConsistentListFromCache: {
    stage: "BETA", default: true,
    description: "Serves consistent lists from the watch cache once it has caught up with storage.",
  },
  ListFromCacheSnapshot: {
    stage: "BETA", default: true,
    description: "Serves exact-resourceVersion lists from watch cache snapshots.",
  },
  ShardedListAndWatch: {
    stage: "ALPHA", default: false,
    description: "Honors shard selectors on list and watch (seed 000, \"Sharded list and watch\").",
  },
  WatchList: {
    stage: "BETA", default: true,
    description: "Streaming lists: sendInitialEvents on watch (seed 000, \"Versioning\" 2).",
  },

  // Controller manager.
  StatefulSetAutoDeletePVC: {
    stage: "BETA", default: true,
    description: "The StatefulSet controller acts on persistentVolumeClaimRetentionPolicy (beta 1.27-1.31 upstream); off, claims are always retained.",
  },

  // All components (seed 002).
  ComponentFlagz: {
    stage: "BETA", default: true,
    description: "Serves /flagz (seed 002, \"Endpoints\" and \"Versioning\" 3).",
  },
  ComponentSLIs: {
    stage: "GA", default: true, lockToDefault: true,
    description: "Serves health indicators at /metrics/slis (seed 002, \"What the service does\" 2).",
  },
  ComponentStatusz: {
    stage: "BETA", default: true,
    description: "Serves /statusz (seed 002, \"Endpoints\" and \"Versioning\" 3).",
  },
  NativeHistograms: {
    stage: "ALPHA", default: false,
    description: "Exposes histograms in native form as well as classic (seed 002, \"Native histograms\").",
  },

  // Node agent (seeds 001 and 002).
  ContainerCheckpoint: {
    stage: "BETA", default: true,
    description: "Serves POST /checkpoint/{namespace}/{pod}/{container} (seed 001, \"Checkpoint a container\").",
  },
  GracefulNodeShutdown: {
    stage: "BETA", default: true,
    description: "Delays node shutdown to terminate pods gracefully (seed 001, \"Local files and paths\").",
  },
  InPlacePodVerticalScaling: {
    stage: "GA", default: true, lockToDefault: true,
    description: "Resizes pod resources in place (seed 001, \"Local files and paths\": stable in 1.35).",
  },
  NodeAgentEnsureSecretPulledImages: {
    stage: "BETA", default: true,
    description: "Records image pulls and rechecks credentials for pulled images (seed 001, \"Local files and paths\").",
  },
  NodeAgentPSI: {
    stage: "GA", default: true, lockToDefault: true,
    description: "Pressure stall information in the summary API and metrics (seed 002, \"Pressure metrics\" 5).",
  },
  NodeDeclaredFeatures: {
    stage: "BETA", default: true,
    description: "Publishes .status.declaredFeatures on the node (seed 001, \"Node status\").",
  },
  NodeSwap: {
    stage: "GA", default: true, lockToDefault: true,
    description: "Lets pods use swap per memorySwap.swapBehavior (seed 001, \"Swap behavior setting\"; GA upstream).",
  },
  PodAndContainerStatsFromCRI: {
    stage: "ALPHA", default: false,
    description: "Takes pod and container stats from the runtime instead of the stats collector (seed 002, \"Versioning\" 3).",
  },
  PodsAPI: {
    stage: "ALPHA", default: false,
    description: "Serves the local pod-info gRPC interface (seed 001, \"Pod-info gRPC interface\"; upstream name).",
  },
  SystemdWatchdog: {
    stage: "BETA", default: true,
    description: "Pings the systemd watchdog when WatchdogSec is set (seed 001, \"Limits\": beta since 1.32).",
  },
} as const satisfies Readonly<Record<string, FeatureSpec>>;

export type FeatureName = keyof typeof knownFeatures;
