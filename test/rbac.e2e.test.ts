// End to end: RBAC driven by the real, unmodified kubectl 1.33 against an
// in-process API server (default mode RBAC) whose test authenticator knows
// alice's token: the admin applies a Role and RoleBinding, kubectl lists them
// with upstream's columns, and alice gets what the binding grants and
// upstream's Forbidden message elsewhere.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../src/api/index.js";
import { TokenAuthenticator } from "../src/apiserver/filters/index.js";
import { startTestServer, type TestServer } from "../src/apiserver/testing/harness.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";

const POLICY = `apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: rbac.authorization.orch.io/v1
kind: Role
metadata: {name: pod-reader, namespace: team-a}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.orch.io/v1
kind: RoleBinding
metadata: {name: alice-reads, namespace: team-a}
subjects:
- {kind: User, name: alice}
- {kind: ServiceAccount, name: ci, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.orch.io, kind: Role, name: pod-reader}
`;

describe("kubectl 1.33 and RBAC", { skip: kubectlSkipReason() ?? false }, () => {
  let t: TestServer;
  let k: Kubectl;
  const alice = (...args: string[]) => k.run(["--token", "alice-token", ...args]);

  before(async () => {
    t = await startTestServer({
      modules: builtinModules(),
      authenticators: [new TokenAuthenticator(new Map([["alice-token", { name: "alice", groups: ["system:authenticated"] }]]))],
    });
    k = new Kubectl(t.server.kubeconfigPath);
    const path = join(mkdtempSync(join(tmpdir(), "orch-e2e-rbac-")), "policy.yaml");
    writeFileSync(path, POLICY);
    const out = await k.ok("apply", "-f", path);
    assert.match(out, /role.rbac.authorization.orch.io\/pod-reader created/);
    assert.match(out, /rolebinding.rbac.authorization.orch.io\/alice-reads created/);
  });
  after(() => t?.close());

  test("kubectl get lists the bootstrap roles and shows a binding's role and, wide, its subjects", async () => {
    const roles = await k.ok("get", "clusterroles");
    assert.match(roles, /^NAME\s+CREATED AT\n/);
    for (const name of ["cluster-admin", "admin", "edit", "view", "system:discovery"]) assert.match(roles, new RegExp(`^${name}\\s`, "m"));
    const wide = await k.ok("get", "rolebindings", "-n", "team-a", "-o", "wide");
    assert.match(wide, /^NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS\n/);
    assert.match(wide, /^alice-reads\s+Role\/pod-reader\s+\S+\s+alice\s+team-a\/ci\n/m);
  });

  test("alice may list pods in team-a, and is refused elsewhere with upstream's message", async () => {
    const allowed = await alice("get", "pods", "-n", "team-a");
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stderr, /No resources found in team-a namespace/);
    const refused = await alice("get", "pods", "-n", "default");
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Error from server \(Forbidden\): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"/);
    const del = await alice("delete", "pod", "web", "-n", "team-a");
    assert.match(del.stderr, /Error from server \(Forbidden\): pods "web" is forbidden: User "alice" cannot delete resource "pods" in API group "" in the namespace "team-a"/);
  });
});
