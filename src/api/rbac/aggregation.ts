// Aggregated ClusterRoles (upstream's aggregationRule): a ClusterRole whose
// clusterRoleSelectors pick other ClusterRoles by label gets the union of
// their rules, kept so by the clusterrole-aggregation controller. The union
// is computed here, once, for the controller and for the bootstrap policy:
// per selector, the matching roles by name (the role itself skipped), their
// rules in order, each rule once. admin, edit and view aggregate as
// upstream's: view from roles labelled aggregate-to-view, edit from
// aggregate-to-edit (view is one), admin from aggregate-to-admin (edit is
// one); the system:aggregate-to-* roles carry the rules each adds.

import type { Naming } from "../../machinery/naming.js";
import type { ClusterRole, PolicyRule } from "./types.js";

/** The label keys of upstream's aggregation (`rbac.authorization.k8s.io/aggregate-to-view`), under the profile's RBAC group. */
export function aggregationLabels(naming: Naming) {
  const key = (to: string) => `${naming.rbacGroup}/aggregate-to-${to}`;
  return { admin: key("admin"), edit: key("edit"), view: key("view") };
}

/** The union of the roles' rules, each rule once (compared without empty lists), in the roles' order. */
export function aggregateRules(roles: readonly ClusterRole[]): PolicyRule[] {
  const seen = new Set<string>();
  const out: PolicyRule[] = [];
  for (const role of roles) {
    for (const rule of role.rules ?? []) {
      const key = ruleKey(rule);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(rule);
    }
  }
  return out;
}

/** Whether two rule lists are the same (upstream's semantic equality: a missing list equals an empty one). */
export function sameRules(a: readonly PolicyRule[] | null | undefined, b: readonly PolicyRule[] | null | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((r, i) => ruleKey(r) === ruleKey(y[i]!));
}

function ruleKey(rule: PolicyRule): string {
  const list = (v: readonly string[] | undefined) => (v ?? []).join("\u0000");
  return [list(rule.verbs), list(rule.apiGroups), list(rule.resources), list(rule.resourceNames), list(rule.nonResourceURLs)].join("\u0001");
}

/**
 * The bootstrap roles with upstream's aggregation: given admin, edit and view
 * with their rules flattened (each a superset of the next), the rules each
 * adds move to system:aggregate-to-admin/edit/view, and admin, edit and view
 * get aggregationRules, labels, and the union the controller would compute
 * (so a server without the controller still serves them whole).
 */
export function withAggregation(naming: Naming, roles: ClusterRole[]): ClusterRole[] {
  const labels = aggregationLabels(naming);
  const byName = (name: string) => roles.find((r) => r.metadata.name === name);
  const [admin, edit, view] = [byName("admin"), byName("edit"), byName("view")];
  if (admin === undefined || edit === undefined || view === undefined) return roles;
  const minus = (of: ClusterRole, without: ClusterRole) => {
    const drop = new Set((without.rules ?? []).map(ruleKey));
    return (of.rules ?? []).filter((r) => !drop.has(ruleKey(r)));
  };
  const part = (to: "admin" | "edit" | "view", rules: PolicyRule[]): ClusterRole => ({
    ...view, metadata: { ...view.metadata, name: `system:aggregate-to-${to}`, labels: { ...view.metadata.labels, [labels[to]]: "true" } }, rules,
  });
  const parts = { admin: part("admin", minus(admin, edit)), edit: part("edit", minus(edit, view)), view: part("view", view.rules ?? []) };
  const aggregated = (role: ClusterRole, to: "admin" | "edit" | "view", label: string | undefined, sources: ClusterRole[]): ClusterRole => ({
    ...role,
    metadata: { ...role.metadata, ...(label !== undefined ? { labels: { ...role.metadata.labels, [label]: "true" } } : {}) },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [labels[to]]: "true" } }] },
    rules: aggregateRules(sources),
  });
  // In the controller's order: the matching roles sorted by name.
  const newView = aggregated(view, "view", labels.edit, [parts.view]);
  const newEdit = aggregated(edit, "edit", labels.admin, [parts.edit, newView]);
  const newAdmin = aggregated(admin, "admin", undefined, [newEdit, parts.admin]);
  const replaced = roles.map((r) => (r === admin ? newAdmin : r === edit ? newEdit : r === view ? newView : r));
  return [...replaced, parts.admin, parts.edit, parts.view];
}
