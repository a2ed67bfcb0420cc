// End to end: node identities. `orch server --api-group-suffix=k8s.io` (so
// kubectl 1.33's compiled-in certificates.k8s.io group is the server's), a
// second node agent joined with DATA_DIR/join.token (a bootstrap token that
// only buys a CSR): its client certificate is system:node:NAME in
// system:nodes, kept in its pki folder; with it (kubectl 1.33 and a
// kubeconfig of that certificate) it cannot read the secret of another
// node's pod nor change another Node (403, upstream's texts), but reads its
// own pod's secret and updates its own Node's status. `kubectl get csr`,
// `kubectl certificate approve` and `deny` work on CertificateSigningRequests.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeCertificateRequest } from "../src/component/pki.js";
import { eventually } from "../src/controllers/testing.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startJoinedAgent, startOrch, type JoinedAgentProcess, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-nodecreds-"));
const file = (name: string, content: string) => {
  const path = join(files, name);
  writeFileSync(path, content);
  return path;
};
const SLEEP = String(800_000 + (process.pid % 100_000));

const podWithSecret = (name: string, node: string, secret: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  nodeName: ${node}
  terminationGracePeriodSeconds: 1
  volumes: [{name: s, secret: {secretName: ${secret}}}]
  containers: [{name: main, image: busybox:1.36, command: [sleep, "${SLEEP}"], volumeMounts: [{name: s, mountPath: /s}]}]
`;

describe("node credentials: bootstrap token, node certificate, Node authorizer and NodeRestriction (kubectl 1.33)", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let worker: JoinedAgentProcess | undefined;
  let k: Kubectl;
  let asNode: Kubectl;
  let workerPem: string;

  before(async () => {
    orch = await startOrch("server", ["--node-name=main", "--api-group-suffix=k8s.io"], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await worker?.stop();
    await orch?.stop();
    rmSync(files, { recursive: true, force: true });
  });

  test("a node joined with the join token gets a system:node:NAME client certificate through a CSR", async () => {
    const joinToken = readFileSync(join(orch.dataDir, "join.token"), "utf8").trim();
    assert.match(joinToken, /^orch1\.[0-9a-f]{64}\.[a-z0-9]{6}\.[a-z0-9]{16}$/, "the join token carries a bootstrap token, not the admin's");
    assert.ok(!joinToken.includes(readFileSync(join(orch.dataDir, "admin.token"), "utf8").trim()));
    const secret = JSON.parse(await k.ok("get", "secret", "-n", "kube-system", `bootstrap-token-${joinToken.split(".")[2]}`, "-o", "json"));
    assert.equal(secret.type, "bootstrap.kubernetes.io/token");
    assert.ok(Date.parse(Buffer.from(secret.data.expiration, "base64").toString()) > Date.now() + 23 * 3600_000, "expires in 24 h");

    worker = await startJoinedAgent(["--join", orch.url, "--token", joinToken], "worker", { readyTimeoutMs: 90_000 });
    const pki = join(worker.dataDir, "nodeagent", "pki");
    assert.ok(readdirSync(pki).includes("kubelet-client-current.pem"), readdirSync(pki).join(", "));
    workerPem = readFileSync(join(pki, "kubelet-client-current.pem"), "utf8");
    const cert = new X509Certificate(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(workerPem)![0]);
    assert.deepEqual(cert.subject.split("\n"), ["CN=system:node:worker", "O=system:nodes"]);
    assert.ok(cert.verify(new X509Certificate(readFileSync(join(orch.dataDir, "ca.crt"))).publicKey));

    const csrs = await k.ok("get", "csr");
    assert.match(csrs.split("\n")[0]!, /^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION$/);
    assert.match(csrs, /kubernetes\.io\/kube-apiserver-client-kubelet\s+system:bootstrap:[a-z0-9]{6}\s+<none>\s+Approved,Issued/);

    const pem = Buffer.from(workerPem).toString("base64");
    const kubeconfig = readFileSync(orch.kubeconfig, "utf8").replace(/    token: .*/, `    client-certificate-data: ${pem}\n    client-key-data: ${pem}`);
    asNode = new Kubectl(file("worker.kubeconfig", kubeconfig));
    assert.match(await asNode.ok("auth", "whoami"), /system:node:worker[\s\S]*system:nodes/);
  });

  test("with its credentials the node reads its own pod's secret, not another node's, and changes only its own Node", async () => {
    await k.ok("create", "secret", "generic", "main-secret", "--from-literal=a=b");
    await k.ok("create", "secret", "generic", "worker-secret", "--from-literal=a=b");
    await k.ok("create", "-f", file("main-pod.yaml", podWithSecret("on-main", "main", "main-secret")));
    await k.ok("create", "-f", file("worker-pod.yaml", podWithSecret("on-worker", "worker", "worker-secret")));

    const theirs = await asNode.run(["get", "secret", "main-secret"]);
    assert.notEqual(theirs.code, 0);
    assert.match(theirs.stderr, /secrets "main-secret" is forbidden: User "system:node:worker" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'worker' and this object/);
    await eventually("own pod's secret readable", async () => (await asNode.run(["get", "secret", "worker-secret"])).code === 0);

    const label = await asNode.run(["label", "node", "main", "stolen=yes"]);
    assert.notEqual(label.code, 0);
    assert.match(label.stderr, /nodes "main" is forbidden: node "worker" is not allowed to modify node "main"/);
    // As upstream's node rules: a node may update and patch nodes/status but not get it, so kubectl patch
    // --subresource (which reads first) is not for nodes; a PUT of the Node to /status is.
    const putStatus = async (name: string) => {
      const node = JSON.parse(await asNode.ok("get", "node", name, "-o", "json"));
      delete node.metadata.resourceVersion;
      node.status.capacity = { ...node.status.capacity, "example.com/dongle": "1" };
      return asNode.run(["replace", "--raw", `/api/v1/nodes/${name}/status`, "-f", file(`${name}-status.json`, JSON.stringify(node))]);
    };
    const other = await putStatus("main");
    assert.notEqual(other.code, 0);
    assert.match(other.stderr, /nodes "main" is forbidden: node "worker" is not allowed to modify node "main"/);
    const own = await putStatus("worker");
    assert.equal(own.code, 0, own.stderr);
    assert.equal(JSON.parse(own.stdout).status.capacity["example.com/dongle"], "1");
    const restricted = await asNode.run(["label", "node", "worker", "node-restriction.kubernetes.io/trusted=yes"]);
    assert.match(restricted.stderr, /is not allowed to modify labels: node-restriction\.kubernetes\.io\/trusted/);
    await k.ok("delete", "pod", "on-main", "on-worker", "--grace-period=1", "--wait=false");
  });

  test("kubectl certificate approve and deny; an approved client request is signed for the asked duration", async () => {
    const csr = (name: string, cn: string) => `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: ${name}}
