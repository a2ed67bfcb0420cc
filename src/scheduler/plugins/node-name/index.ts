// NodeName: a pod that names its node (spec.nodeName) fits only there.

import type { FilterPlugin } from "../../framework/interface.js";
import { unresolvable } from "../../framework/interface.js";

export const NAME = "NodeName";
export const REASON = "node(s) didn't match the requested node name";
const FAIL = unresolvable(NAME, REASON);

export const nodeName: FilterPlugin = {
  name: NAME,
  events: ["NodeAdd"],
  filter: (_state, pod, node) => (pod.pod.spec?.nodeName && pod.pod.spec.nodeName !== node.name ? FAIL : undefined),
};
