// Escalation prevention against the real server (--authorization-mode=RBAC),
// in the style of rbac.test.ts: users with tokens of a test authenticator,
// a policy made by the admin, then a matrix of attempts to create and update
// roles and bindings → allowed or 403, with upstream's message naming the
// missing rules; `escalate` and `bind` (with resourceNames) as the ways
// around it; dry runs checked alike; system:masters exempt.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { UserInfo } from "../filters/index.js";
import type { TestServer } from "../testing/harness.js";
import { AUTHENTICATED, RBAC, RBAC_GROUP as GROUP, rbacTestServer, type RbacTestServer } from "./testing.js";

const V1 = `${GROUP}/v1`;

const USERS: Record<string, UserInfo> = {
  alice: { name: "alice", groups: [AUTHENTICATED] },
  escalator: { name: "escalator", groups: [AUTHENTICATED] },
  binder: { name: "binder", groups: [AUTHENTICATED] },
  maker: { name: "maker", groups: [AUTHENTICATED] },
};

type Rule = { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; nonResourceURLs?: string[] };
const rule = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): Rule => ({ verbs, apiGroups, resources, ...(resourceNames ? { resourceNames } : {}) });
const MANAGE_RBAC = rule(["create", "update", "patch", "get"], [GROUP], ["roles", "rolebindings"]);
const role = (name: string, rules: Rule[], extra: object = {}) => ({ apiVersion: V1, kind: "Role", metadata: { name, namespace: "team-a" }, rules, ...extra });
const binding = (name: string, kind: string, roleName: string) => ({
  apiVersion: V1, kind: "RoleBinding", metadata: { name, namespace: "team-a" }, subjects: [{ kind: "User", name: "someone" }], roleRef: { apiGroup: GROUP, kind, name: roleName },
});
const missing = (who: string, resource: string, name: string, lines: string[]) =>
  `${resource}.${GROUP} "${name}" is forbidden: user "${who}" (groups=["${AUTHENTICATED}"]) is attempting to grant RBAC permissions not currently held:\n${lines.join("\n")}`;

