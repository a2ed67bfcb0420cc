// `log` (pods): GET streams a container's log from the pod's node agent
// (handlers/pod-log.ts).

import type { ApiObject } from "../../../machinery/index.js";
import { handlePodLog } from "../../handlers/pod-log.js";
import type { Subresource } from "./subresource.js";

export function log<T extends ApiObject>(): Subresource<T> {
  return { name: "log", verbs: ["get"], handler: { get: handlePodLog } };
}
