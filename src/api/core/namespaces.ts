// namespaces: DNS-label names, the `kubernetes` finalizer in spec (kept as
// upstream spells it: the namespace controller and clients look for it),
// phase Active on create and Terminating once deleted; the store holds a
// terminating namespace until spec.finalizers is empty (namespaces/finalize).

import { field, isQualifiedName, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { finalize, status } from "../subresources/index.js";
import { nameAgeTable } from "../table-format.js";
import { CORE_V1 } from "./schemas.js";
import type { Namespace } from "./types.js";

/** upstream's FinalizerKubernetes: a protocol value, not a product name, so it is not renamed. */
export const NAMESPACE_FINALIZER = "kubernetes";
const STANDARD_FINALIZERS = new Set([NAMESPACE_FINALIZER, "orphan", "foregroundDeletion"]);

function validateFinalizers(ns: Namespace): FieldError[] {
  const errs: FieldError[] = [];
  (ns.spec?.finalizers ?? []).forEach((name, i) => {
    const path = `spec.finalizers[${i}]`;
    for (const msg of isQualifiedName(name)) errs.push(field.invalid(path, name, msg));
    if (!name.includes("/") && !STANDARD_FINALIZERS.has(name)) {
      errs.push(field.invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified"));
    }
  });
  return errs;
}

export function namespacesResource(naming: Naming): ResourceDefinition {
  const nameLabel = `${naming.keyDomain}/metadata.name`;
  return defineResource<Namespace>({
    group: "",
    versions: ["v1"],
    resource: "namespaces",
    singular: "namespace",
    kind: "Namespace",
    namespaced: false,
    shortNames: ["ns"],
    // No deletecollection, as upstream registers namespaces.
    verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
    schema: `${CORE_V1}.Namespace`,
    nameRule: "label",
    subresources: [finalize(), status()],

    defaults(ns) {
      // The immutable name label (upstream's kubernetes.io/metadata.name), so selectors can pick namespaces by name.
      if (ns.metadata.name) (ns.metadata.labels ??= {})[nameLabel] = ns.metadata.name;
    },
    prepareForCreate(ns) {
      ns.status = { phase: "Active" };
      const spec = (ns.spec ??= {});
      const finalizers = (spec.finalizers ??= []);
      if (!finalizers.includes(NAMESPACE_FINALIZER)) finalizers.push(NAMESPACE_FINALIZER);
    },
    validate: validateFinalizers,
    validateUpdate: validateFinalizers,
    pendingFinalizers: (ns) => ns.spec?.finalizers ?? [],
    prepareForDelete(ns) {
      ns.status = { ...(ns.status ?? {}), phase: "Terminating" };
    },

    table: nameAgeTable<Namespace>({
      columns: [{ name: "Status", type: "string", description: "The status of the namespace", priority: 0 }],
      cells: (ns) => [ns.status?.phase ?? ""],
    }),
    fieldSelectors: {
      "status.phase": (ns) => ns.status?.phase ?? "",
      name: (ns) => ns.metadata.name ?? "",
    },
  });
}
