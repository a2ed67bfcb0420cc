// The certificate controllers with the node agent's TLS bootstrap, against
// a real API server (Node,RBAC): a bootstrap token gets a node its
// system:node:NAME certificate (approved as nodeclient, signed by the
// cluster CA), a restart with it needs no token, and it is rotated at 80 %
// of its life (approved as selfnodeclient); a bootstrap token can do nothing
// else; requests the approver does not know wait for a person; a node
// request with a wrong subject is never approved and fails when signed;
// expired tokens are refused and deleted; lifetimes are
// min(--cluster-signing-duration, expirationSeconds).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { X509Certificate, webcrypto } from "node:crypto";

type CryptoKeyPairOf = webcrypto.CryptoKeyPair;
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../../api/index.js";
import { bootstrapTokenSecret, generateBootstrapToken, type CertificateSigningRequest } from "../../api/certificates/index.js";
import { SECRETS } from "../../api/resource-refs.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { RestClient, type ClientConfig } from "../../client/index.js";
import { makeCertificateRequest } from "../../component/pki.js";
import { namingFor } from "../../machinery/naming.js";
import { clientCertificateFile, nodeClientConfig, rotateNodeCertificate, type NodeCertificate } from "../../nodeagent/certificates/index.js";
import { controllerContext, eventually, type TestContext } from "../testing.js";
import { CsrApprover } from "./approver.js";
import { certificateLifetime, CsrSigner } from "./signer.js";
import { TokenCleaner } from "./token-cleaner.js";
import { csrResource } from "./common.js";

const naming = namingFor();

/** A node's serving request with DNS and IP names (what a node agent would send the serving signer). */
async function makeServingRequest(): Promise<{ csr: string }> {
  const x509 = await import("@peculiar/x509");
  x509.cryptoProvider.set(webcrypto as never);
  const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"])) as CryptoKeyPairOf;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: "CN=system:node:n1, O=system:nodes", keys, signingAlgorithm: alg,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: "dns", value: "n1.example.com" }, { type: "ip", value: "10.0.0.7" }])],
  });
  return { csr: csr.toString("pem") };
}
const CSRS = "/apis/certificates.orch.io/v1/certificatesigningrequests";
const WHOAMI = "/apis/authentication.orch.io/v1/selfsubjectreviews";

