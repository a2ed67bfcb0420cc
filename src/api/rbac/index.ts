// The rbac.authorization.<suffix>/v1 API group: Roles, ClusterRoles,
// RoleBindings and ClusterRoleBindings (the policy the RBAC authorizer reads).

import type { SchemaRegistry } from "../../machinery/schema.js";
import { namingFor, type Naming as NamingTable } from "../../machinery/naming.js";
import { storedUnderGroup } from "../alias-group.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import { clusterRoleBindings, roleBindings } from "./bindings.js";
import { clusterRoles, roles } from "./roles.js";
import { RBAC_TYPES } from "./schemas.js";
import type { RoleBinding } from "./types.js";
import type { ApiObject } from "../../machinery/index.js";

export { RBAC_TYPES, RBAC_V1 } from "./schemas.js";
export type { ClusterRole, PolicyRule, Role, RoleBinding, RoleRef, Subject } from "./types.js";
export { CONTROLLER_ROLE_PREFIX, controllerAccount, controllerRoles, type ControllerRole } from "./controller-roles.js";
export { AUTOUPDATE_ANNOTATION, BOOTSTRAP_LABEL, bootstrapPolicy, nodeRules, type BootstrapPolicy } from "./bootstrap.js";

export const rbacModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...RBAC_TYPES);
  },
  resources(naming: NamingTable): ResourceDefinition[] {
    const kinds = (n: NamingTable) => [roles(n), clusterRoles(n), roleBindings(n), clusterRoleBindings(n)];
    // kubectl `auth reconcile` has upstream's group name compiled in: serve that name too, over the same storage.
    const upstream = namingFor("k8s.io").rbacGroup;
    if (naming.rbacGroup === upstream) return kinds(naming);
    const alias = kinds({ ...naming, rbacGroup: upstream });
    return [...kinds(naming), ...alias.map((def) => storedUnderGroup(def, naming.rbacGroup, renameRbacGroup))];
  },
};

/** A binding's roleRef and User/Group subjects name the RBAC group: renamed with the object's apiVersion. */
function renameRbacGroup(obj: ApiObject, from: string, to: string): void {
  const b = obj as RoleBinding;
  if (b.roleRef?.apiGroup === from) b.roleRef.apiGroup = to;
  for (const s of b.subjects ?? []) if (s.apiGroup === from) s.apiGroup = to;
}

export default rbacModule;
export { appliesTo, ruleAllows, type RuleRequest, type RuleUser } from "./evaluate.js";
