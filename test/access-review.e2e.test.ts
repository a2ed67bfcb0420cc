// End to end: `kubectl auth can-i` (kubectl 1.33 and 1.27, unmodified)
// against an in-process API server in RBAC mode, on both naming profiles
// (orch.io, and --api-group-suffix=k8s.io). kubectl posts its
// SelfSubjectAccessReviews and SelfSubjectRulesReviews to
// authorization.k8s.io as Protobuf; "yes" exits 0 and "no" exits 1.
// alice has a Role in team-a (pods read, deployments create); she is reached
// with her own token and through the admin's impersonation (--as).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../src/api/index.js";
import { TokenAuthenticator } from "../src/apiserver/filters/index.js";
import { startTestServer, type TestServer } from "../src/apiserver/testing/harness.js";
import { Kubectl, kubectlPath, kubectlSkipReason } from "./support/kubectl.js";

const policy = (rbac: string) => `apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: ${rbac}/v1
kind: Role
metadata: {name: dev, namespace: team-a}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [create]
---
apiVersion: ${rbac}/v1
kind: RoleBinding
metadata: {name: alice-dev, namespace: team-a}
subjects:
- {kind: User, name: alice}
roleRef: {apiGroup: ${rbac}, kind: Role, name: dev}
`;

for (const suffix of ["orch.io", "k8s.io"]) {
  describe(`kubectl auth can-i (--api-group-suffix=${suffix})`, { skip: kubectlSkipReason() ?? false }, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer({
        modules: builtinModules(),
        groupSuffix: suffix,
        authenticators: [new TokenAuthenticator(new Map([["alice-token", { name: "alice", groups: ["system:authenticated"] }]]))],
      });
      const path = join(mkdtempSync(join(tmpdir(), "orch-e2e-can-i-")), "policy.yaml");
      writeFileSync(path, policy(`rbac.authorization.${suffix}`));
      await new Kubectl(t.server.kubeconfigPath).ok("apply", "-f", path);
      // The authorizer reads the watch caches: wait for the binding to be there.
      const store = t.server.stores.for({ group: `rbac.authorization.${suffix}`, resource: "rolebindings" })!;
      for (let i = 0; (await store.cacher.list(store.prefixFor("team-a"), { mode: "Any" })).items.length < 1; i++) {
        assert.ok(i < 200, "the binding never reached the cache");
        await new Promise((r) => setTimeout(r, 10));
      }
    });
    after(() => t?.close());

    for (const version of ["1.33", "1.27"]) {
      test(`kubectl ${version}: yes/no with exit codes, --as, --list`, { skip: kubectlPath(version) === undefined ? `no kubectl ${version}` : false }, async () => {
        const k = new Kubectl(t.server.kubeconfigPath, version);
        const canI = async (args: string[], answer: "yes" | "no") => {
          const r = await k.run(["auth", "can-i", ...args]);
          assert.equal(r.stdout.trim(), answer, `can-i ${args.join(" ")}: ${r.stdout}${r.stderr}`);
          assert.equal(r.code, answer === "yes" ? 0 : 1, `can-i ${args.join(" ")} exit code`);
        };
        // The admin (system:masters).
        await canI(["get", "pods"], "yes");
        await canI(["delete", "nodes"], "yes");
        // alice, impersonated by the admin and with her own token.
        await canI(["create", "deployments", "--as", "alice", "-n", "team-b"], "no");
        await canI(["create", "deployments", "--as", "alice", "-n", "team-a"], "yes");
        await canI(["delete", "deployments", "--as", "alice", "-n", "team-a"], "no");
        await canI(["get", "pods", "--token", "alice-token", "-n", "team-a"], "yes");
        await canI(["get", "pods", "--token", "alice-token", "-n", "team-b"], "no");
        await canI(["get", "/apis", "--token", "alice-token"], "yes");
        await canI(["get", "/metrics", "--token", "alice-token"], "no");

        const mine = await k.ok("auth", "can-i", "--list", "--as", "alice", "-n", "team-a");
        assert.match(mine, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs\n/);
        assert.match(mine, /^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
        assert.match(mine, /^deployments\.apps\s+\[\]\s+\[\]\s+\[create\]$/m);
        assert.match(mine, /^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
        const elsewhere = await k.ok("auth", "can-i", "--list", "--token", "alice-token", "-n", "team-b");
        assert.doesNotMatch(elsewhere, /^pods\s/m);
        assert.match(elsewhere, /^\s+\[\/apis\]\s+\[\]\s+\[get\]$/m);
        const admin = await k.ok("auth", "can-i", "--list");
        assert.match(admin, /^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
      });
    }
  });
}

