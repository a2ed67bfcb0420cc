// `eviction` (pods): a POST of a policy/v1 (or v1beta1) Eviction deletes the
// pod unless a PodDisruptionBudget forbids it (served by
// src/apiserver/handlers/subresources/eviction.ts). `kubectl drain` finds it
// in discovery under pods and retries on its 429.

import type { Subresource } from "../resource.js";
import type { ApiObject } from "../../machinery/index.js";

export function eviction<T extends ApiObject>(): Subresource<T> {
  return {
    name: "eviction",
    verbs: ["create"],
    responseKind: { group: "policy", version: "v1", kind: "Eviction" },
    // The handler decides; the pod itself is deleted, not updated.
    validate: () => [],
  };
}
