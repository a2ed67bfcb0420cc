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
};

function syncs(kinds: string, byDefault: number) {
  return flag.int({
    section: SECTION,
    default: byDefault,
    min: 1,
    description: `The number of ${kinds} synced at once. Larger is more responsive, at more CPU and network load.`,
  });
}

type ControllerFlagValues = { readonly [N in keyof typeof controllerFlags]: number };

/** From a command's parsed flag values (`flags.values`). */
export function controllerConfigFromFlags(values: ControllerFlagValues): ControllerConfig {
  return {
    maxEndpointsPerSlice: values["max-endpoints-per-slice"],
    nodeMonitorGracePeriodMs: values["node-monitor-grace-period"],
    terminatedPodGcThreshold: values["terminated-pod-gc-threshold"],
    concurrentReplicaSetSyncs: values["concurrent-replicaset-syncs"],
    concurrentDeploymentSyncs: values["concurrent-deployment-syncs"],
    concurrentDaemonSetSyncs: values["concurrent-daemonset-syncs"],
    concurrentStatefulSetSyncs: values["concurrent-statefulset-syncs"],
  };
}
