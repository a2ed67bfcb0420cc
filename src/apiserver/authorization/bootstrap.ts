// Reconciling the bootstrap policy (api/rbac/bootstrap.ts) at start, as
// upstream's rbac/bootstrap-roles post-start hook: a missing role or binding
// is created; an existing one whose autoupdate annotation is not "false"
// gets the rules (subjects) it lacks added, keeping whatever an
// administrator added, and an aggregationRule where the policy has one; with
// autoupdate "false" it is left alone.

import { bootstrapPolicy, AUTOUPDATE_ANNOTATION, type ClusterRole, type RoleBinding } from "../../api/rbac/index.js";
import { isApiError, type ApiObject } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import type { RegistryStore } from "../registry/store.js";
import type { Stores } from "../storage-factory.js";

/** Creates or completes the bootstrap ClusterRoles and ClusterRoleBindings (and the system namespace's Roles and RoleBindings); a no-op when RBAC's kinds are not served. */
export async function reconcileBootstrapPolicy(stores: Stores, naming: Naming, log: (line: string) => void): Promise<void> {
  const roles = stores.for({ group: naming.rbacGroup, resource: "clusterroles" });
  const bindings = stores.for({ group: naming.rbacGroup, resource: "clusterrolebindings" });
  if (roles === undefined || bindings === undefined) return;
  const policy = bootstrapPolicy(naming);
  for (const role of policy.clusterRoles) {
    await reconcile(roles, role, (current) => missing((role as ClusterRole).rules ?? [], (current as ClusterRole).rules ?? []), (current, add) => {
      (current as ClusterRole).rules = [...((current as ClusterRole).rules ?? []), ...(add as NonNullable<ClusterRole["rules"]>)];
    }, log);
  }
  // Roles that became aggregated (admin, edit, view of an older cluster) get their aggregationRule; the controller fills the rules.
  for (const role of policy.clusterRoles as readonly ClusterRole[]) {
    if (role.aggregationRule == null) continue;
    const name = role.metadata.name!;
    const current = (await roles.get(undefined, name)).object as ClusterRole;
    if (current.aggregationRule != null || current.metadata.annotations?.[AUTOUPDATE_ANNOTATION] === "false") continue;
    await roles.modify(undefined, name, (obj) => ({ ...obj, metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, ...role.metadata.labels } }, aggregationRule: structuredClone(role.aggregationRule) } as ClusterRole));
    log(`rbac: ${name} aggregates its rules now`);
  }
  const namespacedRoles = stores.for({ group: naming.rbacGroup, resource: "roles" });
  const namespacedBindings = stores.for({ group: naming.rbacGroup, resource: "rolebindings" });
  for (const role of namespacedRoles === undefined ? [] : policy.roles) {
    await reconcile(namespacedRoles!, role, (current) => missing(role.rules ?? [], (current as ClusterRole).rules ?? []), (current, add) => {
      (current as ClusterRole).rules = [...((current as ClusterRole).rules ?? []), ...(add as NonNullable<ClusterRole["rules"]>)];
    }, log);
  }
  for (const binding of [...policy.clusterRoleBindings, ...(namespacedBindings === undefined ? [] : policy.roleBindings)]) {
    await reconcile(binding.metadata.namespace === undefined ? bindings : namespacedBindings!, binding, (current) => missing((binding as RoleBinding).subjects ?? [], (current as RoleBinding).subjects ?? []), (current, add) => {
      (current as RoleBinding).subjects = [...((current as RoleBinding).subjects ?? []), ...(add as NonNullable<RoleBinding["subjects"]>)];
    }, log);
  }
}

async function reconcile(
  store: RegistryStore,
  wanted: ApiObject,
  lacking: (current: ApiObject) => unknown[],
  complete: (current: ApiObject, add: unknown[]) => void,
  log: (line: string) => void,
): Promise<void> {
  const name = wanted.metadata.name!;
  const namespace = wanted.metadata.namespace;
  try {
    await store.create(namespace, structuredClone(wanted));
    return;
  } catch (err) {
    if (!isApiError(err, "AlreadyExists")) throw err;
  }
  const current = (await store.get(namespace, name)).object;
  if (current.metadata.annotations?.[AUTOUPDATE_ANNOTATION] === "false") return;
  const add = lacking(current);
  if (add.length === 0) return;
  await store.modify(namespace, name, (obj) => {
    complete(obj, lacking(obj));
    return obj;
  });
  log(`rbac: added ${add.length} missing entr${add.length === 1 ? "y" : "ies"} to ${store.def.kind} ${name}`);
}

/** The entries of `wanted` that `have` lacks (compared as JSON, keys in declaration order as defaults leave them). */
function missing<T>(wanted: readonly T[], have: readonly T[]): T[] {
  const present = new Set(have.map(canonical));
  return wanted.filter((w) => !present.has(canonical(w)));
}

/** JSON with object keys sorted: equal for equal values whatever their key order. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v);
}
