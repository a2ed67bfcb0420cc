// validatingadmissionpolicies and validatingadmissionpolicybindings
// (admissionregistration.<suffix>/v1, cluster-scoped): upstream's defaults
// (failurePolicy Fail, matchPolicy Equivalent, empty selectors, scope '*')
// and the validation of their fields, expressions compiled on write.

import { field, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { validateLabelSelector } from "../apps/workload.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { ADMISSIONREGISTRATION_V1 } from "./schemas.js";
import type { MatchResources, NamedRuleWithOperations, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from "./types.js";
import { validateExpression as expression, validateRule } from "./webhook-configurations.js";

const ACTIONS = ["Audit", "Deny", "Warn"];
const REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"];
const NOT_FOUND_ACTIONS = ["Allow", "Deny"];

function defaultMatch(m: MatchResources | undefined): void {
  if (typeof m !== "object" || m === null) return;
  m.namespaceSelector ??= {};
  m.objectSelector ??= {};
  m.matchPolicy ??= "Equivalent";
  for (const r of [...(m.resourceRules ?? []), ...(m.excludeResourceRules ?? [])]) if (typeof r === "object" && r !== null) r.scope ??= "*";
}

function validateMatch(m: MatchResources | undefined, path: string, required: boolean): FieldError[] {
  if (m == null) return required ? [field.required(path, "")] : [];
  const errs: FieldError[] = [];
  const rules = (list: NamedRuleWithOperations[] | undefined, p: string) => (Array.isArray(list) ? list : []).forEach((r, i) => errs.push(...validateRule(r ?? {}, `${p}[${i}]`)));
  if (required && (!Array.isArray(m.resourceRules) || m.resourceRules.length === 0)) errs.push(field.required(`${path}.resourceRules`, ""));
  rules(m.resourceRules, `${path}.resourceRules`);
  rules(m.excludeResourceRules, `${path}.excludeResourceRules`);
  errs.push(...validateLabelSelector(m.namespaceSelector, `${path}.namespaceSelector`), ...validateLabelSelector(m.objectSelector, `${path}.objectSelector`));
  if (m.matchPolicy != null && !["Equivalent", "Exact"].includes(m.matchPolicy)) errs.push(field.notSupported(`${path}.matchPolicy`, m.matchPolicy, ["Equivalent", "Exact"]));
  return errs;
}

function validatePolicy(p: ValidatingAdmissionPolicy): FieldError[] {
  const spec = p.spec;
  if (typeof spec !== "object" || spec === null) return [field.required("spec", "")];
  const errs: FieldError[] = [];
  if (spec.paramKind != null) {
    if (!spec.paramKind.kind) errs.push(field.required("spec.paramKind.kind", ""));
    if (!spec.paramKind.apiVersion) errs.push(field.required("spec.paramKind.apiVersion", ""));
  }
  errs.push(...validateMatch(spec.matchConstraints, "spec.matchConstraints", true));
  const validations = Array.isArray(spec.validations) ? spec.validations : [];
  const annotations = Array.isArray(spec.auditAnnotations) ? spec.auditAnnotations : [];
  if (validations.length === 0 && annotations.length === 0) errs.push(field.required("spec.validations", "validations or auditAnnotations must contain at least one item"));
  validations.forEach((v, i) => {
    errs.push(...expression(v?.expression, `spec.validations[${i}].expression`));
    if (v?.messageExpression != null) errs.push(...expression(v.messageExpression, `spec.validations[${i}].messageExpression`));
    if (v?.reason != null && !REASONS.includes(v.reason)) errs.push(field.notSupported(`spec.validations[${i}].reason`, v.reason, REASONS));
    if (typeof v?.message === "string" && /[\r\n]/.test(v.message)) errs.push(field.invalid(`spec.validations[${i}].message`, v.message, "message must not contain line breaks"));
  });
  annotations.forEach((a, i) => {
    if (!a?.key) errs.push(field.required(`spec.auditAnnotations[${i}].key`, ""));
    errs.push(...expression(a?.valueExpression, `spec.auditAnnotations[${i}].valueExpression`));
  });
  (Array.isArray(spec.variables) ? spec.variables : []).forEach((v, i) => {
    if (!v?.name) errs.push(field.required(`spec.variables[${i}].name`, ""));
    else if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v.name)) errs.push(field.invalid(`spec.variables[${i}].name`, v.name, "name is not a valid CEL identifier"));
    errs.push(...expression(v?.expression, `spec.variables[${i}].expression`));
  });
  (Array.isArray(spec.matchConditions) ? spec.matchConditions : []).forEach((c, i) => {
    if (!c?.name) errs.push(field.required(`spec.matchConditions[${i}].name`, ""));
    errs.push(...expression(c?.expression, `spec.matchConditions[${i}].expression`));
  });
  if (spec.failurePolicy != null && !["Fail", "Ignore"].includes(spec.failurePolicy)) errs.push(field.notSupported("spec.failurePolicy", spec.failurePolicy, ["Fail", "Ignore"]));
  return errs;
}

