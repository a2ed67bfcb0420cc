// The owner's selector as a workload controller reads it; owner references
// as every controller writes and reads them.

import { selectorFromLabelSelector, type LabelSelector, type Selector } from "../../machinery/index.js";

export { controllerOf, controllerRef } from "../resources.js";

/** The owner's spec.selector as a Selector; one that cannot be parsed (validation prevents it) selects nothing. */
export function selectorOf(owner: { spec?: { selector?: LabelSelector | null } }): Selector {
  try {
    return selectorFromLabelSelector(owner.spec?.selector);
  } catch {
    return selectorFromLabelSelector(null);
  }
}
