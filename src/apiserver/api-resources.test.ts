// `kubectl api-resources` on orch (the k8s.io naming profile) against
// upstream's: the resources, short names, scope, kind and verbs. The
// upstream list is checked in below: v1.23.16's kube-apiserver (default
// flags, on etcd) as `kubectl api-resources -o wide` printed it, and the
// changes to v1.33's default list (APIs that are GA or beta-and-on in 1.33).
// What orch leaves out is LEFT_OUT, each with the reason docs/apiserver.md
// gives ("Served kinds compared with upstream v1.33"); a kind added to either
// side without updating this list fails here.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { builtinModules } from "../api/index.js";
import { packageRoot } from "../component/package-root.js";
import { startTestServer, type TestServer } from "./testing/harness.js";

const ALL = "create,delete,deletecollection,get,list,patch,update,watch";
type Row = [name: string, shortNames: string, namespaced: boolean, kind: string, verbs: string];

/** v1.23.16, `kubectl api-resources -o wide` (kube-apiserver on etcd, default flags). */
const UPSTREAM_1_23: Row[] = [
  ["bindings", "", true, "Binding", "create"],
  ["componentstatuses", "cs", false, "ComponentStatus", "get,list"],
  ["configmaps", "cm", true, "ConfigMap", ALL],
  ["endpoints", "ep", true, "Endpoints", ALL],
  ["events", "ev", true, "Event", ALL],
  ["limitranges", "limits", true, "LimitRange", ALL],
  ["namespaces", "ns", false, "Namespace", "create,delete,get,list,patch,update,watch"],
  ["nodes", "no", false, "Node", ALL],
  ["persistentvolumeclaims", "pvc", true, "PersistentVolumeClaim", ALL],
  ["persistentvolumes", "pv", false, "PersistentVolume", ALL],
  ["pods", "po", true, "Pod", ALL],
  ["podtemplates", "", true, "PodTemplate", ALL],
  ["replicationcontrollers", "rc", true, "ReplicationController", ALL],
  ["resourcequotas", "quota", true, "ResourceQuota", ALL],
  ["secrets", "", true, "Secret", ALL],
  ["serviceaccounts", "sa", true, "ServiceAccount", ALL],
  ["services", "svc", true, "Service", ALL],
  ["mutatingwebhookconfigurations.admissionregistration.k8s.io", "", false, "MutatingWebhookConfiguration", ALL],
  ["validatingwebhookconfigurations.admissionregistration.k8s.io", "", false, "ValidatingWebhookConfiguration", ALL],
  ["customresourcedefinitions.apiextensions.k8s.io", "crd,crds", false, "CustomResourceDefinition", ALL],
  ["apiservices.apiregistration.k8s.io", "", false, "APIService", ALL],
  ["controllerrevisions.apps", "", true, "ControllerRevision", ALL],
  ["daemonsets.apps", "ds", true, "DaemonSet", ALL],
  ["deployments.apps", "deploy", true, "Deployment", ALL],
  ["replicasets.apps", "rs", true, "ReplicaSet", ALL],
  ["statefulsets.apps", "sts", true, "StatefulSet", ALL],
  ["tokenreviews.authentication.k8s.io", "", false, "TokenReview", "create"],
  ["localsubjectaccessreviews.authorization.k8s.io", "", true, "LocalSubjectAccessReview", "create"],
  ["selfsubjectaccessreviews.authorization.k8s.io", "", false, "SelfSubjectAccessReview", "create"],
  ["selfsubjectrulesreviews.authorization.k8s.io", "", false, "SelfSubjectRulesReview", "create"],
  ["subjectaccessreviews.authorization.k8s.io", "", false, "SubjectAccessReview", "create"],
  ["horizontalpodautoscalers.autoscaling", "hpa", true, "HorizontalPodAutoscaler", ALL],
  ["cronjobs.batch", "cj", true, "CronJob", ALL],
  ["jobs.batch", "", true, "Job", ALL],
  ["certificatesigningrequests.certificates.k8s.io", "csr", false, "CertificateSigningRequest", ALL],
  ["leases.coordination.k8s.io", "", true, "Lease", ALL],
  ["endpointslices.discovery.k8s.io", "", true, "EndpointSlice", ALL],
  ["events.events.k8s.io", "ev", true, "Event", ALL],
  ["flowschemas.flowcontrol.apiserver.k8s.io", "", false, "FlowSchema", ALL],
  ["prioritylevelconfigurations.flowcontrol.apiserver.k8s.io", "", false, "PriorityLevelConfiguration", ALL],
  ["ingressclasses.networking.k8s.io", "", false, "IngressClass", ALL],
  ["ingresses.networking.k8s.io", "ing", true, "Ingress", ALL],
  ["networkpolicies.networking.k8s.io", "netpol", true, "NetworkPolicy", ALL],
  ["runtimeclasses.node.k8s.io", "", false, "RuntimeClass", ALL],
  ["poddisruptionbudgets.policy", "pdb", true, "PodDisruptionBudget", ALL],
  ["podsecuritypolicies.policy", "psp", false, "PodSecurityPolicy", ALL],
  ["clusterrolebindings.rbac.authorization.k8s.io", "", false, "ClusterRoleBinding", ALL],
  ["clusterroles.rbac.authorization.k8s.io", "", false, "ClusterRole", ALL],
  ["rolebindings.rbac.authorization.k8s.io", "", true, "RoleBinding", ALL],
  ["roles.rbac.authorization.k8s.io", "", true, "Role", ALL],
  ["priorityclasses.scheduling.k8s.io", "pc", false, "PriorityClass", ALL],
  ["csidrivers.storage.k8s.io", "", false, "CSIDriver", ALL],
  ["csinodes.storage.k8s.io", "", false, "CSINode", ALL],
  ["csistoragecapacities.storage.k8s.io", "", true, "CSIStorageCapacity", ALL],
  ["storageclasses.storage.k8s.io", "sc", false, "StorageClass", ALL],
  ["volumeattachments.storage.k8s.io", "", false, "VolumeAttachment", ALL],

];

