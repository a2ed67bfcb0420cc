// roles (namespaced) and clusterroles (cluster-scoped) of
// rbac.authorization.<suffix>/v1: sets of policy rules. Names are path
// segments (upstream's ValidateRBACName: "system:basic-user" is a name).
// `kubectl get` shows Name and Created At, as upstream.

import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { RBAC_V1 } from "./schemas.js";
import type { ClusterRole, Role } from "./types.js";
import { validateRules } from "./validation.js";

export function roles(naming: Naming): ResourceDefinition {
  return defineResource<Role>({
    group: naming.rbacGroup,
    versions: ["v1"],
    resource: "roles",
    singular: "role",
    kind: "Role",
    namespaced: true,
    schema: `${RBAC_V1}.Role`,
    nameRule: "path-segment",
    validate: (role) => validateRules(role.rules, true),
    validateUpdate: (role) => validateRules(role.rules, true),
  });
}

export function clusterRoles(naming: Naming): ResourceDefinition {
  return defineResource<ClusterRole>({
    group: naming.rbacGroup,
    versions: ["v1"],
    resource: "clusterroles",
    singular: "clusterrole",
    kind: "ClusterRole",
    namespaced: false,
    schema: `${RBAC_V1}.ClusterRole`,
    nameRule: "path-segment",
    validate: (role) => validateRules(role.rules, false),
    validateUpdate: (role) => validateRules(role.rules, false),
  });
}
