// CustomResourceDefinition validation with upstream's rules and messages:
// the name is <plural>.<group>, the group a domain with a dot, names DNS-1035
// labels, exactly one storage version, schemas required and structural,
// printer columns, subresources and conversion well formed; on update the
// names of an established definition... stay free as upstream's v1 allows,
// the scope is immutable, and stored versions keep the storage version.

import { field, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { isDNS1035Label, isDNS1123Subdomain } from "../../machinery/validation/names.js";
import { parseJsonPath } from "./jsonpath.js";
import { hasDefaults, isObject } from "./json-schema.js";
import { validateSchema } from "./structural.js";
import { checkRules } from "./cel.js";
import type { CustomResourceColumnDefinition, CustomResourceDefinition, CustomResourceDefinitionNames, CustomResourceDefinitionSpec, CustomResourceSubresources } from "./types.js";

const COLUMN_TYPES = ["boolean", "date", "integer", "number", "string"];
const COLUMN_FORMATS = ["byte", "date", "date-time", "double", "float", "int32", "int64", "name", "password"];

/** The groups of the product's own API (upstream's protected community groups: k8s.io, kubernetes.io and below). */
function isProtectedGroup(group: string, naming: Naming): boolean {
  return [naming.groupSuffix, naming.keyDomain].some((d) => group === d || group.endsWith(`.${d}`));
}

/** Upstream's API approval: a CRD of a protected group carries `api-approved.<key domain>` with a URL or a reason starting "unapproved". */
function validateApproval(crd: CustomResourceDefinition, old: CustomResourceDefinition | undefined, naming: Naming): FieldError[] {
  if (!isProtectedGroup(crd.spec?.group ?? "", naming)) return [];
  const key = `api-approved.${naming.keyDomain}`;
  const state = (c: CustomResourceDefinition) => {
    const v = c.metadata.annotations?.[key] ?? "";
    if (v === "") return "missing";
    if (v.startsWith("unapproved")) return "bypassed";
    try {
      const u = new URL(v);
      return u.host !== "" && u.protocol !== "" ? "approved" : "invalid";
    } catch {
      return "invalid";
    }
  };
  const now = state(crd);
  if (old !== undefined && state(old) === now) return [];
  const path = `metadata.annotations[${key}]`;
  if (now === "missing") return [field.required(path, `protected groups must have approval annotation "${key}", see https://github.com/kubernetes/enhancements/pull/1111`)];
  if (now === "invalid") {
    return [field.invalid(path, crd.metadata.annotations?.[key], `protected groups must have approval annotation "${key}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`)];
  }
  return [];
}

export function validateCrd(crd: CustomResourceDefinition, naming: Naming, old?: CustomResourceDefinition): FieldError[] {
  const spec = crd.spec ?? {};
  const errs: FieldError[] = [];
  const name = crd.metadata.name ?? "";
  if (name !== "" && name !== `${spec.names?.plural ?? ""}.${spec.group ?? ""}`) errs.push(field.invalid("metadata.name", name, `must be spec.names.plural+"."+spec.group`));
  errs.push(...validateSpec(spec));
  errs.push(...validateNames(crd.status?.acceptedNames ?? {}, "status.acceptedNames"));
  errs.push(...validateStoredVersions(crd));
  errs.push(...validateApproval(crd, old, naming));
  return errs;
}

export function validateCrdUpdate(crd: CustomResourceDefinition, old: CustomResourceDefinition, naming: Naming): FieldError[] {
  const errs = validateCrd(crd, naming, old);
  if (old.spec?.scope !== undefined && crd.spec?.scope !== old.spec.scope) errs.push(field.immutable("spec.scope", crd.spec?.scope));
  return errs;
}

export function validateCrdStatus(crd: CustomResourceDefinition): FieldError[] {
  return [...validateNames(crd.status?.acceptedNames ?? {}, "status.acceptedNames"), ...validateStoredVersions(crd)];
}

function validateStoredVersions(crd: CustomResourceDefinition): FieldError[] {
  const stored = crd.status?.storedVersions;
  if (stored === undefined) return [];
  const path = "status.storedVersions";
  if (stored.length === 0) return [field.invalid(path, stored, "must have at least one stored version")];
  const versions = crd.spec?.versions ?? [];
  const errs: FieldError[] = [];
  const storage = versions.find((v) => v.storage)?.name;
  if (storage !== undefined && !stored.includes(storage)) errs.push(field.invalid(path, stored, `must have the storage version ${storage}`));
  stored.forEach((v, i) => {
    if (!versions.some((x) => x.name === v)) errs.push(field.invalid(`${path}[${i}]`, v, "must appear in spec.versions"));
  });
  return errs;
}

function validateSpec(spec: CustomResourceDefinitionSpec): FieldError[] {
  const errs: FieldError[] = [];
  const group = spec.group ?? "";
  if (group === "") errs.push(field.required("spec.group", ""));
  else if (isDNS1123Subdomain(group).length > 0) errs.push(field.invalid("spec.group", group, isDNS1123Subdomain(group).join(",")));
  else if (group.split(".").length < 2) errs.push(field.invalid("spec.group", group, "should be a domain with at least one dot"));
  if (spec.scope === undefined || spec.scope === "") errs.push(field.required("spec.scope", ""));
  else if (spec.scope !== "Cluster" && spec.scope !== "Namespaced") errs.push(field.notSupported("spec.scope", spec.scope, ["Cluster", "Namespaced"]));

  const versions = spec.versions ?? [];
  if (versions.length === 0) errs.push(field.required("spec.versions", "must have at least one version"));
  const seen = new Set<string>();
  let unique = true;
  let storageCount = 0;
  versions.forEach((v, i) => {
    const path = `spec.versions[${i}]`;
    if (v.storage) storageCount++;
    if (seen.has(v.name ?? "")) unique = false;
    seen.add(v.name ?? "");
    const nameErrs = isDNS1035Label(v.name ?? "");
    if (nameErrs.length > 0) errs.push(field.invalid(`${path}.name`, v.name ?? "", nameErrs.join(",")));
    if (v.deprecationWarning !== undefined) {
      if (!v.deprecated) errs.push(field.invalid(`${path}.deprecationWarning`, v.deprecationWarning, "can only be set for deprecated versions"));
      else if (v.deprecationWarning.length > 256) errs.push(field.invalid(`${path}.deprecationWarning`, v.deprecationWarning, "must be <= 256 characters long"));
    }
    const schema = v.schema?.openAPIV3Schema;
    const statusEnabled = v.subresources?.status !== undefined && v.subresources.status !== null;
    if (schema === undefined) errs.push(field.required(`${path}.schema.openAPIV3Schema`, "schemas are required"));
    else {
      const schemaErrs = validateSchema(schema, `${path}.schema.openAPIV3Schema`, { statusEnabled });
      errs.push(...schemaErrs, ...(schemaErrs.length === 0 ? checkRules(schema, `${path}.schema.openAPIV3Schema`) : []));
    }
    errs.push(...validateSubresources(v.subresources, `${path}.subresources`));
    (v.additionalPrinterColumns ?? []).forEach((c, j) => errs.push(...validateColumn(c, `${path}.additionalPrinterColumns[${j}]`)));
    errs.push(...validateSelectableFields(v.selectableFields ?? [], schema as Record<string, unknown> | undefined, `${path}.selectableFields`));
  });
  if (!unique) errs.push(field.invalid("spec.versions", versions, "must contain unique version names"));
  if (versions.length > 0 && storageCount !== 1) errs.push(field.invalid("spec.versions", versions, "must have exactly one version marked as storage version"));
  if (spec.preserveUnknownFields === true) {
    errs.push(field.invalid("spec.preserveUnknownFields", true, "cannot set to true, set x-preserve-unknown-fields to true in spec.versions[*].schema instead"));
    if (versions.some((v) => hasDefaults(v.schema?.openAPIV3Schema))) errs.push(field.invalid("spec.preserveUnknownFields", true, "must be false in order to use defaults in the schema"));
  }

  const names = spec.names ?? {};
  if (!names.plural) errs.push(field.required("spec.names.plural", ""));
  if (!names.singular) errs.push(field.required("spec.names.singular", ""));
  if (!names.kind) errs.push(field.required("spec.names.kind", ""));
  if (!names.listKind) errs.push(field.required("spec.names.listKind", ""));
  errs.push(...validateNames(names, "spec.names"));

  const conversion = spec.conversion;
  if (conversion !== undefined) {
    const strategy = conversion.strategy ?? "";
    if (strategy === "") errs.push(field.required("spec.conversion.strategy", ""));
    else if (strategy !== "None" && strategy !== "Webhook") errs.push(field.notSupported("spec.conversion.strategy", strategy, ["None", "Webhook"]));
    if (strategy === "Webhook") {
      const cc = conversion.webhook?.clientConfig;
      if (cc === undefined) errs.push(field.required("spec.conversion.webhookClientConfig", "required when strategy is set to Webhook"));
      else if ((cc.url === undefined) === (cc.service === undefined)) errs.push(field.required("spec.conversion.webhookClientConfig", "exactly one of url or service is required"));
      const reviews = conversion.webhook?.conversionReviewVersions ?? [];
      if (reviews.length === 0) errs.push(field.required("spec.conversion.conversionReviewVersions", ""));
      else if (!reviews.some((v) => v === "v1" || v === "v1beta1")) {
        errs.push(field.invalid("spec.conversion.conversionReviewVersions", reviews, "must include at least one of v1, v1beta1"));
      }
    } else if (conversion.webhook !== undefined) {
      errs.push(field.forbidden("spec.conversion.webhookClientConfig", "should not be set when strategy is not set to Webhook"));
    }
  }
  return errs;
}

export function validateNames(names: CustomResourceDefinitionNames, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const label = (value: string | undefined, p: string, mixed = false) => {
    if (!value) return;
    const e = isDNS1035Label(mixed ? value.toLowerCase() : value);
    if (e.length > 0) errs.push(field.invalid(p, value, (mixed ? "may have mixed case, but should otherwise match: " : "") + e.join(",")));
  };
  label(names.plural, `${path}.plural`);
  label(names.singular, `${path}.singular`);
  label(names.kind, `${path}.kind`, true);
  label(names.listKind, `${path}.listKind`, true);
  (names.shortNames ?? []).forEach((s, i) => {
    const e = isDNS1035Label(s);
    if (e.length > 0) errs.push(field.invalid(`${path}.shortNames[${i}]`, s, e.join(",")));
  });
  if (names.kind && names.kind === names.listKind) errs.push(field.invalid(`${path}.listKind`, names.listKind, "kind and listKind may not be the same"));
  (names.categories ?? []).forEach((c, i) => {
    const e = isDNS1035Label(c);
    if (e.length > 0) errs.push(field.invalid(`${path}.categories[${i}]`, c, e.join(",")));
  });
  return errs;
}

function validateColumn(col: CustomResourceColumnDefinition, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!col.name) errs.push(field.required(`${path}.name`, ""));
  if (!col.type) errs.push(field.required(`${path}.type`, `must be one of ${COLUMN_TYPES.join(",")}`));
  else if (!COLUMN_TYPES.includes(col.type)) errs.push(field.invalid(`${path}.type`, col.type, `must be one of ${COLUMN_TYPES.join(",")}`));
  if (col.format && !COLUMN_FORMATS.includes(col.format)) errs.push(field.invalid(`${path}.format`, col.format, `must be one of ${COLUMN_FORMATS.join(",")}`));
  if (!col.jsonPath) errs.push(field.required(`${path}.JSONPath`, ""));
  else errs.push(...simplePath(col.jsonPath, `${path}.JSONPath`));
  return errs;
}

