// The rbac.authorization.<suffix>/v1 API group: Roles, ClusterRoles,
// RoleBindings and ClusterRoleBindings (the policy the RBAC authorizer reads).

import type { Naming } from "../../machinery/naming.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import { clusterRoleBindings, roleBindings } from "./bindings.js";
import { clusterRoles, roles } from "./roles.js";
import { RBAC_TYPES } from "./schemas.js";

export { RBAC_TYPES, RBAC_V1 } from "./schemas.js";
export type { ClusterRole, PolicyRule, Role, RoleBinding, RoleRef, Subject } from "./types.js";
export { AUTOUPDATE_ANNOTATION, BOOTSTRAP_LABEL, bootstrapPolicy, nodeRules, type BootstrapPolicy } from "./bootstrap.js";

export const rbacModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...RBAC_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [roles(naming), clusterRoles(naming), roleBindings(naming), clusterRoleBindings(naming)];
  },
};

export default rbacModule;
export { appliesTo, ruleAllows, type RuleRequest, type RuleUser } from "./evaluate.js";
