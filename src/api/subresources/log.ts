// `log` (pods): GET streams a container's log from the pod's node agent
// (served by src/apiserver/handlers/pod-log.ts).

import type { Subresource } from "../resource.js";
import type { ApiObject } from "../../machinery/index.js";

export function log<T extends ApiObject>(): Subresource<T> {
  return { name: "log", verbs: ["get"] };
}