function simplePath(s: string, path: string): FieldError[] {
  if (s === "") return [field.invalid(path, s, "must not be empty")];
  if (!s.startsWith(".")) return [field.invalid(path, s, "must be a simple json path starting with .")];
  if (s !== "." && parseJsonPath(s) === undefined) return [field.invalid(path, s, "must be a json path in the dot notation")];
  return [];
}

/** At most 8 selectable fields, each a distinct path to a string, integer or boolean field of the schema (upstream 1.30+). */
function validateSelectableFields(fields: readonly { jsonPath?: string }[], schema: Record<string, unknown> | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (fields.length > 8) errs.push(field.tooMany(path, fields.length, 8));
  const seen = new Set<string>();
  fields.forEach((f, j) => {
    const p = `${path}[${j}].jsonPath`;
    if (!f.jsonPath) return errs.push(field.required(p, ""));
    const bad = simplePath(f.jsonPath, p);
    if (bad.length > 0) return errs.push(...bad);
    if (seen.has(f.jsonPath)) errs.push(field.duplicate(p, f.jsonPath));
    seen.add(f.jsonPath);
    if (schema === undefined) return;
    let node: Record<string, unknown> | undefined = schema;
    for (const name of f.jsonPath.slice(1).split(".")) node = (node?.["properties"] as Record<string, Record<string, unknown>> | undefined)?.[name];
    if (node === undefined) errs.push(field.invalid(p, f.jsonPath, "is an invalid path: does not refer to a field in the schema"));
    else if (!["string", "integer", "boolean"].includes(String(node["type"]))) {
      errs.push(field.invalid(p, f.jsonPath, "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."));
    }
  });
  return errs;
}

