// NodeUnschedulable: cordoned nodes (spec.unschedulable) take no new pods,
// unless the pod tolerates the node.<domain>/unschedulable:NoSchedule taint.

import type { Naming } from "../../../machinery/naming.js";
import type { FilterPlugin } from "../../framework/interface.js";
import { unresolvable } from "../../framework/interface.js";
import { tolerates } from "../taint-toleration/index.js";

export const NAME = "NodeUnschedulable";
export const REASON = "node(s) were unschedulable";

export function nodeUnschedulable(naming: Naming): FilterPlugin {
  const taint = { key: `node.${naming.keyDomain}/unschedulable`, effect: "NoSchedule" };
  const fail = unresolvable(NAME, REASON);
  return {
    name: NAME,
    events: ["NodeAdd", "NodeSpecUnschedulableChange", "NodeTaintChange"],
    filter: (_state, pod, node) => (node.unschedulable && !tolerates(pod.pod.spec?.tolerations, taint) ? fail : undefined),
  };
}