// `kubectl auth reconcile` decodes with its compiled-in RBAC types, so it
// works on the k8s.io profile (the orch.io one's group is unknown to it: see
// docs/apiserver.md, "Authorization"). It GETs each role and binding, POSTs
// the missing ones and PUTs the ones lacking rules or subjects; the server's
// escalation check applies to its writes like any other.
const reconcileFile = (verbs: string, subject: string, extraRule = "") => `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: team-r}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [${verbs}]
${extraRule}---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: widget-reader}
rules:
- apiGroups: [example.com]
  resources: [widgets]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: team-r}
subjects:
- {kind: User, name: ${subject}, apiGroup: rbac.authorization.k8s.io}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: widget-reader}
subjects:
- {kind: Group, name: readers, apiGroup: rbac.authorization.k8s.io}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: widget-reader}
`;

// On the orch.io profile the same file works: rbac.authorization.k8s.io is served there as an alias of
// rbac.authorization.orch.io (api/alias-group.ts), one storage under both names.
for (const suffix of ["k8s.io", "orch.io"]) describe(`kubectl auth reconcile (--api-group-suffix=${suffix})`, { skip: kubectlSkipReason() ?? false }, () => {
  let t: TestServer;
  let k: Kubectl;
  const dir = mkdtempSync(join(tmpdir(), "orch-e2e-reconcile-"));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const json = async (...args: string[]) => JSON.parse(await k.ok(...args, "-o", "json"));

  before(async () => {
    t = await startTestServer({
      modules: builtinModules(),
      groupSuffix: suffix,
      authenticators: [new TokenAuthenticator(new Map([["carol-token", { name: "carol", groups: ["system:authenticated"] }]]))],
    });
    k = new Kubectl(t.server.kubeconfigPath);
    await k.ok("create", "namespace", "team-r");
    // carol may manage roles in team-r and read pods there, nothing more.
    const grant = file("carol.yaml", `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: role-manager, namespace: team-r}
rules:
- {apiGroups: [rbac.authorization.k8s.io], resources: [roles], verbs: [get, create, update]}
- {apiGroups: [""], resources: [pods], verbs: [get, list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: carol, namespace: team-r}
subjects: [{kind: User, name: carol, apiGroup: rbac.authorization.k8s.io}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: role-manager}
`);
    await k.ok("apply", "-f", grant);
  });
  after(() => t?.close());

  test("creates, then adds missing rules and subjects, then removes extra ones; a user is held to its own rights", async () => {
    const created = await k.run(["auth", "reconcile", "-f", file("v1.yaml", reconcileFile("get, list", "alice"))]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^role.rbac.authorization.k8s.io\/reader reconciled$/m);
    assert.match(created.stdout, /^clusterrolebinding.rbac.authorization.k8s.io\/widget-reader reconciled$/m);
    assert.match(created.stderr, /reconciliation required create/);
    assert.deepEqual((await json("get", "role.rbac.authorization.k8s.io", "reader", "-n", "team-r")).rules, [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }]);
    assert.deepEqual((await json("get", "clusterrolebinding.rbac.authorization.k8s.io", "widget-reader")).roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "widget-reader" });

    const again = await k.run(["auth", "reconcile", "-f", join(dir, "v1.yaml")]);
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /reconciliation required/, "nothing to do the second time");

    const grown = await k.run(["auth", "reconcile", "-f", file("v2.yaml", reconcileFile("get, list, watch", "bob"))]);
    assert.equal(grown.code, 0, grown.stderr);
    assert.match(grown.stderr, /reconciliation required update/);
    // kubectl adds what is missing as rules of their own.
    assert.deepEqual((await json("get", "role.rbac.authorization.k8s.io", "reader", "-n", "team-r")).rules, [
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }, { apiGroups: [""], resources: ["pods"], verbs: ["watch"] },
    ]);
    assert.deepEqual((await json("get", "rolebinding.rbac.authorization.k8s.io", "reader", "-n", "team-r")).subjects.map((s: { name: string }) => s.name), ["alice", "bob"]);

    const trimmed = await k.run(["auth", "reconcile", "-f", join(dir, "v1.yaml"), "--remove-extra-permissions", "--remove-extra-subjects"]);
    assert.equal(trimmed.code, 0, trimmed.stderr);
    assert.deepEqual((await json("get", "role.rbac.authorization.k8s.io", "reader", "-n", "team-r")).rules, [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }]);
    assert.deepEqual((await json("get", "rolebinding.rbac.authorization.k8s.io", "reader", "-n", "team-r")).subjects.map((s: { name: string }) => s.name), ["alice"]);

    // carol reconciles the Role only: adding watch (she lacks it) is refused by the escalation check.
    const carolRole = file("carol-role.yaml", reconcileFile("get, list, watch", "alice").split("---")[0]!);
    const refused = await k.run(["--token", "carol-token", "auth", "reconcile", "-f", carolRole]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /roles.rbac.authorization.k8s.io "reader" is forbidden: user "carol" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["pods"\], Verbs:\["watch"\]\}/);
    const allowed = await k.run(["--token", "carol-token", "auth", "reconcile", "-f", file("carol-ok.yaml", reconcileFile("get, list", "alice").split("---")[0]!)]);
    assert.equal(allowed.code, 0, allowed.stderr);
    // Stored once, under the profile's own group: the profile's name reads the same objects.
    const own = await json("get", `rolebinding.rbac.authorization.${suffix}`, "reader", "-n", "team-r");
    assert.equal(own.apiVersion, `rbac.authorization.${suffix}/v1`);
    assert.deepEqual(own.roleRef, { apiGroup: `rbac.authorization.${suffix}`, kind: "Role", name: "reader" });
  });

  test("kubectl certificate approve and deny (certificates.k8s.io compiled in)", async () => {
    const { makeCertificateRequest } = await import("../src/component/pki.js");
    const { signerNames } = await import("../src/api/certificates/index.js");
    const { namingFor } = await import("../src/machinery/naming.js");
    const signer = signerNames(namingFor(suffix)).apiServerClient;
    for (const name of ["approve-me", "deny-me"]) {
      const request = Buffer.from((await makeCertificateRequest(name, [])).csr).toString("base64");
      await k.ok("create", "-f", file(`${name}.yaml`, `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: ${name}}
spec:
  request: ${request}
  signerName: ${signer}
  usages: [client auth]
`));
    }
    assert.match(await k.ok("certificate", "approve", "approve-me"), /certificatesigningrequest.certificates.k8s.io\/approve-me approved/);
    assert.match(await k.ok("certificate", "deny", "deny-me"), /certificatesigningrequest.certificates.k8s.io\/deny-me denied/);
    const conditions = async (name: string) =>
      ((await json("get", `csr.certificates.${suffix}`, name)).status?.conditions ?? []).map((c: { type: string; reason: string }) => `${c.type}/${c.reason}`);
    assert.deepEqual(await conditions("approve-me"), ["Approved/KubectlApprove"]);
    assert.deepEqual(await conditions("deny-me"), ["Denied/KubectlDeny"]);

    // carol may read and update CSRs' approval but holds no `approve` on the signer: upstream's 403 (CertificateApproval).
    const grant = (name: string, rules: string) => k.ok("apply", "-f", file(`${name}.yaml`, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ${name}}
rules:
${rules}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: carol-${name}}
subjects: [{kind: User, name: carol, apiGroup: rbac.authorization.k8s.io}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${name}}
`));
    await grant("csr-updater", `- {apiGroups: [certificates.k8s.io, certificates.${suffix}], resources: [certificatesigningrequests, certificatesigningrequests/approval], verbs: [get, list, update]}`);
    const request = Buffer.from((await makeCertificateRequest("carol-csr", [])).csr).toString("base64");
    await k.ok("create", "-f", file("carol-csr.yaml", `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: carol-csr}
spec:
  request: ${request}
  signerName: ${signer}
  usages: [client auth]
`));
    let refused = await k.run(["--token", "carol-token", "certificate", "approve", "carol-csr"]);
    for (let i = 0; i < 100 && /cannot get resource/.test(refused.stderr); i++) {
      // The binding reaches the authorizer through the watch cache.
      await new Promise((r) => setTimeout(r, 20));
      refused = await k.run(["--token", "carol-token", "certificate", "approve", "carol-csr"]);
    }
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.match(refused.stderr, new RegExp(`certificatesigningrequests.certificates.(k8s|orch).io "carol-csr" is forbidden: user not permitted to approve requests with signerName "${signer.replace(/[.]/g, "[.]")}"`));
    assert.deepEqual(await conditions("carol-csr"), []);
    // Granted approve on the signer, the same command works.
    await grant("signer-approver", `- {apiGroups: [certificates.k8s.io], resources: [signers], verbs: [approve], resourceNames: ["${signer}"]}`);
    let approved = await k.run(["--token", "carol-token", "certificate", "approve", "carol-csr"]);
    for (let i = 0; i < 100 && approved.code !== 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      approved = await k.run(["--token", "carol-token", "certificate", "approve", "carol-csr"]);
    }
    assert.equal(approved.code, 0, approved.stderr);
    assert.deepEqual(await conditions("carol-csr"), ["Approved/KubectlApprove"]);
  });
});
