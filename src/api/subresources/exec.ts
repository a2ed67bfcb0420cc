// `exec`, `attach` and `portforward` (pods), connect subresources: an HTTP/1.1 Upgrade (GET
// or POST) carried to the pod's node agent (served by
// src/apiserver/handlers/pod-exec.ts). Reached without an Upgrade they
// answer 400, as upstream.

import type { Subresource } from "../resource.js";
import type { ApiObject } from "../../machinery/index.js";

function connect<T extends ApiObject>(name: string, optionsKind: string): Subresource<T> {
  return { name, verbs: ["create", "get"], responseKind: { group: "", version: "v1", kind: optionsKind }, connect: true };
}

export function exec<T extends ApiObject>(): Subresource<T> {
  return connect("exec", "PodExecOptions");
}

export function attach<T extends ApiObject>(): Subresource<T> {
  return connect("attach", "PodAttachOptions");
}

/** kubectl port-forward (PodPortForwardOptions: `ports`), carried to the agent's /portForward/NS/POD. */
export function portforward<T extends ApiObject>(): Subresource<T> {
  return connect("portforward", "PodPortForwardOptions");
}
