// RBAC against the real server (--authorization-mode=RBAC): users with
// tokens of a test authenticator, roles and bindings created through the API
// by the admin, then a matrix of requests → allowed or 403 (cluster vs
// namespace bindings, Role vs ClusterRole in a RoleBinding, groups, service
// accounts, resourceNames, subresources, non-resource URLs), upstream's 403
// text, and the rbac kinds' validation and table.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { UserInfo } from "../filters/index.js";
import type { TestServer } from "../testing/harness.js";
import { AUTHENTICATED, RBAC, RBAC_GROUP as GROUP, rbacTestServer, type RbacTestServer } from "./testing.js";
import { serviceAccountGroups, serviceAccountUser } from "./rbac.js";


const USERS: Record<string, UserInfo> = {
  alice: { name: "alice", groups: [AUTHENTICATED] },
  bob: { name: "bob", groups: [AUTHENTICATED] },
  carol: { name: "carol", groups: ["readers", "monitors", AUTHENTICATED] },
  builder: { name: serviceAccountUser("team-a", "builder"), groups: [...serviceAccountGroups("team-a"), AUTHENTICATED] },
  dave: { name: "dave", groups: [AUTHENTICATED] },
  eve: { name: "eve", groups: [AUTHENTICATED] },
  viewer: { name: "viewer", groups: [AUTHENTICATED] },
  editor: { name: "editor", groups: [AUTHENTICATED] },
  nsadmin: { name: "nsadmin", groups: [AUTHENTICATED] },
};

const rule = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]) => ({ verbs, apiGroups, resources, ...(resourceNames ? { resourceNames } : {}) });
const user = (name: string) => ({ kind: "User", name });
const group = (name: string) => ({ kind: "Group", name });
const ref = (kind: string, name: string) => ({ apiGroup: GROUP, kind, name });

