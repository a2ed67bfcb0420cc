// The access reviews against the real server (--authorization-mode=RBAC):
// who may ask (SubjectAccessReview needs `create subjectaccessreviews`,
// LocalSubjectAccessReview the same in its namespace, the self reviews come
// with system:basic-user), what the answer says (allowed, the RBAC reason
// for a dangling binding, the caller's rules in a namespace), upstream's
// validation messages, and malformed bodies (400/405/415/422, server up).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { UserInfo } from "../filters/index.js";
import type { TestServer } from "../testing/harness.js";
import { AUTHENTICATED, RBAC, RBAC_GROUP as GROUP, rbacTestServer, type RbacTestServer } from "./testing.js";


const USERS: Record<string, UserInfo> = {
  alice: { name: "alice", groups: [AUTHENTICATED] },
  reviewer: { name: "reviewer", groups: [AUTHENTICATED] },
  dave: { name: "dave", groups: [AUTHENTICATED] },
};

describe("access reviews", () => {
  let t: TestServer;
  let s: RbacTestServer;
  const as = (who: string, path: string, body: unknown, method = "POST") => s.as(who, method, path, body);
  const create = (path: string, body: object) => s.create(path, body);

  before(async () => {
    s = await rbacTestServer(USERS, { namespaces: ["team-a", "team-b"] });
    t = s.t;
    const v1 = `${GROUP}/v1`;
    await create(`${RBAC}/namespaces/team-a/roles`, {
      apiVersion: v1, kind: "Role", metadata: { name: "dev", namespace: "team-a" },
      rules: [{ verbs: ["get", "list"], apiGroups: [""], resources: ["pods"] }, { verbs: ["get"], apiGroups: [""], resources: ["configmaps"], resourceNames: ["settings"] }],
    });
    await create(`${RBAC}/namespaces/team-a/rolebindings`, { apiVersion: v1, kind: "RoleBinding", metadata: { name: "alice-dev" }, subjects: [{ kind: "User", name: "alice" }], roleRef: { apiGroup: GROUP, kind: "Role", name: "dev" } });
    await create(`${RBAC}/clusterroles`, { apiVersion: v1, kind: "ClusterRole", metadata: { name: "reviewer" }, rules: [{ verbs: ["create"], apiGroups: ["authorization.orch.io", "authorization.k8s.io"], resources: ["subjectaccessreviews"] }] });
    await create(`${RBAC}/clusterrolebindings`, { apiVersion: v1, kind: "ClusterRoleBinding", metadata: { name: "reviewer" }, subjects: [{ kind: "User", name: "reviewer" }], roleRef: { apiGroup: GROUP, kind: "ClusterRole", name: "reviewer" } });
    await create(`${RBAC}/clusterrolebindings`, { apiVersion: v1, kind: "ClusterRoleBinding", metadata: { name: "dangling" }, subjects: [{ kind: "User", name: "dave" }], roleRef: { apiGroup: GROUP, kind: "ClusterRole", name: "missing" } });
    // The authorizer reads the watch caches: wait until they hold what was created (and the bootstrap policy).
    const expected: Record<string, number> = { roles: 1, rolebindings: 1, clusterrolebindings: 2 + 4 };
    for (const [resource, n] of Object.entries(expected)) await s.cached(resource, n);
  });
  after(() => t?.close());

  const sar = (group: string, spec: object) => ({ apiVersion: `${group}/v1`, kind: "SubjectAccessReview", spec });
  const pods = (namespace: string, verb = "list") => ({ resourceAttributes: { namespace, verb, resource: "pods" } });

  for (const group of ["authorization.orch.io", "authorization.k8s.io"]) {
    test(`SubjectAccessReview under ${group}: the admin asks about alice; the answer follows her RoleBinding`, async () => {
      const path = `/apis/${group}/v1/subjectaccessreviews`;
      const yes = await t.request("POST", path, { body: sar(group, { user: "alice", groups: [AUTHENTICATED], ...pods("team-a") }) });
      assert.equal(yes.status, 201, yes.text);
      assert.equal(yes.json.kind, "SubjectAccessReview");
      assert.equal(yes.json.apiVersion, `${group}/v1`);
      assert.deepEqual(yes.json.status, { allowed: true, reason: `RBAC: allowed by RoleBinding "alice-dev/team-a" of Role "dev" to User "alice"` });
      assert.deepEqual(yes.json.spec.resourceAttributes, { namespace: "team-a", verb: "list", resource: "pods" });
      const no = await t.request("POST", path, { body: sar(group, { user: "alice", ...pods("team-b") }) });
      assert.equal(no.status, 201, no.text);
      assert.equal(no.json.status.allowed, false);
      assert.equal(no.json.status.denied, undefined);
    });
  }

  test("SubjectAccessReview: resourceNames, non-resource URLs, groups alone", async () => {
    const ask = async (spec: object) => (await t.request("POST", "/apis/authorization.orch.io/v1/subjectaccessreviews", { body: sar("authorization.orch.io", spec) })).json.status.allowed;
    assert.equal(await ask({ user: "alice", resourceAttributes: { namespace: "team-a", verb: "get", resource: "configmaps", name: "settings" } }), true);
    assert.equal(await ask({ user: "alice", resourceAttributes: { namespace: "team-a", verb: "get", resource: "configmaps", name: "other" } }), false);
    assert.equal(await ask({ user: "alice", groups: [AUTHENTICATED], nonResourceAttributes: { path: "/apis", verb: "get" } }), true);
    assert.equal(await ask({ user: "alice", nonResourceAttributes: { path: "/apis", verb: "get" } }), false);
    assert.equal(await ask({ groups: ["system:masters"], resourceAttributes: { verb: "delete", resource: "nodes" } }), true);
  });

  test("SubjectAccessReview of a dangling binding: not allowed, the RBAC reason names the missing role", async () => {
    const r = await t.request("POST", "/apis/authorization.orch.io/v1/subjectaccessreviews", { body: sar("authorization.orch.io", { user: "dave", ...pods("team-a") }) });
    assert.equal(r.json.status.allowed, false);
    assert.equal(r.json.status.reason, `RBAC: clusterrole.${GROUP} "missing" not found`);
  });

  test("SubjectAccessReview needs create subjectaccessreviews: alice is refused with upstream's 403, a reviewer may ask", async () => {
    const body = sar("authorization.k8s.io", { user: "alice", ...pods("team-a") });
    const refused = await as("alice", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body);
    assert.equal(refused.status, 403);
    assert.equal(refused.json.message, `subjectaccessreviews.authorization.k8s.io is forbidden: User "alice" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope`);
    const asked = await as("reviewer", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body);
    assert.equal(asked.status, 201, asked.text);
    assert.equal(asked.json.status.allowed, true);
  });

  test("a review asked for as a Table (or metadata) is upstream's 406; JSON with a Table fallback is answered", async () => {
    const path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    const body = { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec: { nonResourceAttributes: { path: "/", verb: "get" } } };
    const table = await s.t.request("POST", path, { body, headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } });
    assert.equal(table.status, 406, table.text);
    assert.equal(table.json.message, "the resource selfsubjectaccessreviews.authorization.k8s.io does not support being converted to a Table");
    const meta = await s.t.request("POST", path, { body, headers: { accept: "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io" } });
    assert.equal(meta.status, 406, meta.text);
    const fallback = await s.t.request("POST", path, { body, headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io, application/json" } });
    assert.equal(fallback.status, 201, fallback.text);
  });

  test("SelfSubjectAccessReview: every authenticated user may ask about itself", async () => {
    const ask = async (who: string, attrs: object) => {
      const r = await as(who, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec: attrs });
      assert.equal(r.status, 201, r.text);
      return r.json.status.allowed;
    };
    assert.equal(await ask("alice", pods("team-a")), true);
    assert.equal(await ask("alice", pods("team-a", "delete")), false);
    assert.equal(await ask("alice", pods("team-b")), false);
    assert.equal(await ask("alice", { nonResourceAttributes: { path: "/api", verb: "get" } }), true);
    assert.equal(await ask("reviewer", pods("team-a")), false);
    // The user's own fields in the body are ignored: the caller is the subject.
    assert.equal(await ask("reviewer", { ...pods("team-a"), user: "alice" }), false);
  });

  test("LocalSubjectAccessReview: namespaced; admin may; alice may not; spec.resourceAttributes.namespace must match", async () => {
    const lsar = (attrs: object, meta: object = {}) => ({ apiVersion: "authorization.orch.io/v1", kind: "LocalSubjectAccessReview", metadata: meta, spec: { user: "alice", ...attrs } });
    const path = "/apis/authorization.orch.io/v1/namespaces/team-a/localsubjectaccessreviews";
    const ok = await t.request("POST", path, { body: lsar(pods("team-a")) });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.json.metadata.namespace, "team-a");
    assert.equal(ok.json.status.allowed, true);
    const mismatch = await t.request("POST", path, { body: lsar(pods("team-b")) });
    assert.equal(mismatch.status, 422);
    assert.equal(mismatch.json.message, `LocalSubjectAccessReview.authorization.orch.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "team-b": must match metadata.namespace`);
    const nonResource = await t.request("POST", path, { body: lsar({ nonResourceAttributes: { path: "/api", verb: "get" } }) });
    assert.equal(nonResource.status, 422);
    assert.match(nonResource.json.message, /spec\.nonResourceAttributes: Invalid value: .*: disallowed on this kind of request/);
    const otherNamespace = await t.request("POST", path, { body: lsar(pods("team-a"), { namespace: "team-b" }) });
    assert.equal(otherNamespace.status, 400);
    assert.equal(otherNamespace.json.message, "the namespace of the provided object does not match the namespace sent on the request");
    const refused = await as("alice", path, lsar(pods("team-a")));
    assert.equal(refused.status, 403);
    assert.match(refused.json.message, /User "alice" cannot create resource "localsubjectaccessreviews" in API group "authorization.orch.io" in the namespace "team-a"/);
    // Only the namespaced path serves it; the cluster-scoped kinds have no namespaced path.
    assert.equal((await t.request("POST", "/apis/authorization.orch.io/v1/localsubjectaccessreviews", { body: lsar(pods("team-a")) })).status, 404);
    assert.equal((await t.request("POST", "/apis/authorization.orch.io/v1/namespaces/team-a/subjectaccessreviews", { body: sar("authorization.orch.io", { user: "alice", ...pods("team-a") }) })).status, 404);
  });

  test("SelfSubjectRulesReview: the caller's rules in a namespace, RBAC's errors as evaluationError", async () => {
    const rules = async (who: string, namespace: string) => {
      const r = await as(who, "/apis/authorization.orch.io/v1/selfsubjectrulesreviews", { apiVersion: "authorization.orch.io/v1", kind: "SelfSubjectRulesReview", spec: { namespace } });
      assert.equal(r.status, 201, r.text);
      return r.json;
    };
    const a = await rules("alice", "team-a");
    assert.equal(a.kind, "SelfSubjectRulesReview");
    assert.equal(a.status.incomplete, false);
    assert.deepEqual(a.status.resourceRules.filter((r: { resources: string[] }) => r.resources.includes("pods") || r.resources.includes("configmaps")), [
      { verbs: ["get", "list"], apiGroups: [""], resources: ["pods"] },
      { verbs: ["get"], apiGroups: [""], resources: ["configmaps"], resourceNames: ["settings"] },
    ]);
    assert.ok(a.status.resourceRules.some((r: { resources: string[] }) => r.resources.includes("selfsubjectrulesreviews")), "system:basic-user's rules are listed");
    assert.ok(a.status.nonResourceRules.some((r: { nonResourceURLs: string[] }) => r.nonResourceURLs.includes("/apis")), "system:discovery's URLs are listed");
    const b = await rules("alice", "team-b");
    assert.ok(!b.status.resourceRules.some((r: { resources: string[] }) => r.resources.includes("pods")), "team-a's Role does not reach team-b");
    const admin = (await t.request("POST", "/apis/authorization.orch.io/v1/selfsubjectrulesreviews", { body: { spec: { namespace: "team-b" } } })).json;
    assert.deepEqual(admin.status.resourceRules[0], { verbs: ["*"], apiGroups: ["*"], resources: ["*"] });
    const d = await rules("dave", "default");
    assert.equal(d.status.evaluationError, `clusterrole.${GROUP} "missing" not found`);
    assert.equal(d.status.incomplete, false);
    const none = await as("alice", "/apis/authorization.orch.io/v1/selfsubjectrulesreviews", { spec: {} });
    assert.equal(none.status, 400);
    assert.equal(none.json.message, "no namespace on request");
  });

  test("validation: upstream's messages as 422 Invalid", async () => {
    const post = (body: object) => t.request("POST", "/apis/authorization.orch.io/v1/subjectaccessreviews", { body });
    const neither = await post({ spec: { user: "alice" } });
    assert.equal(neither.status, 422);
    assert.match(neither.json.message, /^SubjectAccessReview.authorization.orch.io "" is invalid: spec.resourceAttributes: Invalid value: .*: exactly one of nonResourceAttributes or resourceAttributes must be specified$/);
    const both = await post({ spec: { user: "alice", ...pods("team-a"), nonResourceAttributes: { path: "/api", verb: "get" } } });
    assert.equal(both.status, 422);
    assert.match(both.json.message, /spec.nonResourceAttributes: Invalid value: .*: cannot be specified in combination with resourceAttributes/);
    const nobody = await post({ spec: pods("team-a") });
    assert.equal(nobody.status, 422);
    assert.match(nobody.json.message, /spec.user: Invalid value: "": at least one of user or group must be specified/);
    const named = await post({ metadata: { name: "x" }, spec: { user: "alice", ...pods("team-a") } });
    assert.equal(named.status, 422);
    assert.match(named.json.message, /metadata: Invalid value: .*: must be empty/);
    assert.equal(named.json.details.causes[0].field, "metadata");
  });

  test("malformed requests: 400, 405, 415; the server stays up", async () => {
    const path = "/apis/authorization.orch.io/v1/selfsubjectaccessreviews";
    const cases: [options: { rawBody?: string; body?: unknown; headers?: Record<string, string> }, status: number][] = [
      [{ rawBody: "{not json", headers: { "content-type": "application/json" } }, 400],
      [{ body: [1, 2] }, 400],
      [{ body: { kind: "SubjectAccessReview", spec: pods("team-a") } }, 400],
      [{ body: { apiVersion: "authorization.orch.io/v2", spec: pods("team-a") } }, 400],
      [{ body: { spec: "pods" } }, 400],
      [{ body: { spec: { resourceAttributes: { verb: 7 } } } }, 400],
      [{ body: { spec: { resourceAttributes: [] } } }, 400],
      [{ rawBody: "x", headers: { "content-type": "text/plain" } }, 415],
      [{ rawBody: "\x6b\x38\x73\x00garbage", headers: { "content-type": "application/vnd.kubernetes.protobuf" } }, 400],
    ];
    for (const [options, status] of cases) {
      const r = await t.request("POST", path, options);
      assert.equal(r.status, status, `${JSON.stringify(options)}: ${r.text}`);
      assert.equal(r.json.kind, "Status");
    }
    const sarPath = "/apis/authorization.orch.io/v1/subjectaccessreviews";
    assert.equal((await t.request("POST", sarPath, { body: { spec: { user: "a", groups: "g", ...pods("x") } } })).status, 400);
    assert.equal((await t.request("POST", sarPath, { body: { spec: { user: "a", extra: { k: "v" }, ...pods("x") } } })).status, 400);
    assert.equal((await t.request("GET", path)).status, 405);
    assert.equal((await t.request("DELETE", path)).status, 405);
    assert.equal((await t.request("GET", "/readyz")).status, 200);
  });
});
