// The RBAC authorizer (upstream's plugin/pkg/auth/authorizer/rbac): a request
// is allowed when a rule of a role bound to the user covers it. Bindings and
// roles are read from the registry stores' watch caches (no storage read per
// request): ClusterRoleBindings always, RoleBindings of the request's
// namespace when it has one. The system:masters group is always allowed
// (upstream's privileged-group authorizer, which runs before RBAC).
// A request no rule covers gets no opinion (the chain's 403 follows);
// bindings whose role is missing are named in the reason, as upstream.

import type { PolicyRule, Role, RoleBinding } from "../../api/rbac/index.js";
import { appliesTo, ruleAllows } from "../../api/rbac/evaluate.js";
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

// The rule and subject matching is pure and lives with the RBAC kinds (api/rbac/evaluate.ts), so the
// certificate approver (controllers) evaluates the same rules.
export { appliesTo, ruleAllows, serviceAccountGroups, serviceAccountUser } from "../../api/rbac/evaluate.js";
