// The bootstrap policy against the real server: created on first start,
// completed on the next start when an administrator removed parts of it
// (what they added stays), left alone under autoupdate "false"; and the
// default and AlwaysAllow authorization modes.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../../api/index.js";
import { TokenAuthenticator } from "../filters/index.js";
import { startTestServer } from "../testing/harness.js";

const GROUP = "rbac.authorization.orch.io";
const RBAC = `/apis/${GROUP}/v1`;
const MERGE = { "content-type": "application/merge-patch+json" };
const nobody = new TokenAuthenticator(new Map([["nobody-token", { name: "nobody", groups: ["system:authenticated"] }]]));

test("bootstrap roles and bindings: created, completed on restart keeping additions, autoupdate=false respected", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "orch-rbac-bootstrap-"));
  try {
    let t = await startTestServer({ modules: builtinModules(), dataDir });
    const admin = await t.request("GET", `${RBAC}/clusterroles/cluster-admin`);
    assert.equal(admin.status, 200, admin.text);
    assert.equal(admin.json.metadata.labels["kubernetes.io/bootstrapping"], "rbac-defaults");
    assert.deepEqual(admin.json.rules, [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }, { verbs: ["*"], nonResourceURLs: ["*"] }]);
    const roles = (await t.request("GET", `${RBAC}/clusterroles`)).json.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort();
    assert.deepEqual(roles, [
      "admin",
      "cluster-admin",
      "edit",
      "system:aggregate-to-admin",
      "system:aggregate-to-edit",
      "system:aggregate-to-view",
      "system:basic-user",
      "system:certificates.orch.io:certificatesigningrequests:nodeclient",
      "system:certificates.orch.io:certificatesigningrequests:selfnodeclient",
      "system:controller:certificate-controller",
      "system:controller:clusterrole-aggregation-controller",
      "system:controller:cronjob-controller",
      "system:controller:daemon-set-controller",
      "system:controller:deployment-controller",
      "system:controller:disruption-controller",
      "system:controller:endpoint-controller",
      "system:controller:endpointslice-controller",
      "system:controller:endpointslicemirroring-controller",
      "system:controller:generic-garbage-collector",
      "system:controller:horizontal-pod-autoscaler",
      "system:controller:job-controller",
      "system:controller:local-path-provisioner",
      "system:controller:namespace-controller",
      "system:controller:node-controller",
      "system:controller:persistent-volume-binder",
      "system:controller:pod-garbage-collector",
      "system:controller:pv-protection-controller",
      "system:controller:pvc-protection-controller",
      "system:controller:replicaset-controller",
      "system:controller:replication-controller",
      "system:controller:resourcequota-controller",
      "system:controller:root-ca-cert-publisher",
      "system:controller:service-account-controller",
      "system:controller:statefulset-controller",
      "system:controller:taint-eviction-controller",
      "system:controller:ttl-after-finished-controller",
      "system:discovery",
      "system:kubelet-api-admin",
      "system:monitoring",
      "system:node",
      "system:node-bootstrapper",
      "system:public-info-viewer",
      "system:service-account-issuer-discovery",
      "view",
    ]);
    // Aggregated as upstream's: view ⊂ edit ⊂ admin through labels, the rules already the union.
    const role = async (name: string) => (await t.request("GET", `${RBAC}/clusterroles/${name}`)).json;
    const [adminRole, editRole, viewRole, toView] = [await role("admin"), await role("edit"), await role("view"), await role("system:aggregate-to-view")];
    assert.deepEqual(viewRole.aggregationRule, { clusterRoleSelectors: [{ matchLabels: { [`${GROUP}/aggregate-to-view`]: "true" } }] });
    assert.equal(viewRole.metadata.labels[`${GROUP}/aggregate-to-edit`], "true");
    assert.equal(editRole.metadata.labels[`${GROUP}/aggregate-to-admin`], "true");
    assert.deepEqual(adminRole.aggregationRule.clusterRoleSelectors, [{ matchLabels: { [`${GROUP}/aggregate-to-admin`]: "true" } }]);
    assert.equal(toView.metadata.labels[`${GROUP}/aggregate-to-view`], "true");
    assert.deepEqual(viewRole.rules, toView.rules);
    const has = (rules: object[], r: object) => rules.some((x) => JSON.stringify(x) === JSON.stringify(r));
    for (const r of viewRole.rules) assert.ok(has(editRole.rules, r) && has(adminRole.rules, r), `view's ${JSON.stringify(r)} in edit and admin`);
    for (const r of editRole.rules) assert.ok(has(adminRole.rules, r), `edit's ${JSON.stringify(r)} in admin`);
    assert.ok(adminRole.rules.length > editRole.rules.length && editRole.rules.length > viewRole.rules.length);
    // The controllers' roles (controller-roles.ts), each bound to its account in the system namespace as upstream's.
    const deploymentBinding = (await t.request("GET", `${RBAC}/clusterrolebindings/system:controller:deployment-controller`)).json;
    assert.deepEqual(deploymentBinding.subjects, [{ kind: "ServiceAccount", name: "deployment-controller", namespace: "orch-system" }]);
    assert.deepEqual(deploymentBinding.roleRef, { apiGroup: GROUP, kind: "ClusterRole", name: "system:controller:deployment-controller" });
    // The token cleaner's is a Role and RoleBinding in the system namespace only.
    const cleaner = await t.request("GET", `${RBAC}/namespaces/orch-system/roles/system:controller:token-cleaner`);
    assert.equal(cleaner.status, 200, cleaner.text);
    assert.deepEqual(cleaner.json.rules[0], { verbs: ["get", "list", "watch", "delete"], apiGroups: [""], resources: ["secrets"] });
    const cleanerBinding = (await t.request("GET", `${RBAC}/namespaces/orch-system/rolebindings/system:controller:token-cleaner`)).json;
    assert.deepEqual(cleanerBinding.roleRef, { apiGroup: GROUP, kind: "Role", name: "system:controller:token-cleaner" });
    assert.equal((await t.request("GET", `${RBAC}/clusterroles/system:controller:token-cleaner`)).status, 404);
    const bindings = await t.request("GET", `${RBAC}/clusterrolebindings/cluster-admin`);
    assert.deepEqual(bindings.json.subjects, [{ kind: "Group", apiGroup: GROUP, name: "system:masters" }]);
    const viewRules = (await t.request("GET", `${RBAC}/clusterroles/view`)).json.rules;
    const editRules = (await t.request("GET", `${RBAC}/clusterroles/edit`)).json.rules;

    const extra = { verbs: ["get"], apiGroups: ["example.com"], resources: ["widgets"] };
    assert.equal((await t.request("PATCH", `${RBAC}/clusterroles/view`, { headers: MERGE, body: { rules: [viewRules[0], extra] } })).status, 200);
    // An older cluster's admin had no aggregationRule: the next start gives it one.
    assert.equal((await t.request("PATCH", `${RBAC}/clusterroles/admin`, { headers: MERGE, body: { aggregationRule: null } })).status, 200);
    assert.equal((await t.request("GET", `${RBAC}/clusterroles/admin`)).json.aggregationRule, undefined);
    assert.equal((await t.request("PATCH", `${RBAC}/clusterrolebindings/system:public-info-viewer`, { headers: MERGE, body: { subjects: [{ kind: "Group", name: "system:authenticated" }] } })).status, 200);
    assert.equal((await t.request("PATCH", `${RBAC}/clusterroles/edit`, {
      headers: MERGE, body: { metadata: { annotations: { "rbac.authorization.kubernetes.io/autoupdate": "false" } }, rules: [editRules[0]] },
    })).status, 200);
    await t.close();

    t = await startTestServer({ modules: builtinModules(), dataDir });
    const view = (await t.request("GET", `${RBAC}/clusterroles/view`)).json.rules;
    assert.deepEqual(view, [viewRules[0], extra, ...viewRules.slice(1)], "missing rules added after the administrator's");
    assert.deepEqual((await t.request("GET", `${RBAC}/clusterroles/admin`)).json.aggregationRule, adminRole.aggregationRule);
    const publicInfo = (await t.request("GET", `${RBAC}/clusterrolebindings/system:public-info-viewer`)).json.subjects.map((s: { name: string }) => s.name);
    assert.deepEqual(publicInfo, ["system:authenticated", "system:unauthenticated"]);
    assert.deepEqual((await t.request("GET", `${RBAC}/clusterroles/edit`)).json.rules, [editRules[0]], "autoupdate=false: left alone");
    await t.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("the default mode is RBAC where its kinds are served; AlwaysAllow lets any authenticated user through", async () => {
  const rbac = await startTestServer({ modules: builtinModules(), authenticators: [nobody] });
  try {
    const r = await rbac.request("GET", "/api/v1/namespaces/default/pods", { headers: { authorization: "Bearer nobody-token" } });
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json.message, 'pods is forbidden: User "nobody" cannot list resource "pods" in API group "" in the namespace "default"');
    assert.equal((await rbac.request("GET", "/api/v1/namespaces/default/pods")).status, 200, "the admin is in system:masters");
    assert.equal((await rbac.request("GET", "/apis", { headers: { authorization: "Bearer nobody-token" } })).status, 200, "system:discovery");
  } finally {
    await rbac.close();
  }
  const open = await startTestServer({ modules: builtinModules(), authenticators: [nobody], authorizationModes: ["AlwaysAllow"] });
  try {
    assert.equal((await open.request("GET", "/api/v1/namespaces/default/pods", { headers: { authorization: "Bearer nobody-token" } })).status, 200);
  } finally {
    await open.close();
  }
});
