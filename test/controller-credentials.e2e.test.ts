// End to end: `orch server` runs its controllers under their own service
// accounts (--use-service-account-credentials, on by default there), with
// kubectl 1.33 and pods on the embedded runtime (root). A Deployment still
// rolls out and a Job completes; each controller's account exists in the
// system namespace; a token of the Deployment controller's account is that
// account (`kubectl auth whoami`) and is refused what its role lacks (403
// with upstream's text), allowed what it has. The server's own node agent
// talks as system:node:NAME, so the Node authorizer bounds it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

function skipReason(): string | false {
  if (process.getuid?.() !== 0) return "needs root (pods on the embedded runtime)";
  return kubectlSkipReason() ?? false;
}

const NS = "creds-e2e";
const SYSTEM = "orch-system";

describe("controllers under their own service accounts (orch server)", { skip: skipReason() }, () => {
  let orch: OrchProcess;
  let k: Kubectl;

  before(async () => {
    orch = await startOrch("server", ["--node-name=creds-main", "--iptables-chain-prefix=ORCHCRD", "--iptables-min-sync-period=0"], { readyTimeoutMs: 90_000 });
    k = new Kubectl(orch.kubeconfig);
    await k.ok("create", "namespace", NS);
  });
  after(async () => orch?.stop());

  test("a Deployment rolls out and a Job completes", async () => {
    await k.ok("create", "deployment", "web", "-n", NS, "--replicas=2", "--image=busybox:1.36", "--", "sleep", "100000");
    const rolled = await k.run(["rollout", "status", "deployment/web", "-n", NS, "--timeout=90s"], { timeoutMs: 100_000 });
    assert.equal(rolled.code, 0, rolled.stderr + rolled.stdout);
    assert.match(rolled.stdout, /successfully rolled out/);
    await k.ok("create", "job", "once", "-n", NS, "--image=busybox:1.36", "--", "true");
    const done = await k.run(["wait", "--for=condition=Complete", "job/once", "-n", NS, "--timeout=90s"], { timeoutMs: 100_000 });
    assert.equal(done.code, 0, done.stderr + done.stdout);
    assert.doesNotMatch(orch.output(), /is forbidden: User "system:serviceaccount:orch-system:/, "no controller was refused anything");
  });

  test("each controller's account exists; the Deployment controller's token is that account, refused what its role lacks", async () => {
    const accounts = (await k.ok("get", "serviceaccounts", "-n", SYSTEM, "-o", "name")).split("\n");
    for (const a of ["deployment-controller", "replicaset-controller", "job-controller", "generic-garbage-collector", "namespace-controller", "node-controller", "certificate-controller"]) {
      assert.ok(accounts.includes(`serviceaccount/${a}`), `${a} among ${accounts.join(" ")}`);
    }
    const token = (await k.ok("create", "token", "deployment-controller", "-n", SYSTEM)).trim();
    const as = (...args: string[]) => k.run(["--token", token, ...args]);
    const who = await as("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}");
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.stdout.trim(), `system:serviceaccount:${SYSTEM}:deployment-controller`);
    const secrets = await as("get", "secrets", "-n", NS);
    assert.notEqual(secrets.code, 0);
    assert.match(secrets.stderr, new RegExp(`secrets is forbidden: User "system:serviceaccount:${SYSTEM}:deployment-controller" cannot list resource "secrets" in API group "" in the namespace "${NS}"`));
    const nodes = await as("delete", "node", "creds-main");
    assert.match(nodes.stderr, /forbidden/);
    const canI = async (args: string[], answer: "yes" | "no") => assert.equal((await as("auth", "can-i", ...args)).stdout.trim(), answer, args.join(" "));
    await canI(["update", "deployments/status", "-n", NS], "yes");
    await canI(["create", "replicasets", "-n", NS], "yes");
    await canI(["create", "pods", "-n", NS], "no");
    await canI(["delete", "deployments", "-n", NS], "no");
    assert.equal((await as("get", "replicasets", "-n", NS)).code, 0, "its role reads replica sets");
  });

  test("orch server's own node agent talks as system:node:NAME: its pods get their secret, other secrets are refused (Node authorizer)", async () => {
    const pem = readFileSync(join(orch.dataDir, "nodeagent", "pki", "nodeagent-client-current.pem"), "utf8");
    const cert = new X509Certificate(pem);
    assert.ok(cert.subject.split("\n").includes("CN=system:node:creds-main"), cert.subject);
    assert.ok(cert.subject.split("\n").includes("O=system:nodes"), cert.subject);
    await k.ok("create", "secret", "generic", "mounted", "-n", NS, "--from-literal=k=v");
    await k.ok("create", "secret", "generic", "unrelated", "-n", NS, "--from-literal=k=v");
    const podFile = join(orch.dataDir, "secret-pod.yaml");
    writeFileSync(podFile, `apiVersion: v1
kind: Pod
metadata: {name: with-secret, namespace: ${NS}}
spec:
  containers: [{name: c, image: busybox:1.36, command: [cat, /s/k], volumeMounts: [{name: s, mountPath: /s}]}]
  restartPolicy: Never
  volumes: [{name: s, secret: {secretName: mounted}}]
`);
    await k.ok("apply", "-f", podFile);
    const done = await k.run(["wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/with-secret", "-n", NS, "--timeout=90s"], { timeoutMs: 100_000 });
    assert.equal(done.code, 0, done.stderr + done.stdout);
    assert.equal((await k.ok("logs", "with-secret", "-n", NS)).trim(), "v");
    // The agent's own credentials: the Node authorizer's graph, not admin.
    const data = Buffer.from(pem).toString("base64");
    const nodeKubeconfig = join(orch.dataDir, "node.kubeconfig");
    writeFileSync(nodeKubeconfig, readFileSync(orch.kubeconfig, "utf8").replace(/    token: .*/, `    client-certificate-data: ${data}\n    client-key-data: ${data}`));
    const node = new Kubectl(nodeKubeconfig);
    assert.match(await node.ok("auth", "whoami"), /system:node:creds-main[\s\S]*system:nodes/);
    const asNode = (...args: string[]) => node.run(args);
    const mine = await asNode("get", "secret", "mounted", "-n", NS);
    assert.equal(mine.code, 0, mine.stderr);
    const other = await asNode("get", "secret", "unrelated", "-n", NS);
    assert.notEqual(other.code, 0);
    assert.match(other.stderr, /secrets "unrelated" is forbidden: User "system:node:creds-main" cannot get resource "secrets" in API group "" in the namespace "creds-e2e": no relationship found between node 'creds-main' and this object/);
  });

  test("the garbage collector and the namespace controller clean up under their roles", async () => {
    await k.ok("delete", "deployment", "web", "-n", NS, "--wait=false");
    const gone = await k.run(["wait", "--for=delete", "pod", "-l", "app=web", "-n", NS, "--timeout=90s"], { timeoutMs: 100_000 });
    assert.equal(gone.code, 0, gone.stderr + gone.stdout);
    const ns = await k.run(["delete", "namespace", NS, "--timeout=90s"], { timeoutMs: 100_000 });
    assert.equal(ns.code, 0, ns.stderr + ns.stdout);
    assert.doesNotMatch(orch.output(), /forbidden: User "system:serviceaccount:orch-system:/, "no controller was refused anything");
  });
});