describe("RBAC escalation prevention", () => {
  let t: TestServer;
  let s: RbacTestServer;
  const as = (who: string, method: string, path: string, body?: unknown) => s.as(who, method, path, body);
  const create = (path: string, body: object) => s.create(path, body);

  before(async () => {
    s = await rbacTestServer(USERS, { namespaces: ["team-a", "team-b"] });
    t = s.t;
    const ns = `${RBAC}/namespaces/team-a`;
    await create(`${ns}/roles`, role("dev", [rule(["get", "list"], [""], ["pods"]), rule(["get"], [""], ["configmaps"], ["settings"]), rule(["get"], [""], ["*/log"]), MANAGE_RBAC]));
    await create(`${ns}/roles`, role("escalate", [rule(["escalate"], [GROUP], ["roles"]), MANAGE_RBAC]));
    await create(`${ns}/roles`, role("bind-edit", [rule(["bind"], [GROUP], ["clusterroles"], ["edit"]), MANAGE_RBAC]));
    const bind = (name: string, user: string, kind: string, roleName: string) => ({ ...binding(name, kind, roleName), subjects: [{ kind: "User", name: user }] });
    await create(`${ns}/rolebindings`, bind("alice-dev", "alice", "Role", "dev"));
    await create(`${ns}/rolebindings`, bind("escalator", "escalator", "Role", "escalate"));
    await create(`${ns}/rolebindings`, bind("binder", "binder", "Role", "bind-edit"));
    await create(`${RBAC}/clusterroles`, { apiVersion: V1, kind: "ClusterRole", metadata: { name: "maker" }, rules: [rule(["create", "update"], [GROUP], ["clusterroles"]), rule(["get"], [""], ["pods"])] });
    await create(`${RBAC}/clusterrolebindings`, { apiVersion: V1, kind: "ClusterRoleBinding", metadata: { name: "maker" }, subjects: [{ kind: "User", name: "maker" }], roleRef: { apiGroup: GROUP, kind: "ClusterRole", name: "maker" } });
    const expected: Record<string, number> = { roles: 3, rolebindings: 3 };
    for (const [resource, n] of Object.entries(expected)) await s.cached(resource, n);
  });
  after(() => t?.close());

  const ROLES = `${RBAC}/namespaces/team-a/roles`;
  const BINDINGS = `${RBAC}/namespaces/team-a/rolebindings`;
  // who, path, body, expected status, and the 403's message when it matters.
  const MATRIX: [who: string, path: string, body: object, status: number, message?: string][] = [
    // Rules the caller holds: fine, also a subset, a named subset, a subresource through */log.
    ["alice", ROLES, role("a-same", [rule(["get", "list"], [""], ["pods"])]), 201],
    ["alice", ROLES, role("a-subset", [rule(["get"], [""], ["pods"], ["web"]), rule(["get"], [""], ["configmaps"], ["settings"]), rule(["get"], [""], ["pods/log"])]), 201],
    // Rules the caller lacks: 403 naming them (verbs merged per resource, sorted).
    ["alice", ROLES, role("a-delete", [rule(["get", "delete"], [""], ["pods"])]), 403, missing("alice", "roles", "a-delete", [`{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`])],
    ["alice", ROLES, role("a-many", [rule(["delete", "patch"], [""], ["pods", "secrets"])]), 403,
      missing("alice", "roles", "a-many", [`{APIGroups:[""], Resources:["pods"], Verbs:["delete" "patch"]}`, `{APIGroups:[""], Resources:["secrets"], Verbs:["delete" "patch"]}`])],
    ["alice", ROLES, role("a-other-name", [rule(["get"], [""], ["configmaps"], ["secret-config"])]), 403,
      missing("alice", "roles", "a-other-name", [`{APIGroups:[""], Resources:["configmaps"], ResourceNames:["secret-config"], Verbs:["get"]}`])],
    ["alice", ROLES, role("a-every-name", [rule(["get"], [""], ["configmaps"])]), 403],
    ["alice", ROLES, role("a-status", [rule(["get"], [""], ["pods/status"])]), 403],
    ["alice", ROLES, role("a-star", [rule(["*"], ["*"], ["*"])]), 403],
    // escalate on roles lets a user write any rules.
    ["escalator", ROLES, role("e-any", [rule(["*"], [""], ["secrets"])]), 201],
    // A binding to a role the caller holds entirely: fine; to more: 403; to a missing role: 403 with the lookup's text.
    ["alice", BINDINGS, binding("a-bind-own", "Role", "dev"), 201],
    ["alice", BINDINGS, binding("a-bind-view", "ClusterRole", "view"), 403],
    ["alice", BINDINGS, binding("a-bind-missing", "ClusterRole", "nothing-here"), 403, `rolebindings.${GROUP} "a-bind-missing" is forbidden: clusterrole.${GROUP} "nothing-here" not found`],
    ["escalator", BINDINGS, binding("e-bind-view", "ClusterRole", "view"), 403],
    // bind with resourceNames: that role only.
    ["binder", BINDINGS, binding("b-bind-edit", "ClusterRole", "edit"), 201],
    ["binder", BINDINGS, binding("b-bind-admin", "ClusterRole", "admin"), 403],
    // ClusterRoles: the caller's cluster-wide rules; an aggregationRule needs every right.
    ["maker", `${RBAC}/clusterroles`, { apiVersion: V1, kind: "ClusterRole", metadata: { name: "m-pods" }, rules: [rule(["get"], [""], ["pods"])] }, 201],
    ["maker", `${RBAC}/clusterroles`, { apiVersion: V1, kind: "ClusterRole", metadata: { name: "m-nodes" }, rules: [rule(["get"], [""], ["nodes"])] }, 403,
      missing("maker", "clusterroles", "m-nodes", [`{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}`])],
    ["maker", `${RBAC}/clusterroles`, { apiVersion: V1, kind: "ClusterRole", metadata: { name: "m-agg" }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: "y" } }] } }, 403,
      `clusterroles.${GROUP} "m-agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`],
    // system:masters is exempt.
    ["admin", ROLES, role("admin-any", [rule(["*"], ["*"], ["*"])]), 201],
    ["admin", BINDINGS, binding("admin-bind", "ClusterRole", "cluster-admin"), 201],
  ];

  for (const [who, path, body, status, message] of MATRIX) {
    const name = (body as { metadata: { name: string } }).metadata.name;
    test(`${who} creates ${name} → ${status}`, async () => {
      const r = who === "admin" ? await t.request("POST", path, { body }) : await as(who, "POST", path, body);
      assert.equal(r.status, status, r.text);
      if (status === 403) assert.equal(r.json.reason, "Forbidden");
      if (message !== undefined) assert.equal(r.json.message, message);
    });
  }

  test("a dry run needs the same rights: refused alike, allowed without storing", async () => {
    const refused = await as("alice", "POST", `${ROLES}?dryRun=All`, role("dry-delete", [rule(["delete"], [""], ["pods"])]));
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.json.message, missing("alice", "roles", "dry-delete", [`{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`]));
    const ok = await as("alice", "POST", `${ROLES}?dryRun=All`, role("dry-get", [rule(["get"], [""], ["pods"])]));
    assert.equal(ok.status, 201, ok.text);
    assert.equal((await t.request("GET", `${ROLES}/dry-get`)).status, 404);
    const bound = await as("alice", "POST", `${BINDINGS}?dryRun=All`, binding("dry-bind", "ClusterRole", "admin"));
    assert.equal(bound.status, 403);
    // Any kind: the authorization filter asks for the verb of the real request (seed 000, "Authentication").
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "busybox" }] } };
    const dryPod = await as("alice", "POST", "/api/v1/namespaces/team-a/pods?dryRun=All", pod);
    assert.equal(dryPod.status, 403, dryPod.text);
    assert.equal(dryPod.json.message, `pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "team-a"`);
    const dryDelete = await as("alice", "DELETE", "/api/v1/namespaces/team-a/pods/p?dryRun=All");
    assert.equal(dryDelete.status, 403, dryDelete.text);
  });

  test("updates are checked: adding a rule the caller lacks is refused, a label change on a held role is not", async () => {
    const path = `${ROLES}/a-same`;
    const current = (await t.request("GET", path)).json;
    const grow = await as("alice", "PUT", path, { ...current, rules: [...current.rules, rule(["delete"], [""], ["pods"])] });
    assert.equal(grow.status, 403, grow.text);
    assert.equal(grow.json.message, missing("alice", "roles", "a-same", [`{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`]));
    const patched = await t.request("PATCH", path, {
      headers: { authorization: "Bearer alice-token", "content-type": "application/merge-patch+json" }, rawBody: JSON.stringify({ metadata: { labels: { team: "a" } } }),
    });
    assert.equal(patched.status, 200, patched.text);
    const patchedUp = await t.request("PATCH", path, {
      headers: { authorization: "Bearer alice-token", "content-type": "application/json-patch+json" },
      rawBody: JSON.stringify([{ op: "add", path: "/rules/-", value: rule(["create"], [""], ["pods"]) }]),
    });
    assert.equal(patchedUp.status, 403, patchedUp.text);
    // The admin's own role (every right) cannot be changed by alice, even to remove rules.
    const admins = (await t.request("GET", `${ROLES}/admin-any`)).json;
    const shrink = await as("alice", "PUT", `${ROLES}/admin-any`, { ...admins, metadata: { ...admins.metadata, labels: { x: "y" } } });
    assert.equal(shrink.status, 403);
  });

  test("an impersonated user is checked as that user", async () => {
    const r = await t.request("POST", ROLES, { headers: { "impersonate-user": "alice" }, body: role("imp-delete", [rule(["delete"], [""], ["pods"])]) });
    assert.equal(r.status, 403, r.text);
    assert.match(r.json.message, /user "alice" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held/);
  });
});
