// End to end: a standalone `orch nodeagent --bootstrap-kubeconfig` (upstream's
// kubelet TLS bootstrap) against `orch server --disable-agent`, with kubectl
// 1.33 (root: the embedded runtime). The bootstrap kubeconfig holds the
// server's bootstrap token; the agent gets system:node:NAME through a CSR the
// controller manager approves and signs, writes --kubeconfig naming the
// certificate file, registers its node, and a restart uses that kubeconfig.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseJoinToken } from "../src/cli/join-token.js";
import { eventually } from "../src/controllers/testing.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startComponent, startOrch, type OrchProcess } from "./support/orch-process.js";

function skipReason(): string | false {
  if (process.getuid?.() !== 0) return "needs root (the node agent's embedded runtime)";
  return kubectlSkipReason() ?? false;
}

describe("orch nodeagent --bootstrap-kubeconfig", { skip: skipReason() }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  const dir = mkdtempSync(join(tmpdir(), "orch-e2e-agent-bootstrap-"));

  before(async () => {
    orch = await startOrch("server", ["--disable-agent", "--disable-scheduler"]);
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the agent bootstraps its certificate, writes --kubeconfig, registers its node; a restart needs no token", async () => {
    const token = parseJoinToken(readFileSync(join(orch.dataDir, "join.token"), "utf8"))!.token;
    const ca = Buffer.from(readFileSync(join(orch.dataDir, "ca.crt"))).toString("base64");
    const bootstrap = join(dir, "bootstrap.kubeconfig");
    writeFileSync(bootstrap, [
      "apiVersion: v1", "kind: Config",
      `clusters: [{name: c, cluster: {server: "${orch.url}", certificate-authority-data: ${ca}}}]`,
      `users: [{name: u, user: {token: "${token}"}}]`,
      "contexts: [{name: x, context: {cluster: c, user: u}}]", "current-context: x", "",
    ].join("\n"));
    const kubeconfig = join(dir, "nodeagent.kubeconfig");
    const args = [
      "--kubeconfig", kubeconfig, "--bootstrap-kubeconfig", bootstrap, "--hostname-override", "booted",
      "--root-dir", join(dir, "root"), "--cert-dir", join(dir, "pki"), "--pod-logs-dir", join(dir, "logs"), "--port", "0", "--stop-pods-on-exit",
    ];
    const agent = await startComponent("nodeagent", args, { readyTimeoutMs: 60_000 });
    try {
      await eventually("node booted Ready", async () => {
        const r = await k.run(["get", "node", "booted", "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}"]);
        return r.stdout.trim() === "True";
      }, 60_000);
      assert.match(readFileSync(kubeconfig, "utf8"), /client-certificate: ".*nodeagent-client-current\.pem"/);
      const asNode = new Kubectl(kubeconfig);
      assert.match(await asNode.ok("auth", "whoami"), /system:node:booted[\s\S]*system:nodes/);
      assert.match(await k.ok("get", "csr"), /kube-apiserver-client-nodeagent\s+system:bootstrap:[a-z0-9]{6}\s+<none>\s+Approved,Issued/);
    } finally {
      await agent.stop();
    }
    // A restart with the written kubeconfig: the bootstrap file is not needed any more.
    rmSync(bootstrap);
    const again = await startComponent("nodeagent", args, { readyTimeoutMs: 60_000 });
    try {
      assert.doesNotMatch(again.output(), /TLS bootstrap/);
      await eventually("node booted still Ready", async () => (await k.run(["get", "node", "booted"])).code === 0, 30_000);
    } finally {
      await again.stop();
    }
  });
});