describe("certificate controllers and node TLS bootstrap", () => {
  let t: TestServer;
  let ctx: TestContext;
  let running: Promise<void>[];
  let dir: string;
  let ca: string;
  const token = generateBootstrapToken();
  const cluster = (): ClientConfig => ({ server: t.server.url, ca, token });
  const whoami = async (config: ClientConfig) => {
    const client = new RestClient(config);
    try {
      const res = await client.request({ method: "POST", path: WHOAMI, headers: { "content-type": "application/json" }, body: JSON.stringify({ apiVersion: "authentication.orch.io/v1", kind: "SelfSubjectReview" }) });
      return { status: res.status, body: JSON.parse(res.body.toString()) };
    } finally {
      client.close();
    }
  };

  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    ca = t.server.credentials.caCertPem;
    dir = mkdtempSync(join(tmpdir(), "orch-node-pki-"));
    // Ten-second certificates, so the rotation happens within the test.
    ctx = controllerContext(t, { config: { signing: { certFile: join(t.dataDir, "ca.crt"), keyFile: join(t.dataDir, "ca.key"), durationMs: 10_000 } } });
    running = [new CsrApprover(ctx).run(), new CsrSigner(ctx).run(), new TokenCleaner(ctx).run()];
    ctx.start();
    await ctx.client.create(SECRETS, bootstrapTokenSecret(naming, token, { now: new Date(), ttlMs: 3600_000, description: "test" }) as never);
  });
  after(async () => {
    await ctx.stop(...running);
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let first: { config: ClientConfig; certificate: NodeCertificate };

  test("a bootstrap token is system:bootstrap:<id> in system:bootstrappers, and may create and read CSRs only", async () => {
    const me = await whoami(cluster());
    assert.equal(me.status, 201, JSON.stringify(me.body));
    assert.equal(me.body.status.userInfo.username, `system:bootstrap:${token.slice(0, 6)}`);
    assert.deepEqual(me.body.status.userInfo.groups, ["system:bootstrappers", "system:authenticated"]);
    const client = new RestClient(cluster());
    try {
      const pods = await client.request({ method: "GET", path: "/api/v1/pods" });
      assert.equal(pods.status, 403);
      assert.match(pods.body.toString(), /User \\"system:bootstrap:[a-z0-9]{6}\\" cannot list resource \\"pods\\"/);
      assert.equal((await client.request({ method: "GET", path: CSRS })).status, 200);
    } finally {
      client.close();
    }
    const wrong = await whoami({ ...cluster(), token: `${token.slice(0, 7)}${"0".repeat(16)}` });
    assert.equal(wrong.status, 401);
  });

  test("the node gets a system:node:NAME certificate with the token, approved as nodeclient and signed by the cluster CA", async () => {
    first = await nodeClientConfig({ cluster: cluster(), dir, nodeName: "n1", naming, timeoutMs: 15_000 });
    const cert = new X509Certificate(first.certificate.cert);
    assert.deepEqual(cert.subject.split("\n"), ["CN=system:node:n1", "O=system:nodes"]);
    assert.ok(cert.verify(new X509Certificate(ca).publicKey), "signed by the cluster CA");
    assert.ok(first.certificate.notAfter - first.certificate.notBefore <= 11_000, "the signing duration bounds the lifetime");
    assert.equal(first.config.token, undefined, "the token is not used any more");
    assert.equal(statSync(clientCertificateFile(dir, naming)).mode & 0o777, 0o600);
    const me = await whoami(first.config);
    assert.equal(me.body.status.userInfo.username, "system:node:n1");
    assert.ok(me.body.status.userInfo.groups.includes("system:nodes"));
    const csrs = (await ctx.client.list<CertificateSigningRequest>(csrResource(naming))).items;
    const mine = csrs.find((c) => c.spec?.username?.startsWith("system:bootstrap:"))!;
    assert.equal(mine.status?.conditions?.[0]?.reason, "AutoApproved");
    assert.equal(mine.status?.conditions?.[0]?.message, "Auto approving kubelet client certificate after SubjectAccessReview.");
  });

  test("a restart with a valid certificate needs no token", async () => {
    const again = await nodeClientConfig({ cluster: { server: t.server.url, ca }, dir, nodeName: "n1", naming });
    assert.equal(again.certificate.cert, first.certificate.cert);
  });

  test("the certificate is renewed at 80 % of its life with itself, approved as selfnodeclient", async () => {
    const abort = new AbortController();
    const rotated: NodeCertificate[] = [];
    const config = { ...first.config };
    const rotation = rotateNodeCertificate({ config, certificate: first.certificate, dir, naming, nodeName: "n1", signal: abort.signal, onRotated: (c) => rotated.push(c) });
    const started = Date.now();
    await eventually("a rotation", () => rotated.length > 0, 20_000);
    abort.abort();
    await rotation;
    const elapsed = Date.now() - started;
    const life = first.certificate.notAfter - first.certificate.notBefore;
    assert.ok(Date.now() >= first.certificate.notBefore + 0.8 * life - 1500, `rotated at 80 % of its life (after ${elapsed} ms)`);
    assert.notEqual(rotated[0]!.cert, first.certificate.cert);
    assert.equal(config.cert, rotated[0]!.cert, "the shared config carries the new certificate");
    const me = await whoami(config);
    assert.equal(me.body.status.userInfo.username, "system:node:n1");
    const renewal = (await ctx.client.list<CertificateSigningRequest>(csrResource(naming))).items.find((c) => c.spec?.username === "system:node:n1")!;
    assert.equal(renewal.status?.conditions?.[0]?.message, "Auto approving self kubelet client certificate after SubjectAccessReview.");
  });

  test("a request for another signer waits for a person; approved by hand it is signed", async () => {
    const request = Buffer.from((await makeCertificateRequest("alice", ["devs"])).csr).toString("base64");
    await ctx.client.create(csrResource(naming), { apiVersion: "certificates.orch.io/v1", kind: "CertificateSigningRequest", metadata: { name: "alice" }, spec: { request, signerName: "orch.io/kube-apiserver-client", usages: ["client auth"] } } as never);
    await new Promise((r) => setTimeout(r, 1000));
    const pending = await ctx.client.get<CertificateSigningRequest>(csrResource(naming), { name: "alice" });
    assert.deepEqual(pending.status?.conditions ?? [], [], "not auto-approved");
    pending.status = { conditions: [{ type: "Approved", status: "True", reason: "ByHand" }] };
    await ctx.client.update(csrResource(naming), pending, { subresource: "approval" });
    const signed = await eventually("signed", async () => (await ctx.client.get<CertificateSigningRequest>(csrResource(naming), { name: "alice" })).status?.certificate);
    const cert = new X509Certificate(Buffer.from(signed!, "base64"));
    assert.deepEqual(cert.subject.split("\n"), ["CN=alice", "O=devs"]);
  });

  test("a node request with a wrong subject is never auto-approved, and fails when approved by hand", async () => {
    const request = Buffer.from((await makeCertificateRequest("system:node:n2", ["system:masters"])).csr).toString("base64");
    const bootstrap = new RestClient(cluster());
    try {
      await bootstrap.create(csrResource(naming), { apiVersion: "certificates.orch.io/v1", kind: "CertificateSigningRequest", metadata: { name: "sneaky" }, spec: { request, signerName: "orch.io/kube-apiserver-client-nodeagent", usages: ["client auth"] } } as never);
    } finally {
      bootstrap.close();
    }
    await new Promise((r) => setTimeout(r, 1000));
    const pending = await ctx.client.get<CertificateSigningRequest>(csrResource(naming), { name: "sneaky" });
    assert.deepEqual(pending.status?.conditions ?? [], []);
    pending.status = { conditions: [{ type: "Approved", status: "True", reason: "ByHand" }] };
    await ctx.client.update(csrResource(naming), pending, { subresource: "approval" });
    const failed = await eventually("failed", async () => (await ctx.client.get<CertificateSigningRequest>(csrResource(naming), { name: "sneaky" })).status?.conditions?.find((c) => c.type === "Failed"));
    assert.equal(failed.reason, "SignerValidationFailure");
    assert.equal(failed.message, "subject organization is not system:nodes");
  });

  test("the serving signer keeps the request's names and refuses client usages", async () => {
    const { csr: pem } = await makeServingRequest();
    const create = async (name: string, usages: string[]) => {
      await ctx.client.create(csrResource(naming), { apiVersion: "certificates.orch.io/v1", kind: "CertificateSigningRequest", metadata: { name }, spec: { request: Buffer.from(pem).toString("base64"), signerName: "orch.io/nodeagent-serving", usages } } as never);
      const current = await ctx.client.get<CertificateSigningRequest>(csrResource(naming), { name });
      current.status = { conditions: [{ type: "Approved", status: "True", reason: "ByHand" }] };
      await ctx.client.update(csrResource(naming), current, { subresource: "approval" });
    };
    await create("serving", ["digital signature", "server auth"]);
    const signed = await eventually("serving signed", async () => (await ctx.client.get<CertificateSigningRequest>(csrResource(naming), { name: "serving" })).status?.certificate);
    const cert = new X509Certificate(Buffer.from(signed!, "base64"));
    assert.match(cert.subjectAltName ?? "", /DNS:n1\.example\.com/);
    assert.match(cert.subjectAltName ?? "", /IP Address:10\.0\.0\.7/);
    assert.ok(cert.checkHost("n1.example.com"));
    await create("serving-client", ["client auth"]);
    const failed = await eventually("failed", async () => (await ctx.client.get<CertificateSigningRequest>(csrResource(naming), { name: "serving-client" })).status?.conditions?.find((c) => c.type === "Failed"));
    assert.match(failed.message ?? "", /usages did not match/);
  });

  test("orch nodeagent --bootstrap-kubeconfig: a certificate got with the token, --kubeconfig written naming it; the next start reads that", async () => {
    const { writeFileSync, readFileSync } = await import("node:fs");
    const { bootstrapNodeCredentials } = await import("../../nodeagent/certificates/index.js");
    const { loadKubeconfig } = await import("../../client/index.js");
    const agentDir = mkdtempSync(join(tmpdir(), "orch-node-bootstrap-"));
    try {
      const bootstrapFile = join(agentDir, "bootstrap.kubeconfig");
      writeFileSync(bootstrapFile, [
        "apiVersion: v1", "kind: Config",
        `clusters: [{name: c, cluster: {server: "${t.server.url}", certificate-authority-data: ${Buffer.from(ca).toString("base64")}}}]`,
        `users: [{name: u, user: {token: "${token}"}}]`,
        "contexts: [{name: x, context: {cluster: c, user: u}}]", "current-context: x", "",
      ].join("\n"));
      const kubeconfig = join(agentDir, "etc", "nodeagent.kubeconfig");
      const certDir = join(agentDir, "pki");
      const lines: string[] = [];
      const made = await bootstrapNodeCredentials({ kubeconfig, bootstrapKubeconfig: bootstrapFile, certDir, nodeName: "booted", log: (l) => lines.push(l) });
      assert.equal(made.naming.groupSuffix, "orch.io");
      assert.equal((await whoami(made.config)).body.status.userInfo.username, "system:node:booted");
      // --kubeconfig names the certificate file for both client-certificate and client-key, as upstream's kubelet writes it.
      const written = readFileSync(kubeconfig, "utf8");
      const pem = clientCertificateFile(certDir, naming);
      assert.match(written, new RegExp(`client-certificate: "${pem}"`));
      assert.match(written, new RegExp(`client-key: "${pem}"`));
      assert.equal(statSync(kubeconfig).mode & 0o777, 0o600);
      const loaded = loadKubeconfig(kubeconfig);
      assert.equal(loaded.token, undefined, "no token in the written kubeconfig");
      // A second start: --kubeconfig is used as it is, the bootstrap file is not even read.
      rmSync(bootstrapFile);
      const again = await bootstrapNodeCredentials({ kubeconfig, bootstrapKubeconfig: bootstrapFile, certDir, nodeName: "booted" });
      assert.equal(again.certificate.cert, made.certificate.cert);
      assert.equal((await whoami(again.config)).body.status.userInfo.username, "system:node:booted");
      // Another node's name: the stored certificate is not this node's, so it bootstraps again (and fails here: the file is gone).
      await assert.rejects(bootstrapNodeCredentials({ kubeconfig, bootstrapKubeconfig: bootstrapFile, certDir, nodeName: "other" }), /ENOENT|no such file/i);
    } finally {
      rmSync(agentDir, { recursive: true, force: true });
    }
  });

  test("an expired bootstrap token is refused, then deleted by the cleaner", async () => {
    const old = generateBootstrapToken();
    const secret = bootstrapTokenSecret(naming, old, { now: new Date(Date.now() - 3_600_000), ttlMs: 1000, description: "expired" });
    await ctx.client.create(SECRETS, secret as never);
    const r = await whoami({ server: t.server.url, ca, token: old });
    assert.equal(r.status, 401);
    await eventually("deleted", async () => (await ctx.client.get(SECRETS, { namespace: naming.systemNamespace, name: secret.metadata.name }).catch(() => undefined)) === undefined);
    await eventually("logged", () => ctx.lines.some((l) => l.includes(`deleted expired bootstrap token secret ${naming.systemNamespace}/${secret.metadata.name}`)));
  });

  test("lifetime: min(--cluster-signing-duration, expirationSeconds), within the CA's, backdated", () => {
    const now = 1_000_000_000;
    assert.deepEqual(certificateLifetime(now, 3600_000 * 24, 600, Infinity), { notBefore: now - 60_000, notAfter: now + 600_000 });
    assert.deepEqual(certificateLifetime(now, 3600_000 * 24, null, Infinity), { notBefore: now - 300_000, notAfter: now + 3600_000 * 24 });
    assert.deepEqual(certificateLifetime(now, 3600_000 * 24, null, now + 1000), { notBefore: now - 300_000, notAfter: now + 1000 });
  });
});