function validateBinding(b: ValidatingAdmissionPolicyBinding): FieldError[] {
  const spec = b.spec;
  if (typeof spec !== "object" || spec === null) return [field.required("spec", "")];
  const errs: FieldError[] = [];
  if (!spec.policyName) errs.push(field.required("spec.policyName", ""));
  const actions = Array.isArray(spec.validationActions) ? spec.validationActions : [];
  if (actions.length === 0) errs.push(field.required("spec.validationActions", "at least one validation action is required"));
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (seen.has(a)) errs.push(field.duplicate(`spec.validationActions[${i}]`, a));
    seen.add(a);
    if (!ACTIONS.includes(a)) errs.push(field.notSupported(`spec.validationActions[${i}]`, a, ACTIONS));
  });
  if (seen.has("Deny") && seen.has("Warn")) errs.push(field.invalid("spec.validationActions", actions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"));
  const ref = spec.paramRef;
  if (ref != null) {
    if ((ref.name != null && ref.name !== "") === (ref.selector != null)) errs.push(field.forbidden("spec.paramRef.name", "one of `name` or `selector` must be set"));
    errs.push(...validateLabelSelector(ref.selector, "spec.paramRef.selector"));
    if (ref.parameterNotFoundAction == null) errs.push(field.required("spec.paramRef.parameterNotFoundAction", ""));
    else if (!NOT_FOUND_ACTIONS.includes(ref.parameterNotFoundAction)) errs.push(field.notSupported("spec.paramRef.parameterNotFoundAction", ref.parameterNotFoundAction, NOT_FOUND_ACTIONS));
  }
  errs.push(...validateMatch(spec.matchResources, "spec.matchResources", false));
  return errs;
}

export function validatingAdmissionPolicies(naming: Naming): ResourceDefinition {
  return defineResource<ValidatingAdmissionPolicy>({
    group: naming.admissionregistrationGroup,
    versions: ["v1"],
    resource: "validatingadmissionpolicies",
    singular: "validatingadmissionpolicy",
    kind: "ValidatingAdmissionPolicy",
    namespaced: false,
    categories: ["api-extensions"],
    schema: `${ADMISSIONREGISTRATION_V1}.ValidatingAdmissionPolicy`,
    defaults(p) {
      if (typeof p.spec !== "object" || p.spec === null) return;
      p.spec.failurePolicy ??= "Fail";
      defaultMatch(p.spec.matchConstraints);
    },
    validate: validatePolicy,
    validateUpdate: validatePolicy,
    table: nameAgeTable<ValidatingAdmissionPolicy>({
      columns: [
        { name: "Validations", type: "integer", description: "The number of validations.", priority: 0 },
        { name: "ParamKind", type: "string", description: "The kind of the parameters.", priority: 0 },
      ],
      cells: (p) => [Array.isArray(p.spec?.validations) ? p.spec.validations.length : 0, p.spec?.paramKind ? `${p.spec.paramKind.apiVersion}/${p.spec.paramKind.kind}` : "<unset>"],
    }),
  });
}

export function validatingAdmissionPolicyBindings(naming: Naming): ResourceDefinition {
  return defineResource<ValidatingAdmissionPolicyBinding>({
    group: naming.admissionregistrationGroup,
    versions: ["v1"],
    resource: "validatingadmissionpolicybindings",
    singular: "validatingadmissionpolicybinding",
    kind: "ValidatingAdmissionPolicyBinding",
    namespaced: false,
    categories: ["api-extensions"],
    schema: `${ADMISSIONREGISTRATION_V1}.ValidatingAdmissionPolicyBinding`,
    defaults(b) {
      if (typeof b.spec === "object" && b.spec !== null) defaultMatch(b.spec.matchResources);
    },
    validate: validateBinding,
    validateUpdate: validateBinding,
    table: nameAgeTable<ValidatingAdmissionPolicyBinding>({
      columns: [
        { name: "PolicyName", type: "string", description: "The policy bound.", priority: 0 },
        { name: "ParamRef", type: "string", description: "The parameters.", priority: 0 },
      ],
      cells: (b) => [b.spec?.policyName ?? "", b.spec?.paramRef ? `${b.spec.paramRef.namespace ? `${b.spec.paramRef.namespace}/` : ""}${b.spec.paramRef.name ?? "*"}` : "<unset>"],
    }),
  });
}
