// The controller-tuning flags `orch controller-manager` and `orch server` share
// (upstream's names and defaults), and the ControllerConfig they make.

import { flag } from "../component/index.js";
import type { ControllerConfig } from "../controllers/controller.js";

const SECTION = "Controller flags";

export const controllerFlags = {
  "node-monitor-grace-period": flag.duration({
    section: SECTION,
    default: "50s",
    description: "How long a node may go without a heartbeat (lease renewal or Ready condition) before it is marked Unknown and tainted unreachable (seed 001, \"States and transitions\").",
  }),
  "terminated-pod-gc-threshold": flag.int({
    section: SECTION,
    default: 12500,
    description: "Number of terminated pods that can exist before the pod garbage collector starts deleting the oldest; 0 or less disables it.",
  }),
  "legacy-service-account-token-generation": flag.bool({
    section: SECTION,
    default: false,
    description: "v1.23's token controller: every ServiceAccount gets a generated service-account-token Secret (token, ca.crt, namespace) listed in its secrets. Upstream stopped in 1.24; its e2e suites before 1.24 wait for them.",
  }),
  "concurrent-replicaset-syncs": syncs("ReplicaSets", 5),
  "concurrent-deployment-syncs": syncs("Deployments", 5),
  "concurrent-daemonset-syncs": syncs("DaemonSets", 2),
  "concurrent-statefulset-syncs": syncs("StatefulSets", 5),
  "max-endpoints-per-slice": flag.int({
    section: SECTION,
    default: 100,
    min: 1,
    max: 1000,
    description: "The maximum number of endpoints the endpointslice controller puts in one EndpointSlice.",
  }),
  "horizontal-pod-autoscaler-sync-period": flag.duration({
    section: SECTION,
    default: "15s",
    check: (ms) => (ms < 1000 ? "must be at least 1s" : undefined),
    description: "The period for syncing the number of pods in horizontal pod autoscaler.",
  }),
  "horizontal-pod-autoscaler-downscale-stabilization": flag.duration({
    section: SECTION,
    default: "5m",
    check: (ms) => (ms < 0 ? "must not be negative" : undefined),
    description: "The period for which autoscaler will look backwards and not scale down below any recommendation it made during that period.",
  }),
};

function syncs(kinds: string, byDefault: number) {
  return flag.int({
    section: SECTION,
    default: byDefault,
    min: 1,
    description: `The number of ${kinds} synced at once. Larger is more responsive, at more CPU and network load.`,
  });
}

type ControllerFlagValues = { readonly [N in Exclude<keyof typeof controllerFlags, "legacy-service-account-token-generation">]: number } & { readonly "legacy-service-account-token-generation": boolean };

/** From a command's parsed flag values (`flags.values`). */
export function controllerConfigFromFlags(values: ControllerFlagValues): ControllerConfig {
  return {
    maxEndpointsPerSlice: values["max-endpoints-per-slice"],
    nodeMonitorGracePeriodMs: values["node-monitor-grace-period"],
    terminatedPodGcThreshold: values["terminated-pod-gc-threshold"],
    legacyServiceAccountTokenGeneration: values["legacy-service-account-token-generation"],
    concurrentReplicaSetSyncs: values["concurrent-replicaset-syncs"],
    concurrentDeploymentSyncs: values["concurrent-deployment-syncs"],
    concurrentDaemonSetSyncs: values["concurrent-daemonset-syncs"],
    concurrentStatefulSetSyncs: values["concurrent-statefulset-syncs"],
    hpaSyncPeriodMs: values["horizontal-pod-autoscaler-sync-period"],
    hpaDownscaleStabilizationMs: values["horizontal-pod-autoscaler-downscale-stabilization"],
  };
}

/** `--use-service-account-credentials` (upstream's; off in `orch controller-manager` as upstream's, on in `orch server`). */
export function credentialFlags(byDefault: boolean) {
  return {
    "use-service-account-credentials": flag.bool({
      section: SECTION,
      default: byDefault,
      description:
        "If true, use individual service account credentials for each controller: controller NAME talks as the service account <account> in the " +
        "system namespace (created when missing, tokens renewed), bound to the ClusterRole system:controller:<account>. The shared informers keep the " +
        "manager's credentials.",
    }),
  };
}

/** The CSR signer's flags (upstream's names); orch server defaults the files to its data folder's CA. */
export const signingFlags = {
  "cluster-signing-cert-file": flag.string({ section: SECTION, description: "PEM CA certificate the CSR signer signs with (orch server: DATA_DIR/ca.crt when empty)." }),
  "cluster-signing-key-file": flag.string({ section: SECTION, description: "PEM private key of --cluster-signing-cert-file (orch server: DATA_DIR/ca.key when empty)." }),
  "cluster-signing-duration": flag.duration({ section: SECTION, default: "8760h", description: "The longest lifetime of a certificate the CSR signer issues; a request's spec.expirationSeconds may shorten it." }),
};

/** ControllerConfig.signing from the signing flags; `dataDir` supplies the CA files when the flags leave them empty. */
export function signingConfigFromFlags(get: (name: keyof typeof signingFlags) => string | number, dataDir?: string): ControllerConfig["signing"] {
  const certFile = String(get("cluster-signing-cert-file")) || (dataDir ? `${dataDir}/ca.crt` : "");
  const keyFile = String(get("cluster-signing-key-file")) || (dataDir ? `${dataDir}/ca.key` : "");
  if (!certFile || !keyFile) return undefined;
  return { certFile, keyFile, durationMs: Number(get("cluster-signing-duration")) };
}
