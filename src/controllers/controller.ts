// What every controller gets and gives: one shared client, informer factory
// and discovery cache in; a name and a run() that works until the signal
// fires out. Controllers are level-based: informers feed keys to a work
// queue, and each key is reconciled from the current state (run-queue.ts).

import type { Naming } from "../machinery/naming.js";
import type { DiscoveryCache, InformerFactory, RestClient } from "../client/index.js";
import type { MetricsRegistry } from "../component/metrics/index.js";

export interface ControllerContext {
  client: RestClient;
  informers: InformerFactory;
  discovery: DiscoveryCache;
  naming: Naming;
  /** Ends the controller. */
  signal: AbortSignal;
  log(line: string): void;
  /** The controller-manager flags that tune controllers. */
  config?: ControllerConfig;
  /** Where controllers record their metrics (the component's registry); none: not recorded. */
  metrics?: MetricsRegistry;
  /** The clock in ms (tests inject one); default Date.now. */
  now?: () => number;
}

/** Controller tuning from `orch controller-manager` flags; each controller has upstream's default. */
export interface ControllerConfig {
  /** `--concurrent-replicaset-syncs` (default 5). */
  concurrentReplicaSetSyncs?: number;
  /** `--concurrent-deployment-syncs` (default 5). */
  concurrentDeploymentSyncs?: number;
  /** `--concurrent-daemonset-syncs` (default 2). */
  concurrentDaemonSetSyncs?: number;
  /** `--concurrent-statefulset-syncs` (default 5). */
  concurrentStatefulSetSyncs?: number;
  /** Gate StatefulSetAutoDeletePVC (default true): the StatefulSet controller acts on persistentVolumeClaimRetentionPolicy. */
  statefulSetAutoDeletePVC?: boolean;
  /** `--node-monitor-grace-period` (default 50 s). */
  nodeMonitorGracePeriodMs?: number;
  /** `--legacy-service-account-token-generation` (default false): every ServiceAccount gets a token Secret (v1.23's token controller). */
  legacyServiceAccountTokenGeneration?: boolean;
  /** `--terminated-pod-gc-threshold` (default 12500; 0 or less: off). */
  terminatedPodGcThreshold?: number;
  /** First back-off before the Job controller replaces a failed pod (upstream: 10 s). */
  jobBackoffBaseMs?: number;
  /** `--max-endpoints-per-slice` (default 100). */
  maxEndpointsPerSlice?: number;
  /** How often pod GC runs (upstream: 20 s). */
  podGcPeriodMs?: number;
  /** Where the local-path provisioner makes volumes (`orch server`: DATA_DIR/volumes); unset: it does not run. */
  localPathDir?: string;
  /** `--horizontal-pod-autoscaler-sync-period` (default 15 s). */
  hpaSyncPeriodMs?: number;
  /** `--horizontal-pod-autoscaler-downscale-stabilization` (default 5 min): the scale-down window of autoscalers without a behavior. */
  hpaDownscaleStabilizationMs?: number;
  /** The CSR signer's CA and certificate lifetime (`--cluster-signing-cert-file`, `-key-file`, `-duration`); unset: nothing is signed. */
  signing?: { certFile: string; keyFile: string; durationMs?: number };
}

export interface ControllerDescriptor {
  /** As `--controllers` names it: "namespace-controller". */
  readonly name: string;
  /** Older names `--controllers` also accepts ("namespace"). */
  readonly aliases?: readonly string[];
  /** Whether `*` includes it. */
  readonly enabledByDefault: boolean;
  /** Starts the controller's informers and workers; resolves once it has stopped (after the signal). */
  run(context: ControllerContext): Promise<void>;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The controller's clock in ms: the injected one (tests), else Date.now(). */
export function nowMs(context: Pick<ControllerContext, "now">): number {
  return context.now?.() ?? Date.now();
}