describe("RBAC authorizer", () => {
  let t: TestServer;
  let s: RbacTestServer;
  const as = (who: string, method: string, path: string, body?: unknown) => s.as(who, method, path, body);
  const create = (path: string, body: object) => s.create(path, body);

  before(async () => {
    s = await rbacTestServer(USERS, { namespaces: ["team-a", "team-b"] });
    t = s.t;
    const v1 = `${GROUP}/v1`;
    await create(`${RBAC}/clusterroles`, { apiVersion: v1, kind: "ClusterRole", metadata: { name: "pod-reader" }, rules: [rule(["get", "list", "watch"], [""], ["pods"])] });
    await create(`${RBAC}/clusterroles`, { apiVersion: v1, kind: "ClusterRole", metadata: { name: "one-configmap" }, rules: [rule(["get", "list", "watch"], [""], ["configmaps"], ["allowed"])] });
    await create(`${RBAC}/clusterroles`, { apiVersion: v1, kind: "ClusterRole", metadata: { name: "monitoring" }, rules: [{ verbs: ["get"], nonResourceURLs: ["/metrics", "/debug/*"] }] });
    await create(`${RBAC}/clusterroles`, { apiVersion: v1, kind: "ClusterRole", metadata: { name: "scaler" }, rules: [rule(["*"], ["*"], ["*/scale"])] });
    await create(`${RBAC}/namespaces/team-a/roles`, {
      apiVersion: v1, kind: "Role", metadata: { name: "dev", namespace: "team-a" },
      rules: [rule(["*"], ["apps"], ["deployments"]), rule(["get", "list"], [""], ["pods", "pods/log"])],
    });
    await create(`${RBAC}/namespaces/team-a/rolebindings`, { apiVersion: v1, kind: "RoleBinding", metadata: { name: "alice-dev" }, subjects: [user("alice")], roleRef: ref("Role", "dev") });
    await create(`${RBAC}/namespaces/team-b/rolebindings`, { apiVersion: v1, kind: "RoleBinding", metadata: { name: "readers" }, subjects: [group("readers")], roleRef: ref("ClusterRole", "pod-reader") });
    await create(`${RBAC}/namespaces/team-a/rolebindings`, {
      apiVersion: v1, kind: "RoleBinding", metadata: { name: "builder-cm" }, subjects: [{ kind: "ServiceAccount", name: "builder" }], roleRef: ref("ClusterRole", "one-configmap"),
    });
    await create(`${RBAC}/namespaces/team-b/rolebindings`, { apiVersion: v1, kind: "RoleBinding", metadata: { name: "eve-scale" }, subjects: [user("eve")], roleRef: ref("ClusterRole", "scaler") });
    // The user-facing bootstrap roles, granted in team-a only.
    for (const [who, role] of [["viewer", "view"], ["editor", "edit"], ["nsadmin", "admin"]] as const) {
      await create(`${RBAC}/namespaces/team-a/rolebindings`, { apiVersion: v1, kind: "RoleBinding", metadata: { name: `${who}-${role}` }, subjects: [user(who)], roleRef: ref("ClusterRole", role) });
    }
    await create(`${RBAC}/clusterrolebindings`, { apiVersion: v1, kind: "ClusterRoleBinding", metadata: { name: "bob-reader" }, subjects: [user("bob")], roleRef: ref("ClusterRole", "pod-reader") });
    await create(`${RBAC}/clusterrolebindings`, { apiVersion: v1, kind: "ClusterRoleBinding", metadata: { name: "monitors" }, subjects: [group("monitors")], roleRef: ref("ClusterRole", "monitoring") });
    await create(`${RBAC}/clusterrolebindings`, { apiVersion: v1, kind: "ClusterRoleBinding", metadata: { name: "dangling" }, subjects: [user("dave")], roleRef: ref("ClusterRole", "missing") });
    // The authorizer reads the watch caches: wait until they hold every binding and role (the bootstrap ones too: 7 and 4).
    const expected: Record<string, number> = { roles: 1, clusterroles: 4 + 7, rolebindings: 7, clusterrolebindings: 3 + 4 };
    for (const [resource, n] of Object.entries(expected)) await s.cached(resource, n);
  });
  after(() => t?.close());

  const MATRIX: [who: string, method: string, path: string, allowed: boolean][] = [
    // A RoleBinding to a Role: its namespace only, its verbs and resources only.
    ["alice", "GET", "/api/v1/namespaces/team-a/pods", true],
    ["alice", "GET", "/api/v1/namespaces/team-b/pods", false],
    ["alice", "GET", "/api/v1/pods", false],
    ["alice", "DELETE", "/apis/apps/v1/namespaces/team-a/deployments/web", true],
    ["alice", "DELETE", "/apis/apps/v1/namespaces/team-b/deployments/web", false],
    ["alice", "DELETE", "/api/v1/namespaces/team-a/pods/web", false],
    ["alice", "GET", "/api/v1/namespaces/team-a/configmaps", false],
    ["alice", "GET", "/api/v1/nodes", false],
    // Subresources: pods/log is granted, pods/status is not.
    ["alice", "GET", "/api/v1/namespaces/team-a/pods/web/log", true],
    ["alice", "GET", "/api/v1/namespaces/team-a/pods/web/status", false],
    // `*/scale`: the scale subresource of anything, not the object itself.
    ["eve", "GET", "/apis/apps/v1/namespaces/team-b/deployments/web/scale", true],
    ["eve", "GET", "/apis/apps/v1/namespaces/team-b/deployments/web", false],
    ["eve", "GET", "/apis/apps/v1/namespaces/team-a/deployments/web/scale", false],
    // A ClusterRoleBinding: every namespace and the cluster scope.
    ["bob", "GET", "/api/v1/namespaces/team-b/pods", true],
    ["bob", "GET", "/api/v1/namespaces/team-a/pods/web", true],
    ["bob", "GET", "/api/v1/pods", true],
    ["bob", "GET", "/api/v1/pods?watch=1&timeoutSeconds=1", true],
    ["bob", "DELETE", "/api/v1/namespaces/team-a/pods/web", false],
    ["bob", "GET", "/apis/apps/v1/namespaces/team-a/deployments", false],
    // A RoleBinding to a ClusterRole, through a group: that namespace only.
    ["carol", "GET", "/api/v1/namespaces/team-b/pods", true],
    ["carol", "GET", "/api/v1/namespaces/team-a/pods", false],
    ["carol", "GET", "/api/v1/pods", false],
    // Non-resource URLs: exact and trailing `*`.
    ["carol", "GET", "/metrics", true],
    ["carol", "GET", "/debug/pprof/", true],
    ["carol", "GET", "/debug", false],
    ["carol", "GET", "/flagz", false],
    ["alice", "GET", "/metrics", false],
    // The bootstrap policy: discovery for every authenticated user, health and version for everyone.
    ["alice", "GET", "/api", true],
    ["alice", "GET", "/apis/apps/v1", true],
    ["alice", "GET", "/openapi/v2", true],
    ["anonymous", "GET", "/healthz", true],
    ["anonymous", "GET", "/readyz/etcd", true],
    ["anonymous", "GET", "/version", true],
    // A service account subject without a namespace is in its binding's; resourceNames.
    ["builder", "GET", "/api/v1/namespaces/team-a/configmaps/allowed", true],
    ["builder", "GET", "/api/v1/namespaces/team-a/configmaps?fieldSelector=metadata.name%3Dallowed", true],
    ["builder", "GET", "/api/v1/namespaces/team-a/configmaps/other", false],
    ["builder", "GET", "/api/v1/namespaces/team-a/configmaps", false],
    ["builder", "GET", "/api/v1/namespaces/team-b/configmaps/allowed", false],
    ["dave", "GET", "/api/v1/namespaces/team-a/pods", false],
    // The bootstrap roles view ⊂ edit ⊂ admin, bound in team-a: reads, writes, secrets, RBAC, and nothing outside team-a.
    ["viewer", "GET", "/api/v1/namespaces/team-a/pods", true],
    ["viewer", "GET", "/apis/apps/v1/namespaces/team-a/deployments", true],
    ["viewer", "GET", "/api/v1/namespaces/team-a/secrets", false],
    ["viewer", "DELETE", "/apis/apps/v1/namespaces/team-a/deployments/web", false],
    ["viewer", "GET", "/api/v1/namespaces/team-b/pods", false],
    ["viewer", "GET", `${RBAC}/namespaces/team-a/roles`, false],
    ["editor", "DELETE", "/apis/apps/v1/namespaces/team-a/deployments/web", true],
    ["editor", "GET", "/api/v1/namespaces/team-a/secrets", true],
    ["editor", "DELETE", "/api/v1/namespaces/team-a/secrets/x", true],
    ["editor", "GET", `${RBAC}/namespaces/team-a/roles`, false],
    ["editor", "DELETE", `${RBAC}/namespaces/team-a/rolebindings/alice-dev`, false],
    ["editor", "GET", "/api/v1/namespaces/team-b/secrets", false],
    ["editor", "DELETE", "/api/v1/namespaces/team-a/resourcequotas/q", false],
    ["nsadmin", "GET", `${RBAC}/namespaces/team-a/roles`, true],
    ["nsadmin", "GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings", true],
    ["nsadmin", "DELETE", `${RBAC}/namespaces/team-a/rolebindings/nothing`, true],
    ["nsadmin", "GET", "/api/v1/namespaces/team-a/resourcequotas", true],
    ["nsadmin", "DELETE", "/api/v1/namespaces/team-a/resourcequotas/q", false],
    ["nsadmin", "DELETE", "/api/v1/namespaces/team-a", false],
    ["nsadmin", "GET", `${RBAC}/namespaces/team-b/roles`, false],
    ["nsadmin", "GET", `${RBAC}/clusterroles`, false],
    ["nsadmin", "GET", "/api/v1/nodes", false],
    // system:masters (the admin token) is always allowed.
    ["admin", "GET", "/api/v1/nodes", true],
    ["admin", "GET", "/metrics", true],
  ];

  for (const [who, method, path, allowed] of MATRIX) {
    test(`${who} ${method} ${path} → ${allowed ? "allowed" : "403"}`, async () => {
      const r = who === "admin" ? await t.request(method, path) : who === "anonymous" ? await t.request(method, path, { headers: { authorization: "" } }) : await as(who, method, path);
      if (allowed) assert.ok(r.status !== 403 && r.status !== 401, `${r.status}: ${r.text}`);
      else assert.equal(r.status, 403, r.text);
    });
  }

  test("escalation with the bootstrap roles: admin may bind edit in its namespace, not cluster-admin nor elsewhere; edit may bind nothing", async () => {
    const v1 = `${GROUP}/v1`;
    const bindTo = (name: string, ns: string, role: string) => ({ apiVersion: v1, kind: "RoleBinding", metadata: { name, namespace: ns }, subjects: [user("someone")], roleRef: ref("ClusterRole", role) });
    const ok = await as("nsadmin", "POST", `${RBAC}/namespaces/team-a/rolebindings`, bindTo("someone-edit", "team-a", "edit"));
    assert.equal(ok.status, 201, ok.text);
    const up = await as("nsadmin", "POST", `${RBAC}/namespaces/team-a/rolebindings`, bindTo("someone-root", "team-a", "cluster-admin"));
    assert.equal(up.status, 403, up.text);
    assert.match(up.json.message, /user "nsadmin" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held/);
    const elsewhere = await as("nsadmin", "POST", `${RBAC}/namespaces/team-b/rolebindings`, bindTo("someone-edit", "team-b", "edit"));
    assert.equal(elsewhere.status, 403, elsewhere.text);
    const editor = await as("editor", "POST", `${RBAC}/namespaces/team-a/rolebindings`, bindTo("editor-view", "team-a", "view"));
    assert.equal(editor.status, 403, editor.text);
    const role = await as("nsadmin", "POST", `${RBAC}/namespaces/team-a/roles`, { apiVersion: v1, kind: "Role", metadata: { name: "nodes", namespace: "team-a" }, rules: [rule(["get"], [""], ["nodes"])] });
    assert.equal(role.status, 403, "a Role granting what admin lacks: " + role.text);
  });

  test("the 403 is upstream's Status, in the namespace or at the cluster scope", async () => {
    const r = await as("alice", "GET", "/api/v1/namespaces/team-b/pods");
    assert.equal(r.json.kind, "Status");
    assert.equal(r.json.reason, "Forbidden");
    assert.equal(r.json.message, 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"');
    const nodes = await as("alice", "GET", "/api/v1/nodes/n1");
    assert.equal(nodes.json.message, 'nodes "n1" is forbidden: User "alice" cannot get resource "nodes" in API group "" at the cluster scope');
    const status = await as("alice", "GET", "/api/v1/namespaces/team-a/pods/web/status");
    assert.equal(status.json.message, 'pods "web" is forbidden: User "alice" cannot get resource "pods/status" in API group "" in the namespace "team-a"');
    const path = await as("alice", "GET", "/metrics");
    assert.equal(path.json.message, 'forbidden: User "alice" cannot get path "/metrics"');
  });

  test("a binding to a missing role is named in the 403", async () => {
    const r = await as("dave", "GET", "/api/v1/namespaces/team-a/pods");
    assert.equal(r.json.message, `pods is forbidden: User "dave" cannot list resource "pods" in API group "" in the namespace "team-a": RBAC: clusterrole.${GROUP} "missing" not found`);
  });

  test("a new binding takes effect without a restart, a deleted one stops", async () => {
    const path = "/api/v1/namespaces/team-b/pods";
    assert.equal((await as("alice", "GET", path)).status, 403);
    await create(`${RBAC}/namespaces/team-b/rolebindings`, { apiVersion: `${GROUP}/v1`, kind: "RoleBinding", metadata: { name: "alice-read" }, subjects: [user("alice")], roleRef: ref("ClusterRole", "pod-reader") });
    await eventually(async () => (await as("alice", "GET", path)).status === 200);
    assert.equal((await t.request("DELETE", `${RBAC}/namespaces/team-b/rolebindings/alice-read`)).status, 200);
    await eventually(async () => (await as("alice", "GET", path)).status === 403);
  });

  test("validation: verbs, apiGroups/resources, non-resource URLs in a Role, roleRef and subjects", async () => {
    const bad = async (path: string, body: object, message: RegExp) => {
      const r = await t.request("POST", path, { body });
      assert.equal(r.status, 422, r.text);
      assert.match(r.json.message, message);
    };
    await bad(`${RBAC}/clusterroles`, { apiVersion: `${GROUP}/v1`, kind: "ClusterRole", metadata: { name: "x" }, rules: [{ apiGroups: [""], resources: ["pods"] }] },
      /rules\[0\]\.verbs: Required value: verbs must contain at least one value/);
    await bad(`${RBAC}/clusterroles`, { apiVersion: `${GROUP}/v1`, kind: "ClusterRole", metadata: { name: "x" }, rules: [{ verbs: ["get"] }] },
      /rules\[0\]\.apiGroups: Required value: resource rules must supply at least one api group/);
    await bad(`${RBAC}/namespaces/team-a/roles`, { apiVersion: `${GROUP}/v1`, kind: "Role", metadata: { name: "x" }, rules: [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }] },
      /namespaced rules cannot apply to non-resource URLs/);
    await bad(`${RBAC}/clusterrolebindings`, { apiVersion: `${GROUP}/v1`, kind: "ClusterRoleBinding", metadata: { name: "x" }, roleRef: ref("Role", "dev") },
      /roleRef\.kind: Unsupported value: "Role": supported values: "ClusterRole"/);
    await bad(`${RBAC}/clusterrolebindings`, { apiVersion: `${GROUP}/v1`, kind: "ClusterRoleBinding", metadata: { name: "x" }, roleRef: ref("ClusterRole", "view"), subjects: [{ kind: "ServiceAccount", name: "sa" }] },
      /subjects\[0\]\.namespace: Required value/);
    await bad(`${RBAC}/namespaces/team-a/rolebindings`, { apiVersion: `${GROUP}/v1`, kind: "RoleBinding", metadata: { name: "x" }, roleRef: ref("Role", "dev"), subjects: [{ kind: "Robot", name: "r2" }] },
      /subjects\[0\]\.kind: Unsupported value: "Robot"/);
    const patch = await t.request("PATCH", `${RBAC}/namespaces/team-a/rolebindings/alice-dev`, {
      headers: { "content-type": "application/merge-patch+json" }, body: { roleRef: { kind: "ClusterRole", name: "pod-reader" } },
    });
    assert.equal(patch.status, 422, patch.text);
    assert.match(patch.json.message, /roleRef: Invalid value: .*cannot change roleRef/);
  });

  test("User and Group subjects default to the RBAC group; the binding table shows the role and, wide, the subjects", async () => {
    const got = await t.request("GET", `${RBAC}/namespaces/team-a/rolebindings/alice-dev`);
    assert.deepEqual(got.json.subjects, [{ kind: "User", apiGroup: GROUP, name: "alice" }]);
    const table = await t.request("GET", `${RBAC}/namespaces/team-a/rolebindings?includeObject=None`, { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } });
    assert.deepEqual(table.json.columnDefinitions.map((c: { name: string; priority: number }) => `${c.name}:${c.priority}`), ["Name:0", "Role:0", "Age:0", "Users:1", "Groups:1", "ServiceAccounts:1"]);
    const rows = Object.fromEntries(table.json.rows.map((r: { cells: unknown[] }) => [r.cells[0], r.cells]));
    assert.deepEqual([rows["alice-dev"][1], rows["alice-dev"][3]], ["Role/dev", "alice"]);
    // namespace/name as stored, as upstream prints it: this subject's namespace is its binding's, left empty.
    assert.deepEqual([rows["builder-cm"][1], rows["builder-cm"][5]], ["ClusterRole/one-configmap", "/builder"]);
  });

  test("a roleRef without apiGroup defaults to the RBAC group, as upstream's SetDefaults_RoleBinding", async () => {
    const body = { apiVersion: `${GROUP}/v1`, kind: "RoleBinding", metadata: { name: "no-group" }, roleRef: { apiGroup: "", kind: "Role", name: "dev" }, subjects: [{ kind: "User", name: "bob" }] };
    const created = await t.request("POST", `${RBAC}/namespaces/team-a/rolebindings`, { body });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json.roleRef, { apiGroup: GROUP, kind: "Role", name: "dev" });
    await t.request("DELETE", `${RBAC}/namespaces/team-a/rolebindings/no-group`);
  });

  test("discovery lists the four kinds", async () => {
    const r = await t.request("GET", RBAC);
    assert.deepEqual(r.json.resources.map((x: { name: string; namespaced: boolean }) => `${x.name}:${x.namespaced}`).sort(),
      ["clusterrolebindings:false", "clusterroles:false", "rolebindings:true", "roles:true"]);
  });
});

async function eventually(check: () => Promise<boolean>, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, "condition not reached in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
