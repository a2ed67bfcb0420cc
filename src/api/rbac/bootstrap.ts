// The roles and bindings every cluster starts with (upstream's
// bootstrappolicy): cluster-admin for system:masters, the discovery and
// public-info viewers, basic-user, and the user-facing admin, edit and view.
// admin/edit/view are written below with their rules flattened (for the
// kinds this server serves); withAggregation (aggregation.ts) turns them into
// upstream's aggregated roles. Data only; the API server reconciles it at start.

import { nodeAgentClientUser, type Naming } from "../../machinery/naming.js";
import type { ClusterRole, PolicyRule, RoleBinding, Subject } from "./types.js";
import { withAggregation } from "./aggregation.js";
import { CONTROLLER_ROLE_PREFIX, controllerRoles } from "./controller-roles.js";

/** Upstream's marks on bootstrap objects (the keys stay upstream's, as kubectl and tools look for them). */
export const BOOTSTRAP_LABEL = { "kubernetes.io/bootstrapping": "rbac-defaults" } as const;
export const AUTOUPDATE_ANNOTATION = "rbac.authorization.kubernetes.io/autoupdate";

const READ = ["get", "list", "watch"];
const WRITE = ["create", "delete", "deletecollection", "patch", "update"];

const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({ verbs, apiGroups, resources });
const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

export interface BootstrapPolicy {
  readonly clusterRoles: readonly ClusterRole[];
  readonly clusterRoleBindings: readonly RoleBinding[];
  /** Roles and RoleBindings in the system namespace (upstream's namespace policy: the token cleaner's). */
  readonly roles: readonly ClusterRole[];
  readonly roleBindings: readonly RoleBinding[];
}

/**
 * Upstream's NodeRules: what a node agent may do besides what the Node
 * authorizer grants from its graph (secrets, config maps, claims and service
 * accounts of its pods, its lease). The Node authorizer asks these for a
 * system:node:NAME user; the NodeRestriction admission step narrows the writes
 * to the node's own objects. Also the rules of the (unbound) system:node role.
 */
export function nodeRules(naming: Naming): PolicyRule[] {
  const suffix = naming.groupSuffix;
  return [
    // The agent's port asks these about its callers (delegated authentication and authorization), under upstream's group names.
    rule(["create"], [...new Set([naming.authenticationGroup, "authentication.k8s.io"])], ["tokenreviews"]),
    rule(["create"], [...new Set([`authorization.${suffix}`, "authorization.k8s.io"])], ["localsubjectaccessreviews", "subjectaccessreviews"]),
    rule(READ, [""], ["services"]),
    rule(["create", "get", "list", "watch"], [""], ["nodes"]),
    rule(["patch", "update"], [""], ["nodes/status"]),
    rule(["delete", "patch", "update"], [""], ["nodes"]),
    rule(["create", "patch", "update"], [""], ["events"]),
    rule(READ, [""], ["pods"]),
    rule(["create", "delete"], [""], ["pods"]),
    rule(["patch", "update"], [""], ["pods/status"]),
    rule(["create"], [""], ["pods/eviction"]),
    rule(["get"], [""], ["endpoints"]),
    rule(["create", "get", "list", "watch"], [naming.certificatesGroup], ["certificatesigningrequests"]),
    // The service proxy of a joined orch server runs with the node's credentials (upstream's kube-proxy has system:node-proxier).
    rule(READ, [`discovery.${suffix}`], ["endpointslices"]),
  ];
}

