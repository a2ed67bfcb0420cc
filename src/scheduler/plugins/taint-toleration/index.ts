// TaintToleration: a node's NoSchedule and NoExecute taints keep out pods
// that do not tolerate them (seed 001, "States and transitions": the
// not-ready and unreachable taints keep new pods off failing nodes); untolerated
// PreferNoSchedule taints lower the node's score.

import { tolerates, toleratesTaint } from "../../../api/core/node-matching.js";
import type { FilterPlugin, ScorePlugin } from "../../framework/interface.js";
import { MAX_NODE_SCORE, unresolvable } from "../../framework/interface.js";

export const NAME = "TaintToleration";

export { toleratesTaint, tolerates };

export const taintToleration: FilterPlugin & ScorePlugin = {
  name: NAME,
  events: ["NodeAdd", "NodeTaintChange"],
  weight: 3,
  filter(_state, pod, node) {
    const tolerations = pod.pod.spec?.tolerations;
    for (const taint of node.hardTaints) {
      if (!tolerates(tolerations, taint)) return unresolvable(NAME, `node(s) had untolerated taint {${taint.key ?? ""}: ${taint.value ?? ""}}`);
    }
    return undefined;
  },
  score(_state, pod, node) {
    let count = 0;
    for (const taint of node.preferNoScheduleTaints) if (!tolerates(pod.pod.spec?.tolerations, taint)) count++;
    return count;
  },
  /** Fewer intolerable PreferNoSchedule taints is better (upstream's reverse normalization). */
  normalize(scores) {
    const max = Math.max(0, ...scores);
    for (let i = 0; i < scores.length; i++) scores[i] = max === 0 ? MAX_NODE_SCORE : MAX_NODE_SCORE - (scores[i]! * MAX_NODE_SCORE) / max;
  },
};