/** Gone from v1.33's default list: PodSecurityPolicy (removed in 1.25). */
const REMOVED_BY_1_33 = ["podsecuritypolicies.policy"];
/** New in v1.33's default list since 1.23 (GA, or beta and on by default). */
const ADDED_BY_1_33: Row[] = [
  ["selfsubjectreviews.authentication.k8s.io", "", false, "SelfSubjectReview", "create"],
  ["validatingadmissionpolicies.admissionregistration.k8s.io", "", false, "ValidatingAdmissionPolicy", ALL],
  ["validatingadmissionpolicybindings.admissionregistration.k8s.io", "", false, "ValidatingAdmissionPolicyBinding", ALL],
  ["ipaddresses.networking.k8s.io", "ip", false, "IPAddress", ALL],
  ["servicecidrs.networking.k8s.io", "", false, "ServiceCIDR", ALL],
];

/** What orch does not list, by name (none now; docs/apiserver.md would give the reason for each). */
const LEFT_OUT: string[] = [];

/**
 * What orch lists beyond upstream's default list: the resource metrics API, which upstream serves only
 * once metrics-server is installed (its rows as metrics-server registers them).
 */
const ADDED_BY_ORCH: Row[] = [
  ["nodes.metrics.k8s.io", "", false, "NodeMetrics", "get,list"],
  ["pods.metrics.k8s.io", "", true, "PodMetrics", "get,list"],
];

const UPSTREAM_1_33: Row[] = [...UPSTREAM_1_23.filter((r) => !REMOVED_BY_1_33.includes(r[0])), ...ADDED_BY_1_33];

interface Listed {
  name: string;
  singularName?: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
}

let t: TestServer;
before(async () => {
  t = await startTestServer({ modules: builtinModules(), groupSuffix: "k8s.io" });
});
after(() => t.close());

/** What kubectl api-resources reads: every group's preferred version, then resources only other versions serve. */
async function served(): Promise<Map<string, Row>> {
  const out = new Map<string, Row>();
  const add = (group: string, resources: Listed[]) => {
    for (const r of resources) {
      if (r.name.includes("/")) continue;
      const name = group === "" ? r.name : `${r.name}.${group}`;
      if (!out.has(name)) out.set(name, [name, [...(r.shortNames ?? [])].join(","), r.namespaced, r.kind, [...r.verbs].sort().join(",")]);
    }
  };
  add("", (await t.request("GET", "/api/v1")).json.resources);
  const groups = (await t.request("GET", "/apis")).json.groups as { name: string; preferredVersion: { groupVersion: string }; versions: { groupVersion: string }[] }[];
  for (const g of groups) {
    const order = [g.preferredVersion.groupVersion, ...g.versions.map((v) => v.groupVersion).filter((v) => v !== g.preferredVersion.groupVersion)];
    for (const gv of order) add(g.name, (await t.request("GET", `/apis/${gv}`)).json.resources);
  }
  return out;
}

test("orch lists every resource of upstream v1.33's default list but LEFT_OUT, the metrics API, and nothing else", async () => {
  const ours = await served();
  const expected = [...UPSTREAM_1_33.map((r) => r[0]).filter((n) => !LEFT_OUT.includes(n)), ...ADDED_BY_ORCH.map((r) => r[0])].sort();
  assert.deepEqual([...ours.keys()].sort(), expected);
});

test("each listed resource has upstream's short names, scope, kind and verbs", async () => {
  const ours = await served();
  const differences: string[] = [];
  for (const row of [...UPSTREAM_1_33, ...ADDED_BY_ORCH]) {
    const mine = ours.get(row[0]);
    if (mine === undefined) continue;
    if (JSON.stringify(mine) !== JSON.stringify(row)) differences.push(`${JSON.stringify(mine)} (upstream ${JSON.stringify(row)})`);
  }
  assert.deepEqual(differences, []);
});

test("docs/apiserver.md names every resource left out, in its comparison table", () => {
  const doc = readFileSync(join(packageRoot(), "docs", "apiserver.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Served kinds compared with upstream v1.33"));
  const table = section.slice(0, section.indexOf("\n## ", 5) < 0 ? undefined : section.indexOf("\n## ", 5));
  const missing = LEFT_OUT.filter((name) => !table.includes(`\`${name.split(".")[0]}\``));
  assert.deepEqual(missing, []);
});
