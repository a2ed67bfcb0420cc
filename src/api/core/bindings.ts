// The top-level `bindings` resource (POST /api/v1/namespaces/NS/bindings):
// upstream's older form of pods/NAME/binding, the pod named by the
// Binding's metadata.name. Create-only and never stored (no store, no watch
// cache); the API server answers it with the pods/binding subresource's code
// (src/apiserver/handlers/subresources/binding.ts). The declaration serves
// discovery (`kubectl api-resources` lists it as upstream's does) and OpenAPI.

import { defineResource, type ResourceDefinition } from "../resource.js";
import { CORE_V1 } from "./schemas.js";

export const BINDINGS = "bindings";

export function bindingsResource(): ResourceDefinition {
  return defineResource({ group: "", versions: ["v1"], resource: BINDINGS, singular: "binding", kind: "Binding", namespaced: true, verbs: ["create"], schema: `${CORE_V1}.Binding` });
}
