// `binding` (pods): a POST of a Binding assigns the object to a node
// (served by src/apiserver/handlers/subresources/binding.ts). The kind's
// binder checks the target and sets it; the update rules of the main
// resource do not apply, since the client never wrote the object.

import type { ResourceDefinition, Subresource } from "../resource.js";
import type { ApiObject, FieldError } from "../../machinery/index.js";

/** Checks `target` for `obj` and sets it on `obj` in place; errors refuse the binding. */
export type Binder<T> = (obj: T, target: { kind?: string; name?: string }) => FieldError[];

interface BindingSubresource<T extends ApiObject> extends Subresource<T> {
  readonly bind: Binder<T>;
}

export function binding<T extends ApiObject>(bind: Binder<T>): Subresource<T> {
  const declaration: BindingSubresource<T> = {
    name: "binding",
    verbs: ["create"],
    responseKind: { group: "", version: "v1", kind: "Binding" },
    // The binder did the checks.
    validate: () => [],
    bind,
  };
  return declaration;
}

/** The kind's binder, when it has a binding subresource. */
export function binderOf(def: ResourceDefinition): Binder<ApiObject> | undefined {
  return (def.subresources?.find((s) => s.name === "binding") as BindingSubresource<ApiObject> | undefined)?.bind;
}
