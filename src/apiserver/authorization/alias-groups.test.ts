// Upstream's group names as aliases on the orch.io profile (api/alias-group.ts):
// rbac.authorization.k8s.io and certificates.k8s.io serve the objects of
// rbac.authorization.orch.io and certificates.orch.io. One storage: what is
// written under one name is read, listed and watched under the other, with
// apiVersion and the RBAC group names inside (roleRef, subjects) converted;
// the stored bytes keep the profile's names; escalation prevention guards the
// alias too; the RBAC authorizer honours bindings written under the alias.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { makeCertificateRequest } from "../../component/pki.js";
import type { TestServer } from "../testing/harness.js";
import { rbacTestServer, type RbacTestServer } from "./testing.js";

const OWN = "rbac.authorization.orch.io";
const UP = "rbac.authorization.k8s.io";
const AUTHENTICATED = "system:authenticated";

describe("upstream's group names as aliases on the orch.io profile", () => {
  let t: TestServer;
  let s: RbacTestServer;

  before(async () => {
    s = await rbacTestServer({ alice: { name: "alice", groups: [AUTHENTICATED] }, dana: { name: "dana", groups: [AUTHENTICATED] } });
    t = s.t;
    await s.create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" } });
  });
  after(() => t?.close());

  test("discovery lists both RBAC and both certificates groups", async () => {
    const r = await t.request("GET", "/apis");
    const names = (r.json as { groups: { name: string }[] }).groups.map((g) => g.name);
    for (const g of [OWN, UP, "certificates.orch.io", "certificates.k8s.io"]) assert.ok(names.includes(g), `${g} not in ${names.join(", ")}`);
  });

  test("a binding written under the alias is read under both names and stored under the profile's", async () => {
    await s.create(`/apis/${UP}/v1/namespaces/team-a/roles`, {
      apiVersion: `${UP}/v1`, kind: "Role", metadata: { name: "pod-reader", namespace: "team-a" }, rules: [{ verbs: ["get", "list"], apiGroups: [""], resources: ["pods"] }],
    });
    await s.create(`/apis/${UP}/v1/namespaces/team-a/rolebindings`, {
      apiVersion: `${UP}/v1`, kind: "RoleBinding", metadata: { name: "alice-reads", namespace: "team-a" },
      subjects: [{ kind: "User", apiGroup: UP, name: "alice" }], roleRef: { apiGroup: UP, kind: "Role", name: "pod-reader" },
    });
    const own = await t.request("GET", `/apis/${OWN}/v1/namespaces/team-a/rolebindings/alice-reads`);
    assert.equal(own.status, 200, own.text);
    const ob = own.json as { apiVersion: string; roleRef: { apiGroup: string }; subjects: { apiGroup: string }[] };
    assert.equal(ob.apiVersion, `${OWN}/v1`);
    assert.equal(ob.roleRef.apiGroup, OWN);
    assert.equal(ob.subjects[0]!.apiGroup, OWN);
    const up = await t.request("GET", `/apis/${UP}/v1/namespaces/team-a/rolebindings/alice-reads`);
    const ub = up.json as typeof ob;
    assert.equal(ub.apiVersion, `${UP}/v1`);
    assert.equal(ub.roleRef.apiGroup, UP);
    assert.equal(ub.subjects[0]!.apiGroup, UP);
    const list = await t.request("GET", `/apis/${UP}/v1/rolebindings`);
    const items = (list.json as { apiVersion: string; items: { metadata: { name: string } }[] });
    assert.equal(items.apiVersion, `${UP}/v1`);
    assert.ok(items.items.some((i) => i.metadata.name === "alice-reads"));
    const { kv } = await t.server.storage.get("/registry/rbac.authorization.orch.io/rolebindings/team-a/alice-reads");
    assert.ok(kv !== undefined, "stored under the profile's group");
    const text = Buffer.from(kv!.value).toString("latin1");
    assert.ok(!text.includes(UP), `stored bytes carry ${UP}: ${text}`);
  });

  test("a binding made under the alias grants its rights, and escalation is refused there too", async () => {
    await s.cached("rolebindings", 1, "team-a");
    const r = await s.as("alice", "GET", "/api/v1/namespaces/team-a/pods");
    assert.equal(r.status, 200, r.text);
    const no = await s.as("alice", "GET", "/api/v1/namespaces/team-a/secrets");
    assert.equal(no.status, 403, no.text);
    // dana may write roles under both names but holds no pod rights: a role granting them is an escalation, under either name.
    await s.create(`/apis/${OWN}/v1/clusterroles`, {
      apiVersion: `${OWN}/v1`, kind: "ClusterRole", metadata: { name: "role-writer" }, rules: [{ verbs: ["create", "update"], apiGroups: [OWN, UP], resources: ["roles"] }],
    });
    await s.create(`/apis/${OWN}/v1/clusterrolebindings`, {
      apiVersion: `${OWN}/v1`, kind: "ClusterRoleBinding", metadata: { name: "dana" }, subjects: [{ kind: "User", apiGroup: OWN, name: "dana" }], roleRef: { apiGroup: OWN, kind: "ClusterRole", name: "role-writer" },
    });
    await s.cached("clusterrolebindings", 1);
    for (const group of [UP, OWN]) {
      const body = { apiVersion: `${group}/v1`, kind: "Role", metadata: { name: `sneaky-${group.split(".")[2]}`, namespace: "team-a" }, rules: [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }] };
      const denied = await s.as("dana", "POST", `/apis/${group}/v1/namespaces/team-a/roles`, body);
      assert.equal(denied.status, 403, `${group}: ${denied.text}`);
      assert.match((denied.json as { message: string }).message, /is attempting to grant RBAC permissions not currently held/);
    }
  });

  test("a watch under the alias sees writes made under the profile's name", async () => {
    const w = await t.watch(`/apis/${UP}/v1/clusterroles?watch=true&fieldSelector=metadata.name%3Dwatched`);
    assert.equal(w.status, 200);
    try {
      await s.create(`/apis/${OWN}/v1/clusterroles`, { apiVersion: `${OWN}/v1`, kind: "ClusterRole", metadata: { name: "watched" }, rules: [] });
      const [ev] = await w.next(1, 5000);
      assert.equal(ev.type, "ADDED");
      assert.equal(ev.object.apiVersion, `${UP}/v1`);
      assert.equal(ev.object.metadata.name, "watched");
    } finally {
      w.close();
    }
  });

  test("a CSR approved under certificates.k8s.io is approved under certificates.orch.io", async () => {
    const request = Buffer.from((await makeCertificateRequest("bob", ["devs"])).csr).toString("base64");
    await s.create("/apis/certificates.orch.io/v1/certificatesigningrequests", {
      apiVersion: "certificates.orch.io/v1", kind: "CertificateSigningRequest", metadata: { name: "bob" },
      spec: { request, signerName: "orch.io/kube-apiserver-client", usages: ["client auth"] },
    });
    const UPCSR = "/apis/certificates.k8s.io/v1/certificatesigningrequests/bob";
    const got = await t.request("GET", UPCSR);
    assert.equal(got.status, 200, got.text);
    assert.equal(got.json.apiVersion, "certificates.k8s.io/v1");
    const body = { ...got.json, status: { conditions: [{ type: "Approved", status: "True", reason: "KubectlApprove", message: "yes" }] } };
    const approved = await t.request("PUT", `${UPCSR}/approval`, { body });
    assert.equal(approved.status, 200, approved.text);
    const own = await t.request("GET", "/apis/certificates.orch.io/v1/certificatesigningrequests/bob");
    assert.equal(own.json.apiVersion, "certificates.orch.io/v1");
    assert.deepEqual(own.json.status.conditions.map((c: { type: string }) => c.type), ["Approved"]);
  });
});
