// `finalize` (namespaces): a PUT there changes only .spec.finalizers
// (upstream's namespaces/finalize), checked by the kind's validateUpdate.

import type { Subresource } from "../resource.js";
import type { ApiObject } from "../../machinery/index.js";
import { onlyMoving } from "./only-moving.js";

export function finalize<T extends ApiObject>(): Subresource<T> {
  return {
    name: "finalize",
    verbs: ["update"],
    prepareUpdate: (input, current) => onlyMoving(current, input, ["spec", "finalizers"]),
  };
}
