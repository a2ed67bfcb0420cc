// Upstream's RBAC validation (pkg/apis/rbac/validation): policy rules,
// role references and subjects, shared by the four kinds.

import { field, isValidPathSegmentName, type FieldError } from "../../machinery/index.js";
import type { LabelSelector } from "../../machinery/index.js";
import { validateLabelSelector } from "../apps/workload.js";
import type { ClusterRole, PolicyRule, RoleBinding, RoleRef, Subject } from "./types.js";

/** Upstream's ValidatePolicyRule; namespaced (Role) rules may not name non-resource URLs. */
export function validateRules(rules: readonly PolicyRule[] | null | undefined, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  (rules ?? []).forEach((rule, i) => {
    const path = `rules[${i}]`;
    if ((rule.verbs ?? []).length === 0) errs.push(field.required(`${path}.verbs`, "verbs must contain at least one value"));
    const urls = rule.nonResourceURLs ?? [];
    if (urls.length > 0) {
      if (namespaced) errs.push(field.invalid(`${path}.nonResourceURLs`, urls, "namespaced rules cannot apply to non-resource URLs"));
      if ((rule.apiGroups ?? []).length > 0 || (rule.resources ?? []).length > 0) {
        errs.push(field.invalid(`${path}.nonResourceURLs`, urls, "rules cannot apply to both regular resources and non-resource URLs"));
      }
      return;
    }
    if ((rule.apiGroups ?? []).length === 0) errs.push(field.required(`${path}.apiGroups`, "resource rules must supply at least one api group"));
    if ((rule.resources ?? []).length === 0) errs.push(field.required(`${path}.resources`, "resource rules must supply at least one resource"));
  });
  return errs;
}

/** Upstream's ValidateRoleBinding / ValidateClusterRoleBinding (roleRef kinds, subjects). */
export function validateBinding(binding: RoleBinding, rbacGroup: string, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref: RoleRef = binding.roleRef ?? {};
  if (ref.apiGroup !== rbacGroup) errs.push(field.notSupported("roleRef.apiGroup", ref.apiGroup ?? "", [rbacGroup]));
  const kinds = namespaced ? ["Role", "ClusterRole"] : ["ClusterRole"];
  if (!kinds.includes(ref.kind ?? "")) errs.push(field.notSupported("roleRef.kind", ref.kind ?? "", kinds));
  if (!ref.name) errs.push(field.required("roleRef.name", ""));
  else for (const msg of isValidPathSegmentName(ref.name)) errs.push(field.invalid("roleRef.name", ref.name, msg));
  (binding.subjects ?? []).forEach((s, i) => errs.push(...validateSubject(s, `subjects[${i}]`, rbacGroup, namespaced)));
  return errs;
}

function validateSubject(s: Subject, path: string, rbacGroup: string, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (!s.name) errs.push(field.required(`${path}.name`, ""));
  switch (s.kind) {
    case "ServiceAccount":
      if (s.apiGroup) errs.push(field.notSupported(`${path}.apiGroup`, s.apiGroup, [""]));
      if (!namespaced && !s.namespace) errs.push(field.required(`${path}.namespace`, ""));
      break;
    case "User":
    case "Group":
      if (s.apiGroup !== rbacGroup) errs.push(field.notSupported(`${path}.apiGroup`, s.apiGroup ?? "", [rbacGroup]));
      break;
    default:
      errs.push(field.notSupported(`${path}.kind`, s.kind ?? "", ["ServiceAccount", "User", "Group"]));
  }
  return errs;
}

/** User and Group subjects default to the RBAC group (upstream's SetDefaults_Subject). */
export function defaultBinding(binding: RoleBinding, rbacGroup: string): void {
  // Upstream's SetDefaults_RoleBinding: a roleRef without apiGroup refers to the RBAC group (clients such as e2e.test send "").
  if (binding.roleRef !== undefined && binding.roleRef !== null && !binding.roleRef.apiGroup) binding.roleRef.apiGroup = rbacGroup;
  for (const s of binding.subjects ?? []) {
    if ((s.kind === "User" || s.kind === "Group") && !s.apiGroup) s.apiGroup = rbacGroup;
  }
}

/** roleRef cannot change once the binding exists. */
export function immutableRoleRef(binding: RoleBinding, old: RoleBinding): FieldError[] {
  const a = binding.roleRef ?? {};
  const b = old.roleRef ?? {};
  return a.apiGroup === b.apiGroup && a.kind === b.kind && a.name === b.name ? [] : [field.invalid("roleRef", binding.roleRef, "cannot change roleRef")];
}

/** Upstream's ValidateClusterRole for aggregationRule: at least one selector, each a valid label selector. */
export function validateAggregationRule(rule: ClusterRole["aggregationRule"]): FieldError[] {
  if (rule === undefined || rule === null) return [];
  const path = "aggregationRule.clusterRoleSelectors";
  const selectors = rule.clusterRoleSelectors ?? [];
  if (selectors.length === 0) return [field.required(path, "at least one clusterRoleSelector required if aggregationRule is non-nil")];
  return selectors.flatMap((selector, i) => validateLabelSelector(selector as LabelSelector, `${path}[${i}]`));
}
