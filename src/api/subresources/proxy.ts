// `proxy` (nodes): GET of a path on the node's agent, answered with the
// agent's reply (`/api/v1/nodes/NAME/proxy/stats/summary`; served by
// src/apiserver/handlers/node-proxy.ts). Only GET is served.

import type { Subresource } from "../resource.js";
import type { ApiObject } from "../../machinery/index.js";

export function proxy<T extends ApiObject>(): Subresource<T> {
  return { name: "proxy", verbs: ["get"] };
}
