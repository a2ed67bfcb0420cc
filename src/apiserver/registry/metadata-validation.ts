// Metadata rules every resource shares (upstream's ValidateObjectMeta):
// name or generateName, the declaration's name rule, namespace presence,
// labels, annotations, owner references and finalizers. Kinds add their own
// rules in their declarations.

import type { ResourceDefinition } from "../../api/resource.js";
import {
  field,
  isQualifiedName,
  isValidPathSegmentName,
  isValidPathSegmentPrefix,
  nameIsDNS1035Label,
  nameIsIPAddress,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  validateAnnotations,
  validateLabels,
  validateNamespaceName,
  type ApiObject,
  type FieldError,
  type NameValidator,
} from "../../machinery/index.js";

const NAME_RULES: Record<NonNullable<ResourceDefinition["nameRule"]>, NameValidator> = {
  subdomain: nameIsDNSSubdomain,
  label: nameIsDNSLabel,
  "dns1035-label": nameIsDNS1035Label,
  "path-segment": (name, prefix) => (prefix ? isValidPathSegmentPrefix(name) : isValidPathSegmentName(name)),
  "ip-address": nameIsIPAddress,
};

export function validateObjectMeta(def: ResourceDefinition, obj: ApiObject): FieldError[] {
  const meta = obj.metadata;
  const errs: FieldError[] = [];
  const rule = NAME_RULES[def.nameRule ?? "subdomain"];
  if (meta.generateName) for (const msg of rule(meta.generateName, true)) errs.push(field.invalid("metadata.generateName", meta.generateName, msg));
  if (!meta.name) errs.push(field.required("metadata.name", "name or generateName is required"));
  else for (const msg of rule(meta.name, false)) errs.push(field.invalid("metadata.name", meta.name, msg));
  if (def.namespaced) {
    if (!meta.namespace) errs.push(field.required("metadata.namespace", ""));
    else for (const msg of validateNamespaceName(meta.namespace, false)) errs.push(field.invalid("metadata.namespace", meta.namespace, msg));
  } else if (meta.namespace) {
    errs.push(field.forbidden("metadata.namespace", "not allowed on this type"));
  }
  errs.push(...validateLabels(meta.labels), ...validateAnnotations(meta.annotations));
  errs.push(...validateOwnerReferences(meta.ownerReferences));
  (meta.finalizers ?? []).forEach((finalizer, i) => {
    for (const msg of isQualifiedName(finalizer)) errs.push(field.invalid(`metadata.finalizers[${i}]`, finalizer, msg));
  });
  return errs;
}

export function validateObjectMetaUpdate(def: ResourceDefinition, obj: ApiObject, _old: ApiObject): FieldError[] {
  return validateObjectMeta(def, obj);
}

function validateOwnerReferences(refs: ApiObject["metadata"]["ownerReferences"]): FieldError[] {
  const errs: FieldError[] = [];
  let controllers = 0;
  (refs ?? []).forEach((ref, i) => {
    const path = `metadata.ownerReferences[${i}]`;
    if (!ref.apiVersion) errs.push(field.invalid(`${path}.apiVersion`, ref.apiVersion ?? "", "version must not be empty"));
    if (!ref.kind) errs.push(field.invalid(`${path}.kind`, ref.kind ?? "", "kind must not be empty"));
    if (!ref.name) errs.push(field.invalid(`${path}.name`, ref.name ?? "", "name must not be empty"));
    if (!ref.uid) errs.push(field.invalid(`${path}.uid`, ref.uid ?? "", "uid must not be empty"));
    if (ref.controller) controllers++;
  });
  if (controllers > 1) {
    errs.push(field.invalid("metadata.ownerReferences", refs, "Only one reference can have Controller set to true"));
  }
  return errs;
}
