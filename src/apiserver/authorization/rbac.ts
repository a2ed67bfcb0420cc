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

export class RbacAuthorizer implements Authorizer {
  readonly #stores: RbacStores;

  constructor(stores: RbacStores) {
    this.#stores = stores;
  }

  async authorize(user: UserInfo, request: RequestAttributes): Promise<Decision> {
    if (user.groups.includes(SYSTEM_MASTERS)) return ALLOW;
    const errors: string[] = [];
    const visit = async (bindings: readonly RoleBinding[], namespace: string): Promise<boolean> => {
      for (const b of bindings) {
        if (!(b.subjects ?? []).some((s) => appliesTo(s, user, namespace))) continue;
        const rules = await this.#rulesOf(b, namespace, errors);
        if (rules.some((r) => ruleAllows(r, request))) return true;
      }
      return false;
    };
    if (await visit(await this.#list(this.#stores.clusterRoleBindings, undefined), "")) return ALLOW;
    if (request.namespace !== "" && (await visit(await this.#list(this.#stores.roleBindings, request.namespace), request.namespace))) return ALLOW;
    return { decision: "NoOpinion", reason: errors.length === 0 ? "" : `RBAC: ${errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`}` };
  }

  async #list(store: RegistryStore, namespace: string | undefined): Promise<RoleBinding[]> {
    const { items } = await store.cacher.list(store.prefixFor(namespace), ANY);
    return items.map((c) => c.object as RoleBinding);
  }

  /** The rules a binding grants; a missing role grants none and is recorded in `errors`. */
  async #rulesOf(binding: RoleBinding, namespace: string, errors: string[]): Promise<readonly PolicyRule[]> {
    const ref = binding.roleRef ?? {};
    const store = ref.kind === "Role" ? this.#stores.roles : this.#stores.clusterRoles;
    const role = await store.cacher.get(store.keyFor(ref.kind === "Role" ? namespace : undefined, ref.name ?? ""), ANY);
    if (role === undefined) {
      errors.push(`${store.def.singular}.${store.def.group} ${JSON.stringify(ref.name ?? "")} not found`);
      return [];
    }
    return (role.object as Role).rules ?? [];
  }
}

// The rule and subject matching is pure and lives with the RBAC kinds (api/rbac/evaluate.ts), so the
// certificate approver (controllers) evaluates the same rules.
export { appliesTo, ruleAllows, serviceAccountGroups, serviceAccountUser } from "../../api/rbac/evaluate.js";
