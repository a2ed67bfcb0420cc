// The default profile's plugins, in upstream's order (cheap, decisive filters
// first, so most nodes are rejected before the costly ones run).

import type { Naming } from "../../machinery/naming.js";
import type { Plugin } from "../framework/interface.js";
import { balancedAllocation } from "./balanced-allocation/index.js";
import { interPodAffinity } from "./inter-pod-affinity/index.js";
import { nodeAffinity } from "./node-affinity/index.js";
import { nodeName } from "./node-name/index.js";
import { nodePorts } from "./node-ports/index.js";
import { nodeResourcesFit } from "./node-resources-fit/index.js";
import { nodeUnschedulable } from "./node-unschedulable/index.js";
import { podTopologySpread } from "./pod-topology-spread/index.js";
import { taintToleration } from "./taint-toleration/index.js";
import { volumeBinding, type VolumeLister } from "./volume-binding/index.js";

export type { VolumeLister } from "./volume-binding/index.js";

/** `volumes`: where VolumeBinding reads claims and volumes (without it, the plugin is left out). */
export function defaultPlugins(naming: Naming, volumes?: VolumeLister): Plugin[] {
  return [
    nodeUnschedulable(naming), nodeName, taintToleration, nodeAffinity, nodePorts, nodeResourcesFit,
    ...(volumes !== undefined ? [volumeBinding(naming, volumes)] : []),
    podTopologySpread, interPodAffinity, balancedAllocation,
  ];
}
