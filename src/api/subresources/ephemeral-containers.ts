// `ephemeralcontainers` (pods): writes there change only
// .spec.ephemeralContainers (upstream's dropNonEphemeralContainerUpdates)
// and are checked by the kind's rule in place of validateUpdate (which keeps
// the main resource from touching them).

import type { Subresource } from "../resource.js";
import type { ApiObject, FieldError } from "../../machinery/index.js";
import { onlyMoving } from "./only-moving.js";

export function ephemeralContainers<T extends ApiObject>(validate: (obj: T, old: T) => FieldError[]): Subresource<T> {
  return {
    name: "ephemeralcontainers",
    verbs: ["get", "patch", "update"],
    recordsManager: true,
    prepareUpdate: (input, current) => onlyMoving(current, input, ["spec", "ephemeralContainers"]),
    validate: (obj, old) => validate(obj, old),
  };
}
