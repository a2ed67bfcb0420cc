// The RBAC authorizer (upstream's plugin/pkg/auth/authorizer/rbac): a request
// is allowed when a rule of a role bound to the user covers it. Bindings and
// roles are read from the registry stores' watch caches (no storage read per
// request): ClusterRoleBindings always, RoleBindings of the request's
// namespace when it has one. The system:masters group is always allowed
// (upstream's privileged-group authorizer, which runs before RBAC).
// A request no rule covers gets no opinion (the chain's 403 follows);
// bindings whose role is missing are named in the reason, as upstream.

import type { PolicyRule, Role, RoleBinding, Subject } from "../../api/rbac/index.js";
import type { Authorizer, Decision, RequestAttributes, UserInfo } from "../filters/index.js";
import type { RegistryStore } from "../registry/store.js";
import { aggregate, type ResolvedRules, type RuleResolver } from "./rules.js";
import { BindingIndex, describeBinding } from "./binding-index.js";
import type { RoleRef } from "../../api/rbac/index.js";

/** Upstream's superuser group. */
export const SYSTEM_MASTERS = "system:masters";

/** The four stores the authorizer reads (the server passes its own). */
export interface RbacStores {
  readonly roles: RegistryStore;
  readonly clusterRoles: RegistryStore;
  readonly roleBindings: RegistryStore;
  readonly clusterRoleBindings: RegistryStore;
}

const ALLOW: Decision = Object.freeze({ decision: "Allow" });
const ANY = { mode: "Any" } as const;

export class RbacAuthorizer implements Authorizer, RuleResolver {
  readonly #stores: RbacStores;
  readonly #clusterBindings: BindingIndex;
  readonly #namespaceBindings: BindingIndex;

  constructor(stores: RbacStores) {
    this.#stores = stores;
    this.#clusterBindings = new BindingIndex(stores.clusterRoleBindings);
    this.#namespaceBindings = new BindingIndex(stores.roleBindings);
  }

  async authorize(user: UserInfo, request: RequestAttributes): Promise<Decision> {
    if (user.groups.includes(SYSTEM_MASTERS)) return ALLOW;
    const errors: string[] = [];
    let reason = "";
    const allows = (rules: readonly PolicyRule[], source: () => string) => {
      if (!rules.some((r) => ruleAllows(r, request))) return false;
      reason = `RBAC: allowed by ${source()}`;
      return true;
    };
    if (await this.#visit(user, request.namespace, errors, allows)) return { decision: "Allow", reason };
    return { decision: "NoOpinion", reason: errors.length === 0 ? "" : `RBAC: ${aggregate(errors)}` };
  }

  /**
   * Every rule the user holds in `namespace` (the cluster's when ""), as
   * upstream's RulesFor: ClusterRoleBindings' roles, then the namespace's
   * RoleBindings'. Missing roles are reported in `errors` and grant nothing.
   */
  async rulesFor(user: UserInfo, namespace: string): Promise<ResolvedRules> {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    await this.#visit(user, namespace, errors, (granted) => {
      rules.push(...granted);
      return false;
    });
    return { rules, errors, incomplete: false };
  }

  /** Calls `visit` with the rules of each binding that names the user (and how to describe it), until it returns true. */
  async #visit(user: UserInfo, namespace: string, errors: string[], visit: (rules: readonly PolicyRule[], source: () => string) => boolean): Promise<boolean> {
    const walk = async (index: BindingIndex, bindingNamespace: string): Promise<boolean> => {
      for (const { binding, subject } of await index.matching(user, bindingNamespace)) {
        if (visit(await this.#rulesOf(binding, bindingNamespace, errors), () => describeBinding(binding, subject, bindingNamespace))) return true;
      }
      return false;
    };
    if (await walk(this.#clusterBindings, "")) return true;
    return namespace !== "" && (await walk(this.#namespaceBindings, namespace));
  }

  /** The rules a binding grants; a missing role grants none and is recorded in `errors`. */
  async #rulesOf(binding: RoleBinding, namespace: string, errors: string[]): Promise<readonly PolicyRule[]> {
    const found = await this.roleRules(binding.roleRef ?? {}, namespace);
    if (typeof found === "string") errors.push(found);
    return typeof found === "string" ? [] : found;
  }

  /** The rules of the role a binding in `namespace` refers to, or upstream's not-found text (upstream's GetRoleReferenceRules). */
  async roleRules(ref: RoleRef, namespace: string): Promise<readonly PolicyRule[] | string> {
    const store = ref.kind === "Role" ? this.#stores.roles : this.#stores.clusterRoles;
    const role = await store.cacher.get(store.keyFor(ref.kind === "Role" ? namespace : undefined, ref.name ?? ""), ANY);
    if (role === undefined) return `${store.def.singular}.${store.def.group} ${JSON.stringify(ref.name ?? "")} not found`;
    return (role.object as Role).rules ?? [];
  }
}

/** Whether a binding's subject names the user; a ServiceAccount without a namespace is in the binding's. */
export function appliesTo(subject: Subject, user: UserInfo, bindingNamespace: string): boolean {
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
export function ruleAllows(rule: PolicyRule, request: RequestAttributes): boolean {
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
