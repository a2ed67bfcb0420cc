// Each controller's own rights (upstream's bootstrappolicy controller roles,
// v1.23): with `--use-service-account-credentials` a controller talks to the
// API server with a token of the service account `<account>` in the system
// namespace, and the ClusterRole `system:controller:<account>` bound to it
// is all it may do (the shared informers still read with the manager's own
// credentials, as upstream's). The table is keyed by orch's `--controllers`
// names; the accounts are upstream's names. Groups come from the naming
// table, so both profiles grant the same rights. Where orch's loops need more
// than upstream's (a loop upstream does not have, or one that writes through
// another path), the extra rule says why.

import type { Naming } from "../../machinery/naming.js";
import { signerNames } from "../certificates/signers.js";
import type { PolicyRule } from "./types.js";

/** Upstream's prefix of the controller roles and bindings. */
export const CONTROLLER_ROLE_PREFIX = "system:controller:";

export interface ControllerRole {
  /** The service account in the system namespace, and the role's name after the prefix. */
  readonly account: string;
  /** The `--controllers` names running under this account. */
  readonly controllers: readonly string[];
  readonly rules: readonly PolicyRule[];
  /** A Role in the system namespace instead of a ClusterRole (upstream's token-cleaner). */
  readonly systemNamespaceOnly?: boolean;
}

const rule = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule =>
  ({ verbs, apiGroups, resources, ...(resourceNames !== undefined ? { resourceNames } : {}) });
const READ = ["get", "list", "watch"];

