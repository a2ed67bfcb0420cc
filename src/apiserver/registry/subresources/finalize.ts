// `finalize` (namespaces): a PUT there changes only .spec.finalizers
// (upstream's namespaces/finalize), checked by the kind's validateUpdate.

import type { ApiObject } from "../../../machinery/index.js";
import { onlyMoving } from "./strategy.js";
import type { Subresource } from "./subresource.js";

export function finalize<T extends ApiObject>(): Subresource<T> {
  return {
    name: "finalize",
    verbs: ["update"],
    prepareUpdate: (input, current) => onlyMoving(current, input, ["spec", "finalizers"]),
  };
}
