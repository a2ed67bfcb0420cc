// customresourcedefinitions (apiextensions.<suffix>/v1, cluster-scoped):
// upstream's defaults (listKind, singular, conversion None), a create starts
// with no status but the storage version in storedVersions, the first delete
// holds the definition with the cleanup finalizer and a Terminating
// condition until the API server has deleted every object of the kind
// (src/apiserver/crd/). Served as JSON only (see ./schemas.ts).

import type { Naming } from "../../machinery/naming.js";
import { formatTimestamp } from "../../machinery/index.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { status } from "../subresources/index.js";
import { APIEXTENSIONS_V1 } from "./schemas.js";
import type { CustomResourceDefinition, CustomResourceDefinitionCondition } from "./types.js";
import { validateCrd, validateCrdStatus, validateCrdUpdate } from "./validation.js";

/** The finalizer that holds a terminating definition until its objects are gone. */
export function cleanupFinalizer(naming: Naming): string {
  return `customresourcecleanup.${naming.apiextensionsGroup}`;
}

export function defaultCrd(crd: CustomResourceDefinition): void {
  const spec = (crd.spec ??= {});
  const names = (spec.names ??= {});
  if (names.kind && !names.listKind) names.listKind = `${names.kind}List`;
  if (names.kind && !names.singular) names.singular = names.kind.toLowerCase();
  spec.conversion ??= { strategy: "None" };
  if (spec.conversion.strategy === "Webhook" && spec.conversion.webhook !== undefined) {
    spec.conversion.webhook.conversionReviewVersions ??= ["v1beta1"];
  }
  for (const v of spec.versions ?? []) for (const c of v.additionalPrinterColumns ?? []) c.priority ??= 0;
}

/** Set (or replace) one condition, moving lastTransitionTime only when its status changes. */
export function setCondition(crd: CustomResourceDefinition, condition: CustomResourceDefinitionCondition, now: Date): void {
  const conditions = ((crd.status ??= {}).conditions ??= []);
  const at = conditions.findIndex((c) => c.type === condition.type);
  const old = at >= 0 ? conditions[at] : undefined;
  const next = { ...condition, lastTransitionTime: old !== undefined && old.status === condition.status ? old.lastTransitionTime ?? formatTimestamp(now) : formatTimestamp(now) };
  if (at >= 0) conditions[at] = next;
  else conditions.push(next);
}

export function conditionOf(crd: CustomResourceDefinition, type: string): CustomResourceDefinitionCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

export function customResourceDefinitions(naming: Naming): ResourceDefinition {
  const finalizer = cleanupFinalizer(naming);
  return defineResource<CustomResourceDefinition>({
    group: naming.apiextensionsGroup,
    versions: ["v1"],
    resource: "customresourcedefinitions",
    singular: "customresourcedefinition",
    kind: "CustomResourceDefinition",
    namespaced: false,
    shortNames: ["crd", "crds"],
    categories: ["api-extensions"],
    schema: `${APIEXTENSIONS_V1}.CustomResourceDefinition`,
    protobuf: false,
    subresources: [status<CustomResourceDefinition>({ validate: (obj) => validateCrdStatus(obj) })],
    defaults: defaultCrd,
    prepareForCreate(obj) {
      const storage = obj.spec?.versions?.find((v) => v.storage)?.name;
      obj.status = { acceptedNames: { plural: "", kind: "" }, storedVersions: storage !== undefined ? [storage] : [] };
      if (obj.status.storedVersions!.length === 0) delete obj.status.storedVersions;
    },
    prepareForUpdate(obj, old) {
      // Status is the status subresource's (its declaration keeps it on main writes); a new storage version joins storedVersions.
      obj.status ??= structuredClone(old.status ?? {});
      const storage = obj.spec?.versions?.find((v) => v.storage)?.name;
      const stored = (obj.status.storedVersions ??= []);
      if (storage !== undefined && !stored.includes(storage)) stored.push(storage);
    },
    validate: (obj, ctx) => validateCrd(obj, ctx.naming),
    validateUpdate: (obj, old, ctx) => validateCrdUpdate(obj, old, ctx.naming),
    // The first delete adds the cleanup finalizer (and so always holds), as upstream's CRD REST does.
    pendingFinalizers: (obj) => (obj.metadata.deletionTimestamp ? [] : [finalizer]),
    prepareForDelete(obj, ctx) {
      const finalizers = (obj.metadata.finalizers ??= []);
      if (!finalizers.includes(finalizer)) finalizers.push(finalizer);
      setCondition(obj, { type: "Terminating", status: "True", reason: "InstanceDeletionPending", message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon" }, ctx.now);
    },
  });
}
