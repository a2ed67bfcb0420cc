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
