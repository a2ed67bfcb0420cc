// rolebindings (namespaced) and clusterrolebindings (cluster-scoped) of
// rbac.authorization.<suffix>/v1: a role granted to subjects. roleRef is
// immutable; User and Group subjects default to the RBAC group. Table as
// upstream's: Name, Role (`ClusterRole/view`), Age; with -o wide Users,
// Groups and ServiceAccounts (`ns/name`).

import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition, type TableDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { rbacKind } from "./kind.js";
import type { RoleBinding } from "./types.js";
import { defaultBinding, immutableRoleRef, validateBinding } from "./validation.js";

const wide = (name: string, description: string) => ({ name, type: "string", description, priority: 1 }) as const;

const bindingTable: TableDefinition<RoleBinding> = nameAgeTable<RoleBinding>(
  {
    columns: [{ name: "Role", type: "string", description: "The role granted (Kind/name).", priority: 0 }],
    cells: (b) => [`${b.roleRef?.kind ?? ""}/${b.roleRef?.name ?? ""}`],
  },
  {
    columns: [wide("Users", "The User subjects."), wide("Groups", "The Group subjects."), wide("ServiceAccounts", "The ServiceAccount subjects (namespace/name).")],
    cells: (b) => {
      const of = (kind: string) => (b.subjects ?? []).filter((s) => s.kind === kind);
      return [
        of("User").map((s) => s.name).join(", "),
        of("Group").map((s) => s.name).join(", "),
        of("ServiceAccount").map((s) => `${s.namespace ?? ""}/${s.name}`).join(", "),
      ];
    },
  },
);

function binding(naming: Naming, namespaced: boolean): ResourceDefinition {
  const kind = namespaced ? "RoleBinding" : "ClusterRoleBinding";
  return defineResource<RoleBinding>({
    ...rbacKind(naming, kind, namespaced),
    defaults: (b) => defaultBinding(b, naming.rbacGroup),
    validate: (b) => validateBinding(b, naming.rbacGroup, namespaced),
    validateUpdate: (b, old) => [...validateBinding(b, naming.rbacGroup, namespaced), ...immutableRoleRef(b, old)],
    table: bindingTable,
  });
}

export const roleBindings = (naming: Naming): ResourceDefinition => binding(naming, true);
export const clusterRoleBindings = (naming: Naming): ResourceDefinition => binding(naming, false);
