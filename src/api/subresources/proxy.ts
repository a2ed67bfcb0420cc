// `proxy` (nodes, pods, services), upstream's connect subresource that
// carries any request, with the rest of its path, to a backend: the node's
// agent (or another port of the node), the pod's IP, one ready endpoint of
// the service. Served by src/apiserver/handlers/subresources/proxy.ts; plain
// requests of every method and HTTP/1.1 upgrades (WebSocket) alike.

import type { Subresource } from "../resource.js";
import type { ApiObject } from "../../machinery/index.js";

/** `optionsKind`: NodeProxyOptions, PodProxyOptions, ServiceProxyOptions (what discovery names). */
export function proxy<T extends ApiObject>(optionsKind: string): Subresource<T> {
  return { name: "proxy", verbs: ["create", "delete", "get", "patch", "update"], responseKind: { group: "", version: "v1", kind: optionsKind }, proxy: true };
}