function validateSubresources(sub: CustomResourceSubresources | undefined, path: string): FieldError[] {
  const scale = sub?.scale;
  if (scale === undefined || scale === null) return [];
  const errs: FieldError[] = [];
  if (!scale.specReplicasPath) errs.push(field.required(`${path}.scale.specReplicasPath`, ""));
  else if (!scale.specReplicasPath.startsWith(".spec.")) errs.push(field.invalid(`${path}.scale.specReplicasPath`, scale.specReplicasPath, "should be a json path under .spec"));
  else errs.push(...simplePath(scale.specReplicasPath, `${path}.scale.specReplicasPath`));
  if (!scale.statusReplicasPath) errs.push(field.required(`${path}.scale.statusReplicasPath`, ""));
  else if (!scale.statusReplicasPath.startsWith(".status.")) errs.push(field.invalid(`${path}.scale.statusReplicasPath`, scale.statusReplicasPath, "should be a json path under .status"));
  else errs.push(...simplePath(scale.statusReplicasPath, `${path}.scale.statusReplicasPath`));
  const sel = scale.labelSelectorPath;
  if (sel !== undefined && sel !== "" && !sel.startsWith(".spec.") && !sel.startsWith(".status.")) {
    errs.push(field.invalid(`${path}.scale.labelSelectorPath`, sel, "should be a json path under either .spec or .status"));
  }
  return errs;
}

/** The status subresource a version asks for (`subresources.status: {}`). */
export function statusEnabled(sub: CustomResourceSubresources | undefined): boolean {
  return sub !== undefined && isObject(sub.status);
}
