// TypeScript view of the rbac.authorization.<suffix>/v1 kinds; fields optional, as request bodies are untrusted.

import type { ApiObject } from "../../machinery/index.js";

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind?: string;
  apiGroup?: string;
  name?: string;
  namespace?: string;
}

export interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

export interface Role extends ApiObject {
  rules?: PolicyRule[] | null;
}

export interface ClusterRole extends Role {
  aggregationRule?: { clusterRoleSelectors?: unknown[] } | null;
}

export interface RoleBinding extends ApiObject {
  subjects?: Subject[] | null;
  roleRef?: RoleRef;
}
