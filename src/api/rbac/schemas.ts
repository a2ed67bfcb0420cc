// The rbac.authorization.<suffix>/v1 kinds as schema data (definition names
// keep upstream's `io.k8s.api.rbac.v1`). Protobuf field numbers from
// k8s.io/api/rbac/v1/generated.proto.

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1, listOf } from "../apps/schemas.js";

export const RBAC_V1 = "io.k8s.api.rbac.v1";

const rules = () => f(2, s.array(s.ref(`${RBAC_V1}.PolicyRule`), { listType: "atomic" }), "All the policy rules of this role.");
const strings = (tag: number, description: string) => f(tag, s.array(s.string(), { listType: "atomic" }), description);
const binding = (kind: string, description: string) =>
  type(`${RBAC_V1}.${kind}`, description, {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object's metadata."),
    subjects: f(2, s.array(s.ref(`${RBAC_V1}.Subject`), { listType: "atomic" }), "The references to the objects the role applies to."),
    roleRef: f(3, s.ref(`${RBAC_V1}.RoleRef`), "The Role or ClusterRole granted; it cannot be changed once the binding exists.", { required: true }),
  });

export const RBAC_TYPES: readonly TypeDef[] = [
  type(`${RBAC_V1}.PolicyRule`, "What a role allows: verbs on resources (by group, and optionally by name) or on non-resource URLs.", {
    verbs: strings(1, "The verbs allowed; '*' is every verb."),
    apiGroups: strings(2, "The API groups of the resources; \"\" is the core group, '*' every group."),
    resources: strings(3, "The resources ('pods', 'pods/log', '*', '*/scale')."),
    resourceNames: strings(4, "An optional allow-list of object names; empty allows every name."),
    nonResourceURLs: strings(5, "Non-resource URL paths ('/healthz', '/api/*'); only in ClusterRoles bound by ClusterRoleBindings."),
  }),
  type(`${RBAC_V1}.Subject`, "Who a binding grants the role to: a user, a group or a service account.", {
    kind: f(1, s.string(), "User, Group or ServiceAccount.", { required: true }),
    apiGroup: f(2, s.string(), "\"\" for ServiceAccount, the RBAC group for User and Group."),
    name: f(3, s.string(), "The subject's name.", { required: true }),
    namespace: f(4, s.string(), "The namespace of a ServiceAccount subject."),
  }),
  type(`${RBAC_V1}.RoleRef`, "The role a binding grants.", {
    apiGroup: f(1, s.string(), "The RBAC API group.", { required: true }),
    kind: f(2, s.string(), "Role or ClusterRole.", { required: true }),
    name: f(3, s.string(), "The role's name.", { required: true }),
  }),
  type(`${RBAC_V1}.AggregationRule`, "How a ClusterRole's rules are aggregated from other ClusterRoles.", {
    clusterRoleSelectors: f(1, s.array(s.ref(`${META_V1}.LabelSelector`), { listType: "atomic" }), "The ClusterRoles whose rules are aggregated."),
  }),
  type(`${RBAC_V1}.Role`, "A namespaced set of rules, granted by RoleBindings.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object's metadata."),
    rules: rules(),
  }),
  type(`${RBAC_V1}.ClusterRole`, "A cluster-wide set of rules, granted by RoleBindings (in their namespace) or ClusterRoleBindings.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object's metadata."),
    rules: rules(),
    aggregationRule: f(3, s.ref(`${RBAC_V1}.AggregationRule`), "How this role's rules are built from other ClusterRoles (not evaluated yet)."),
  }),
  binding("RoleBinding", "Grants a Role or ClusterRole to subjects within the binding's namespace."),
  binding("ClusterRoleBinding", "Grants a ClusterRole to subjects in every namespace and at the cluster scope."),
  listOf(RBAC_V1, "Role", "A list of Roles."),
  listOf(RBAC_V1, "ClusterRole", "A list of ClusterRoles."),
  listOf(RBAC_V1, "RoleBinding", "A list of RoleBindings."),
  listOf(RBAC_V1, "ClusterRoleBinding", "A list of ClusterRoleBindings."),
];
