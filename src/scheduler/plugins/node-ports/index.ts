// NodePorts: a pod's host ports must be free on the node (same protocol and
// port clash when either side listens on 0.0.0.0 or both on the same IP).

import type { FilterPlugin, PreFilterPlugin } from "../../framework/interface.js";
import { unschedulable } from "../../framework/interface.js";
import type { HostPort } from "../../framework/pod-info.js";

export const NAME = "NodePorts";
export const REASON = "node(s) didn't have free ports for the requested pod ports";
const FAIL = unschedulable(NAME, REASON);

export function portsConflict(a: HostPort, b: HostPort): boolean {
  return a.port === b.port && a.protocol === b.protocol && (a.ip === b.ip || a.ip === "0.0.0.0" || b.ip === "0.0.0.0");
}

export const nodePorts: PreFilterPlugin & FilterPlugin = {
  name: NAME,
  events: ["NodeAdd", "AssignedPodDelete"],
  preFilter: (_state, pod) => (pod.hostPorts.length === 0 ? "skip" : undefined),
  filter(_state, pod, node) {
    for (const want of pod.hostPorts) for (const used of node.usedPorts) if (portsConflict(want, used)) return FAIL;
    return undefined;
  },
};