export function bootstrapPolicy(naming: Naming): BootstrapPolicy {
  const rbac = naming.rbacGroup;
  const v1 = `${rbac}/v1`;
  const meta = (name: string) => ({ name, labels: { ...BOOTSTRAP_LABEL }, annotations: { [AUTOUPDATE_ANNOTATION]: "true" } });
  const role = (name: string, rules: PolicyRule[]): ClusterRole => ({ apiVersion: v1, kind: "ClusterRole", metadata: meta(name), rules });
  const group = (name: string): Subject => ({ kind: "Group", apiGroup: rbac, name });
  const binding = (name: string, subjects: Subject[]): RoleBinding => ({
    apiVersion: v1, kind: "ClusterRoleBinding", metadata: meta(name), roleRef: { apiGroup: rbac, kind: "ClusterRole", name }, subjects,
  });

  const viewRules = [
    rule(READ, [""], ["configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services", "services/status"]),
    rule(READ, [""], ["bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status", "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"]),
    rule(READ, [""], ["namespaces"]),
    rule(READ, [`discovery.${naming.groupSuffix}`], ["endpointslices"]),
    rule(READ, ["apps"], ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"]),
    rule(READ, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
    rule(READ, ["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
    rule(READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
  ];
  const editRules = [
    ...viewRules,
    rule([...WRITE], [""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]),
    rule(["get", "list", "watch"], [""], ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"]),
    rule(["create"], [""], ["pods/eviction", "serviceaccounts/token"]),
    rule([...WRITE], [""], ["configmaps", "events", "persistentvolumeclaims", "replicationcontrollers", "replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"]),
    rule([...WRITE], ["apps"], ["daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"]),
    rule([...WRITE], ["autoscaling"], ["horizontalpodautoscalers"]),
    rule([...WRITE], ["batch"], ["cronjobs", "jobs"]),
    rule([...WRITE], ["policy"], ["poddisruptionbudgets"]),
    rule([...WRITE], [`discovery.${naming.groupSuffix}`], ["endpointslices"]),
    rule(["impersonate"], [""], ["serviceaccounts"]),
  ];
  const adminRules = [
    ...editRules,
    rule(["create"], [`authorization.${naming.groupSuffix}`], ["localsubjectaccessreviews"]),
    // Both spellings of the group: upstream's is served as an alias (alias-group.ts) for kubectl's `auth reconcile`.
    rule([...READ, ...WRITE], [...new Set([rbac, "rbac.authorization.k8s.io"])], ["rolebindings", "roles"]),
  ];
  // Each controller's account and role (controller-roles.ts), bound as upstream's: system:controller:<account> → SA <system namespace>/<account>.
  const controllers = controllerRoles(naming);
  const account = (name: string): Subject => ({ kind: "ServiceAccount", name, namespace: naming.systemNamespace });
  const inSystem = <T extends { metadata: object }>(obj: T, kind: string): T => ({ ...obj, kind, metadata: { ...obj.metadata, namespace: naming.systemNamespace } });
  const controllerRole = (c: (typeof controllers)[number]) => role(CONTROLLER_ROLE_PREFIX + c.account, [...c.rules]);
  const controllerBinding = (c: (typeof controllers)[number]) => binding(CONTROLLER_ROLE_PREFIX + c.account, [account(c.account)]);
  const discoveryURLs = ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"];
  // Upstream lists the three health paths alone; orch's public paths (component/endpoints.ts) include their
  // per-check subpaths (/readyz/etcd), which anonymous probes read, so they are here too.
  const publicURLs = ["/healthz", "/healthz/*", "/livez", "/livez/*", "/readyz", "/readyz/*", "/version", "/version/"];
  // The review kinds answer under the product's group and upstream's (kubectl has upstream's compiled in).
  const reviewGroups = [...new Set([`authorization.${naming.groupSuffix}`, "authorization.k8s.io"])];
  const whoamiGroups = [...new Set([naming.authenticationGroup, "authentication.k8s.io"])];
  return {
    clusterRoles: withAggregation(naming, [
      role("cluster-admin", [rule(["*"], ["*"], ["*"]), urls(["*"], ["*"])]),
      role("admin", adminRules),
      role("edit", editRules),
      role("view", viewRules),
      role("system:discovery", [urls(["get"], discoveryURLs)]),
      role("system:public-info-viewer", [urls(["get"], publicURLs)]),
      // The service-account issuer's OIDC discovery document and keys (apiserver/handlers/openid-metadata.ts).
      role("system:service-account-issuer-discovery", [urls(["get"], ["/.well-known/openid-configuration", "/openid/v1/jwks"])]),
      role("system:node", nodeRules(naming)),
      // Who may call node agents' ports (/exec, /containerLogs, /logs, /stats, /metrics) and scrape components.
      role("system:kubelet-api-admin", [
        rule(READ, [""], ["nodes"]),
        rule(["proxy"], [""], ["nodes"]),
        rule(["*"], [""], ["nodes/proxy", "nodes/metrics", "nodes/spec", "nodes/stats", "nodes/log"]),
      ]),
      role("system:monitoring", [urls(["get"], ["/metrics", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*"])]),
      // Joining nodes (orch server --join): bootstrap tokens create and read CSRs; the approver signs node client ones.
      role("system:node-bootstrapper", [rule(["create", "get", "list", "watch"], [naming.certificatesGroup], ["certificatesigningrequests"])]),
      role(`system:${naming.certificatesGroup}:certificatesigningrequests:nodeclient`, [rule(["create"], [naming.certificatesGroup], ["certificatesigningrequests/nodeclient"])]),
      role(`system:${naming.certificatesGroup}:certificatesigningrequests:selfnodeclient`, [rule(["create"], [naming.certificatesGroup], ["certificatesigningrequests/selfnodeclient"])]),
      ...controllers.filter((c) => !c.systemNamespaceOnly).map(controllerRole),
      role("system:basic-user", [
        rule(["create"], reviewGroups, ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
        rule(["create"], whoamiGroups, ["selfsubjectreviews"]),
      ]),
    ]),
    clusterRoleBindings: [
      binding("cluster-admin", [group("system:masters")]),
      binding("system:discovery", [group("system:authenticated")]),
      binding("system:public-info-viewer", [group("system:authenticated"), group("system:unauthenticated")]),
      binding("system:basic-user", [group("system:authenticated")]),
      binding("system:service-account-issuer-discovery", [group("system:serviceaccounts")]),
      binding("system:monitoring", [group("system:monitoring")]),
      // The API server's client certificate towards node agents (component/pki.ts NODE_AGENT_CLIENT; upstream's apiserver-kubelet-client).
      { ...binding("system:kubelet-api-admin", [{ kind: "User", apiGroup: rbac, name: nodeAgentClientUser(naming) }]), metadata: meta(nodeAgentClientUser(naming).replace("-", ":")) },
      // kubeadm's kubelet-bootstrap, node-autoapprove-bootstrap and node-autoapprove-certificate-rotation bindings.
      binding("system:node-bootstrapper", [group("system:bootstrappers")]),
      binding(`system:${naming.certificatesGroup}:certificatesigningrequests:nodeclient`, [group("system:bootstrappers")]),
      binding(`system:${naming.certificatesGroup}:certificatesigningrequests:selfnodeclient`, [group("system:nodes")]),
      ...controllers.filter((c) => !c.systemNamespaceOnly).map(controllerBinding),
    ],
    roles: [
      ...controllers.filter((c) => c.systemNamespaceOnly).map((c) => inSystem(controllerRole(c), "Role")),
      // Extension API servers read how to trust the aggregator's requests from this ConfigMap (upstream's namespace policy).
      inSystem(role("extension-apiserver-authentication-reader", [{ ...rule(["get", "list", "watch"], [""], ["configmaps"]), resourceNames: ["extension-apiserver-authentication"] }]), "Role"),
    ],
    roleBindings: controllers.filter((c) => c.systemNamespaceOnly).map((c) => {
      const b = inSystem(controllerBinding(c), "RoleBinding");
      return { ...b, roleRef: { ...b.roleRef!, kind: "Role" } };
    }),
  };
}
