// A toy subresource, for tests only: `widgets/NAME/color` reads the widget
// and writes only its .spec.color (GET and PUT; a PATCH is a 405). It is the
// whole of what adding a subresource takes besides one line in the kind's
// list (handlers/subresources/subresources.test.ts shows it served).

import type { Subresource } from "../../api/resource.js";
import { onlyMoving } from "../../api/subresources/index.js";
import type { ApiObject } from "../../machinery/index.js";

export function color<T extends ApiObject>(): Subresource<T> {
  return {
    name: "color",
    verbs: ["get", "update"],
    prepareUpdate: (input, current) => onlyMoving(current, input, ["spec", "color"]),
  };
}