spec:
  request: ${Buffer.from(cn).toString("base64")}
  signerName: kubernetes.io/kube-apiserver-client
  expirationSeconds: 3600
  usages: [digital signature, client auth]
`;
    for (const [name, cn] of [["alice", "alice"], ["mallory", "mallory"]] as const) {
      const request = (await makeCertificateRequest(cn, ["devs"])).csr;
      await k.ok("create", "-f", file(`${name}.yaml`, csr(name, request)));
    }
    assert.match(await k.ok("certificate", "approve", "alice"), /certificatesigningrequest\.certificates\.k8s\.io\/alice approved/);
    assert.match(await k.ok("certificate", "deny", "mallory"), /certificatesigningrequest\.certificates\.k8s\.io\/mallory denied/);
    const issued = await eventually("alice issued", async () => JSON.parse(await k.ok("get", "csr", "alice", "-o", "json")).status.certificate as string | undefined, 20_000);
    const cert = new X509Certificate(Buffer.from(issued, "base64"));
    assert.deepEqual(cert.subject.split("\n"), ["CN=alice", "O=devs"]);
    const life = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
    assert.ok(life <= 3600_000 + 400_000 && life >= 3600_000, `an hour (+ backdate): ${life}`);
    const rows = await k.ok("get", "csr", "alice", "mallory");
    assert.match(rows, /alice\s+\S+\s+kubernetes\.io\/kube-apiserver-client\s+admin\s+60m\s+Approved,Issued/);
    assert.match(rows, /mallory\s+\S+\s+kubernetes\.io\/kube-apiserver-client\s+admin\s+60m\s+Denied/);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(JSON.parse(await k.ok("get", "csr", "mallory", "-o", "json")).status.certificate, undefined, "a denied request is never signed");
  });
});