/** The controller roles for the profile's group names. */
export function controllerRoles(naming: Naming): ControllerRole[] {
  const suffix = naming.groupSuffix;
  const core = "";
  const apps = "apps";
  const batch = "batch";
  const policy = "policy";
  const discovery = `discovery.${suffix}`;
  const storage = naming.storageGroup;
  const certificates = naming.certificatesGroup;
  const events = rule(["create", "update", "patch"], [core, naming.eventsGroup], ["events"]);
  const signers = signerNames(naming);
  const role = (account: string, controllers: string[], rules: PolicyRule[], systemNamespaceOnly = false): ControllerRole =>
    ({ account, controllers, rules, ...(systemNamespaceOnly ? { systemNamespaceOnly } : {}) });
  return [
    role("clusterrole-aggregation-controller", ["clusterrole-aggregation-controller"], [
      rule(["escalate", "get", "list", "watch", "update", "patch"], [naming.rbacGroup], ["clusterroles"]),
    ]),
    role("cronjob-controller", ["cronjob-controller"], [
      rule(["get", "list", "watch", "update"], [batch], ["cronjobs"]),
      rule(["get", "list", "watch", "create", "update", "delete", "patch"], [batch], ["jobs"]),
      rule(["update"], [batch], ["cronjobs/status"]),
      rule(["update"], [batch], ["cronjobs/finalizers"]),
      rule(["list", "delete"], [core], ["pods"]),
      events,
    ]),
    role("daemon-set-controller", ["daemonset-controller"], [
      rule(READ, [apps], ["daemonsets"]),
      rule(["update"], [apps], ["daemonsets/status"]),
      rule(["update"], [apps], ["daemonsets/finalizers"]),
      rule(["list", "watch"], [core], ["nodes"]),
      rule(["list", "watch", "create", "delete", "patch"], [core], ["pods"]),
      rule(["create"], [core], ["pods/binding"]),
      rule(["get", "list", "watch", "create", "delete", "update", "patch"], [apps], ["controllerrevisions"]),
      events,
    ]),
    role("deployment-controller", ["deployment-controller"], [
      rule(["get", "list", "watch", "update"], [apps], ["deployments"]),
      rule(["update"], [apps], ["deployments/status"]),
      rule(["update"], [apps], ["deployments/finalizers"]),
      rule(["get", "list", "watch", "create", "update", "patch", "delete"], [apps], ["replicasets"]),
      rule(["get", "list", "watch", "update"], [core], ["pods"]),
      events,
    ]),
    role("disruption-controller", ["disruption-controller"], [
      rule(READ, [apps], ["deployments"]),
      rule(READ, [apps], ["replicasets"]),
      rule(READ, [core], ["replicationcontrollers"]),
      rule(READ, [policy], ["poddisruptionbudgets"]),
      rule(READ, [apps], ["statefulsets"]),
      rule(["update"], [policy], ["poddisruptionbudgets/status"]),
      rule(["get"], ["*"], ["*/scale"]),
      events,
    ]),
    role("endpoint-controller", ["endpoints-controller"], [
      rule(READ, [core], ["services", "pods"]),
      rule(["get", "list", "create", "update", "delete"], [core], ["endpoints"]),
      rule(["create"], [core], ["endpoints/restricted"]),
      events,
    ]),
    role("endpointslice-controller", ["endpointslice-controller"], [
      rule(READ, [core], ["services", "pods", "nodes"]),
      rule(["update"], [core], ["services/finalizers"]),
      rule(["get", "list", "create", "update", "delete"], [discovery], ["endpointslices"]),
      events,
    ]),
    role("endpointslicemirroring-controller", ["endpointslice-mirroring-controller"], [
      rule(READ, [core], ["services", "endpoints"]),
      rule(["update"], [core], ["services/finalizers"]),
      rule(["update"], [core], ["endpoints/finalizers"]),
      rule(["get", "list", "create", "update", "delete"], [discovery], ["endpointslices"]),
      events,
    ]),
    role("generic-garbage-collector", ["garbage-collector-controller"], [
      rule(["get", "list", "watch", "patch", "update", "delete"], ["*"], ["*"]),
      events,
    ]),
    role("job-controller", ["job-controller"], [
      rule(["get", "list", "watch", "update", "patch"], [batch], ["jobs"]),
      rule(["update"], [batch], ["jobs/status"]),
      rule(["update"], [batch], ["jobs/finalizers"]),
      rule(["list", "watch", "create", "delete", "patch"], [core], ["pods"]),
      events,
    ]),
    role("namespace-controller", ["namespace-controller"], [
      // orch: "update" on namespaces too, as its loop removes the metadata finalizer it put there with an update of the namespace.
      rule(["get", "list", "watch", "delete", "update"], [core], ["namespaces"]),
      rule(["update"], [core], ["namespaces/finalize", "namespaces/status"]),
      rule(["get", "list", "delete", "deletecollection"], ["*"], ["*"]),
    ]),
    role("node-controller", ["node-lifecycle-controller"], [
      rule(["get", "list", "update", "delete", "patch"], [core], ["nodes"]),
      rule(["patch", "update"], [core], ["nodes/status"]),
      rule(["update"], [core], ["pods/status"]),
      rule(["list", "delete"], [core], ["pods"]),
      events,
    ]),
    // Upstream's node-controller did this until the taint eviction loop got its own account (v1.29): that account's rights.
    role("taint-eviction-controller", ["taint-eviction-controller"], [
      rule(["update"], [core], ["pods/status"]),
      rule(["list", "watch", "delete", "get"], [core], ["pods"]),
      rule(["list", "watch", "get"], [core], ["nodes"]),
      events,
    ]),
    role("persistent-volume-binder", ["persistentvolume-binder-controller"], [
      rule(["get", "list", "watch", "update", "create", "delete"], [core], ["persistentvolumes"]),
      rule(["update"], [core], ["persistentvolumes/status"]),
      rule(["get", "list", "watch", "update"], [core], ["persistentvolumeclaims"]),
      rule(["update"], [core], ["persistentvolumeclaims/status"]),
      rule(["list", "watch", "get", "create", "delete"], [core], ["pods"]),
      rule(READ, [storage], ["storageclasses"]),
      rule(["get", "create", "update", "delete"], [core], ["endpoints"]),
      rule(["get", "create", "delete"], [core], ["services"]),
      rule(["get"], [core], ["secrets"]),
      rule(["get", "list"], [core], ["nodes"]),
      rule(["watch"], [core], ["events"]),
      events,
    ]),
    // No upstream role (rancher's provisioner runs as a pod): it makes PersistentVolumes for claims handed to it.
    role("local-path-provisioner", ["local-path-provisioner"], [
      rule(["get", "list", "watch", "create", "delete"], [core], ["persistentvolumes"]),
      rule(READ, [core], ["persistentvolumeclaims", "nodes"]),
      rule(READ, [storage], ["storageclasses"]),
      events,
    ]),
    role("pod-garbage-collector", ["pod-garbage-collector-controller"], [
      rule(["list", "watch", "delete"], [core], ["pods"]),
      rule(["get", "list"], [core], ["nodes"]),
      // orch: a pod on a gone node is first marked failed (upstream v1.26+: the role gained pods/status patch).
      rule(["patch", "update"], [core], ["pods/status"]),
    ]),
    role("replicaset-controller", ["replicaset-controller"], [
      rule(["get", "list", "watch", "update"], [apps], ["replicasets"]),
      rule(["update"], [apps], ["replicasets/status"]),
      rule(["update"], [apps], ["replicasets/finalizers"]),
      rule(["list", "watch", "patch", "create", "delete"], [core], ["pods"]),
      events,
    ]),
    role("replication-controller", ["replicationcontroller-controller"], [
      rule(["get", "list", "watch", "update"], [core], ["replicationcontrollers"]),
      rule(["update"], [core], ["replicationcontrollers/status"]),
      rule(["update"], [core], ["replicationcontrollers/finalizers"]),
      rule(["list", "watch", "patch", "create", "delete"], [core], ["pods"]),
      events,
    ]),
    role("resourcequota-controller", ["resourcequota-controller"], [
      rule(["list", "watch"], ["*"], ["*"]),
      rule(["update"], [core], ["resourcequotas/status"]),
      events,
    ]),
    role("service-account-controller", ["serviceaccount-controller"], [
      rule(["create"], [core], ["serviceaccounts"]),
      events,
    ]),
    role("statefulset-controller", ["statefulset-controller"], [
      rule(["list", "watch"], [core], ["pods"]),
      rule(READ, [apps], ["statefulsets"]),
      rule(["update"], [apps], ["statefulsets/status"]),
      rule(["update"], [apps], ["statefulsets/finalizers"]),
      rule(["get", "create", "delete", "update", "patch"], [core], ["pods"]),
      rule(["get", "create", "delete", "update", "patch", "list", "watch"], [apps], ["controllerrevisions"]),
      // update/patch/delete as upstream since 1.27: the claims' retention policy (StatefulSetAutoDeletePVC) sets their owners.
      rule(["get", "create", "delete", "update", "patch"], [core], ["persistentvolumeclaims"]),
      events,
    ]),
    role("certificate-controller", ["csrapproving-controller", "csrsigning-controller"], [
      rule(["get", "list", "watch", "delete"], [certificates], ["certificatesigningrequests"]),
      rule(["update"], [certificates], ["certificatesigningrequests/status", "certificatesigningrequests/approval"]),
      rule(["approve"], [certificates], ["signers"], [signers.agentClient]),
      rule(["sign"], [certificates], ["signers"], [signers.legacyUnknown, signers.apiServerClient, signers.agentClient, signers.agentServing]),
      rule(["create"], [naming.authorizationGroup], ["subjectaccessreviews"]),
      events,
    ]),
    role("pvc-protection-controller", ["persistentvolumeclaim-protection-controller"], [
      rule(["get", "list", "watch", "update"], [core], ["persistentvolumeclaims"]),
      rule(["list", "watch", "get"], [core], ["pods"]),
      events,
    ]),
    role("pv-protection-controller", ["persistentvolume-protection-controller"], [
      rule(["get", "list", "watch", "update"], [core], ["persistentvolumes"]),
      events,
    ]),
    role("horizontal-pod-autoscaler", ["horizontal-pod-autoscaler-controller"], [
      rule(READ, ["autoscaling"], ["horizontalpodautoscalers"]),
      rule(["update"], ["autoscaling"], ["horizontalpodautoscalers/status"]),
      rule(["get", "update"], ["*"], ["*/scale"]),
      rule(["list"], [core], ["pods"]),
      // Resource metrics (metrics.k8s.io keeps upstream's name on both profiles: kubectl top asks for it).
      rule(["list"], ["metrics.k8s.io"], ["pods"]),
      events,
    ]),
    role("ttl-after-finished-controller", ["ttl-after-finished-controller"], [
      rule(["get", "list", "watch", "delete"], [batch], ["jobs"]),
      events,
    ]),
    role("root-ca-cert-publisher", ["root-ca-cert-publisher-controller"], [
      rule(["create", "update"], [core], ["configmaps"]),
      events,
    ]),
    // Upstream's is a Role in kube-system: bootstrap-token Secrets live there only.
    role("token-cleaner", ["token-cleaner-controller"], [
      rule(["get", "list", "watch", "delete"], [core], ["secrets"]),
      events,
    ], true),
  ];
}

/** The account a controller runs under with --use-service-account-credentials; undefined: none (it keeps the manager's credentials). */
export function controllerAccount(naming: Naming, controller: string): string | undefined {
  return controllerRoles(naming).find((r) => r.controllers.includes(controller))?.account;
}
