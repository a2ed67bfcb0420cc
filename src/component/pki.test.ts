import { test } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, connect } from "node:tls";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureCredentials, PKI_FILES } from "./pki.js";

test("first start makes a CA, a serving cert and an admin token; a restart keeps them", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-pki-"));
  try {
    const first = await ensureCredentials(dir);
    assert.equal(statSync(join(dir, PKI_FILES.caKey)).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, PKI_FILES.serverKey)).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, PKI_FILES.adminToken)).mode & 0o777, 0o600);
    const cert = new X509Certificate(first.serverCertPem);
    assert.ok(cert.verify(new X509Certificate(first.caCertPem).publicKey), "signed by the CA");
    assert.ok(cert.checkHost("localhost"));
    assert.ok(cert.checkIP("127.0.0.1"));
    assert.ok(first.adminToken.length >= 40);

    const second = await ensureCredentials(dir);
    assert.deepEqual(second, first, "a restart with the same folder keeps everything");

    const third = await ensureCredentials(dir, ["orch.example.test"]);
    assert.equal(third.caCertPem, first.caCertPem);
    assert.notEqual(third.serverCertPem, first.serverCertPem, "a new name gets a new serving cert from the same CA");
    assert.ok(new X509Certificate(third.serverCertPem).checkHost("orch.example.test"));
    assert.equal(readFileSync(join(dir, PKI_FILES.serverCert), "utf8"), third.serverCertPem);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a TLS client trusting only the CA accepts the serving cert for 127.0.0.1", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-pki-"));
  const creds = await ensureCredentials(dir);
  const server = createServer({ cert: creds.serverCertPem, key: creds.serverKeyPem }, (s) => s.end("ok"));
  try {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port, ca: creds.caCertPem }, () => {
        socket.setEncoding("utf8");
        let data = "";
        socket.on("data", (d) => (data += d));
        socket.on("end", () => resolve(data));
      });
      socket.on("error", reject);
    });
    assert.equal(reply, "ok");
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the API server's node-agent client certificate carries the naming table's user; a start under the other profile replaces it", async () => {
  const { namingFor, nodeAgentClientUser } = await import("../machinery/naming.js");
  assert.equal(nodeAgentClientUser(namingFor()), "orch-apiserver-nodeagent-client");
  assert.equal(nodeAgentClientUser(namingFor("k8s.io")), "kube-apiserver-kubelet-client");
  const dir = mkdtempSync(join(tmpdir(), "orch-pki-agent-client-"));
  try {
    const cn = (pem: string) => new X509Certificate(pem).subject.split("\n");
    const orch = await ensureCredentials(dir, [], nodeAgentClientUser(namingFor()));
    assert.ok(cn(orch.nodeAgentClient.cert).includes("CN=orch-apiserver-nodeagent-client"), cn(orch.nodeAgentClient.cert).join(" "));
    assert.ok(cn(orch.nodeAgentClient.cert).includes("O=system:masters"));
    const again = await ensureCredentials(dir, [], nodeAgentClientUser(namingFor()));
    assert.equal(again.nodeAgentClient.cert, orch.nodeAgentClient.cert, "kept while valid and named right");
    const kube = await ensureCredentials(dir, [], nodeAgentClientUser(namingFor("k8s.io")));
    assert.ok(cn(kube.nodeAgentClient.cert).includes("CN=kube-apiserver-kubelet-client"), cn(kube.nodeAgentClient.cert).join(" "));
    assert.ok(cn(kube.nodeAgentClient.cert).includes("O=system:masters"));
    assert.equal(readFileSync(join(dir, PKI_FILES.nodeAgentClientCert), "utf8"), kube.nodeAgentClient.cert);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
