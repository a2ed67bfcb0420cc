// Upstream's RBAC matching, pure (plugin/pkg/auth/authorizer/rbac's
// appliesTo and RuleAllows): whether a binding's subject names a user, and
// whether a policy rule covers a request. The API server's RBAC authorizer
// and the certificate approver (a SubjectAccessReview-style check) use it.

import type { PolicyRule, Subject } from "./types.js";

/** Who asks (the API server's UserInfo has this shape). */
export interface RuleUser {
  readonly name: string;
  readonly groups: readonly string[];
}

/** What is asked (the API server's RequestAttributes has this shape). */
export interface RuleRequest {
  readonly resourceRequest: boolean;
  readonly verb: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  readonly path: string;
}

/** Whether a binding's subject names the user; a ServiceAccount without a namespace is in the binding's. */
export function appliesTo(subject: Subject, user: RuleUser, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case "User":
      return user.name === subject.name;
    case "Group":
      return user.groups.includes(subject.name ?? "");
    case "ServiceAccount": {
      const namespace = subject.namespace || bindingNamespace;
      return namespace !== "" && user.name === serviceAccountUser(namespace, subject.name ?? "");
    }
    default:
      return false;
  }
}

/** The user name a service account authenticates as. */
export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The groups a service account's user is in (for the authenticators that make them). */
export function serviceAccountGroups(namespace: string): string[] {
  return ["system:serviceaccounts", `system:serviceaccounts:${namespace}`];
}

/** Upstream's RuleAllows: verbs, then groups, resources (with subresources) and names, or non-resource URLs. */
export function ruleAllows(rule: PolicyRule, request: RuleRequest): boolean {
  if (!matches(rule.verbs, request.verb)) return false;
  if (!request.resourceRequest) return nonResourceURLMatches(rule.nonResourceURLs ?? [], request.path);
  return (
    matches(rule.apiGroups, request.apiGroup) &&
    resourceMatches(rule.resources ?? [], request.resource, request.subresource) &&
    ((rule.resourceNames ?? []).length === 0 || (rule.resourceNames ?? []).includes(request.name))
  );
}

function matches(values: readonly string[] | undefined, wanted: string): boolean {
  return (values ?? []).some((v) => v === "*" || v === wanted);
}

// `*`, the resource (`pods`), the resource with its subresource (`pods/log`), or `*/log` for that subresource of any resource.
function resourceMatches(rules: readonly string[], resource: string, subresource: string): boolean {
  const combined = subresource === "" ? resource : `${resource}/${subresource}`;
  return rules.some((r) => r === "*" || r === combined || (subresource !== "" && r === `*/${subresource}`));
}

/** Exact paths, `*`, or a prefix ending in `*` (`/apis/*`). */
function nonResourceURLMatches(urls: readonly string[], path: string): boolean {
  return urls.some((u) => u === "*" || u === path || (u.endsWith("*") && path.startsWith(u.slice(0, -1))));
}
