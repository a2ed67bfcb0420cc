// roles (namespaced) and clusterroles (cluster-scoped) of
// rbac.authorization.<suffix>/v1: sets of policy rules. Names are path
// segments (kind.ts).
// `kubectl get` shows Name and Created At, as upstream.

import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { rbacKind } from "./kind.js";
import type { ClusterRole } from "./types.js";
import { validateAggregationRule, validateRules } from "./validation.js";

function role(naming: Naming, namespaced: boolean): ResourceDefinition {
  const kind = namespaced ? "Role" : "ClusterRole";
  return defineResource<ClusterRole>({
    ...rbacKind(naming, kind, namespaced),
    validate: (r) => [...validateRules(r.rules, namespaced), ...validateAggregationRule(r.aggregationRule)],
    validateUpdate: (r) => [...validateRules(r.rules, namespaced), ...validateAggregationRule(r.aggregationRule)],
  });
}

export const roles = (naming: Naming): ResourceDefinition => role(naming, true);
export const clusterRoles = (naming: Naming): ResourceDefinition => role(naming, false);
