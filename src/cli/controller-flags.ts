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
  "max-endpoints-per-slice": flag.int({
    section: SECTION,
    default: 100,
    min: 1,
    max: 1000,
    description: "The maximum number of endpoints the endpointslice controller puts in one EndpointSlice.",
  }),
};

/** From a command's parsed flag values (`flags.values`). */
export function controllerConfigFromFlags(values: {
  readonly "node-monitor-grace-period": number;
  readonly "terminated-pod-gc-threshold": number;
  readonly "max-endpoints-per-slice": number;
}): ControllerConfig {
  return {
    maxEndpointsPerSlice: values["max-endpoints-per-slice"],
    nodeMonitorGracePeriodMs: values["node-monitor-grace-period"],
    terminatedPodGcThreshold: values["terminated-pod-gc-threshold"],
  };
}
