// `scale`: the autoscaling/v1 Scale over a kind's replica count (KUBECTL.md
// "scale"), mapped by the kind's ScaleAccess. GET reads a Scale made from the
// object; PUT, PATCH and apply change only the replicas, through the main
// resource's update pipeline, recorded for the manager under "scale"
// (served by src/apiserver/handlers/subresources/scale.ts).

import type { ResourceDefinition, ScaleAccess, Subresource } from "../resource.js";
import type { ApiObject } from "../../machinery/index.js";

interface ScaleSubresource<T extends ApiObject> extends Subresource<T> {
  readonly access: ScaleAccess<T>;
}

export function scale<T extends ApiObject>(access: ScaleAccess<T>): Subresource<T> {
  const declaration: ScaleSubresource<T> = {
    name: "scale",
    verbs: ["get", "patch", "update"],
    responseKind: { group: "autoscaling", version: "v1", kind: "Scale" },
    recordsManager: true,
    access,
  };
  return declaration;
}

/** The kind's Scale mapping, when it has a scale subresource. */
export function scaleAccess(def: ResourceDefinition): ScaleAccess<ApiObject> | undefined {
  return (def.subresources?.find((s) => s.name === "scale") as ScaleSubresource<ApiObject> | undefined)?.access;
}
