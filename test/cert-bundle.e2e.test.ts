// End to end: a large, upstream-style CRD bundle (test/support/cert-bundle.ts:
// six cert-manager-like definitions, over 5,000 lines of YAML) applied with
// the real, unmodified kubectl 1.33 to the real `orch apiserver` with
// upstream's names; then, for each kind, an object is created (unknown
// fields pruned with a warning, schema defaults filled in deep inside), one
// that breaks the schema is refused with upstream's message as kubectl
// prints it, and the objects are listed (by kind, all together, by category).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";
import { CERT_GROUP, certBundleYaml } from "./support/cert-bundle.js";

const V = `${CERT_GROUP}/v1`;
const ref = { name: "letsencrypt" };
const CSR = Buffer.from("-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n").toString("base64");

/** Per kind: a valid object (with an unknown field), the defaults it must get, and a refused one with kubectl's message. */
const KINDS: { resource: string; valid: any; defaults: (o: any) => void; refused: any; message: RegExp }[] = [
  {
    resource: "certificates",
    valid: { apiVersion: V, kind: "Certificate", metadata: { name: "web" }, spec: { secretName: "web-tls", dnsNames: ["web.example.com"], issuerRef: ref, privateKey: { algorithm: "ECDSA", size: 256 }, bogus: 1 } },
    defaults: (o) => {
      assert.equal(o.spec.duration, "2160h");
      assert.equal(o.spec.isCA, false);
      assert.equal(o.spec.revisionHistoryLimit, 3);
      assert.deepEqual(o.spec.issuerRef, { name: "letsencrypt", kind: "Issuer", group: CERT_GROUP });
      assert.equal(o.spec.privateKey.encoding, "PKCS1");
      assert.equal(o.spec.privateKey.rotationPolicy, "Always");
    },
    refused: { apiVersion: V, kind: "Certificate", metadata: { name: "nameless" }, spec: { secretName: "x", issuerRef: ref } },
    message: /The Certificate "nameless" is invalid: spec: Invalid value: "object": at least one of commonName, dnsNames, uris, ipAddresses or emailAddresses must be set/,
  },
  {
    resource: "certificaterequests",
    valid: { apiVersion: V, kind: "CertificateRequest", metadata: { name: "web-1" }, spec: { request: CSR, issuerRef: { ...ref, kind: "ClusterIssuer" }, usages: ["server auth", "digital signature"], bogus: true } },
    defaults: (o) => {
      assert.equal(o.spec.isCA, false);
      assert.equal(o.spec.issuerRef.kind, "ClusterIssuer", "given values stay");
      assert.equal(o.spec.issuerRef.group, CERT_GROUP);
    },
    refused: { apiVersion: V, kind: "CertificateRequest", metadata: { name: "bad-csr" }, spec: { request: "not base64!", issuerRef: ref, usages: ["teleport"] } },
    message: /The CertificateRequest "bad-csr" is invalid: \n\* spec.request: Invalid value: "not base64!": spec.request in body must be of type byte: "not base64!"\n\* spec.usages\[0\]: Unsupported value: "teleport": supported values: "signing", "digital signature"/,
  },
  {
    resource: "issuers",
    valid: {
      apiVersion: V, kind: "Issuer", metadata: { name: "letsencrypt" },
      spec: { acme: { server: "https://acme.example.com/directory", email: "ops@example.com", privateKeySecretRef: { name: "acme-key" }, solvers: [{ selector: { dnsZones: ["example.com"] }, http01: { ingress: { class: "nginx", podTemplate: { spec: { tolerations: [{ key: "dedicated", effect: "NoSchedule", bogus: 1 }], affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] }] } } } } } } } }] } },
    },
    defaults: (o) => {
      assert.equal(o.spec.acme.skipTLSVerify, false);
      assert.equal(o.spec.acme.disableAccountKeyGeneration, false);
      const ingress = o.spec.acme.solvers[0].http01.ingress;
      assert.equal(ingress.serviceType, "NodePort");
      assert.deepEqual(ingress.podTemplate.spec.tolerations[0], { key: "dedicated", effect: "NoSchedule", operator: "Equal" }, "defaulted and pruned seven levels down");
    },
    refused: { apiVersion: V, kind: "Issuer", metadata: { name: "plain" }, spec: { acme: { server: "http://acme.example.com", privateKeySecretRef: { name: "k" } } } },
    message: /The Issuer "plain" is invalid: spec.acme.server: Invalid value: "http:\/\/acme.example.com": spec.acme.server in body should match '\^https:\/\/'/,
  },
  {
    resource: "clusterissuers",
    valid: { apiVersion: V, kind: "ClusterIssuer", metadata: { name: "dns" }, spec: { acme: { server: "https://acme.example.com/directory", privateKeySecretRef: { name: "acme-key" }, solvers: [{ dns01: { azureDNS: { subscriptionID: "s", resourceGroupName: "rg", bogus: "x" }, rfc2136: { nameserver: "10.0.0.1:53" } } }] } } },
    defaults: (o) => {
      const dns01 = o.spec.acme.solvers[0].dns01;
      assert.equal(dns01.azureDNS.environment, "AzurePublicCloud");
      assert.equal(dns01.rfc2136.protocol, "UDP");
      assert.equal(o.metadata.namespace, undefined, "cluster-scoped");
    },
    refused: { apiVersion: V, kind: "ClusterIssuer", metadata: { name: "both" }, spec: { ca: { secretName: "root" }, selfSigned: {} } },
    message: /The ClusterIssuer "both" is invalid: spec: Invalid value: "object": only one of acme, ca, selfSigned, vault or venafi may be set/,
  },
  {
    resource: "orders",
    valid: { apiVersion: V, kind: "Order", metadata: { name: "web-1-order" }, spec: { request: CSR, dnsNames: ["web.example.com"], issuerRef: ref, bogus: 1 } },
    defaults: (o) => assert.deepEqual(o.spec.issuerRef, { name: "letsencrypt", kind: "Issuer", group: CERT_GROUP }),
    refused: { apiVersion: V, kind: "Order", metadata: { name: "no-request" }, spec: { issuerRef: {} } },
    message: /The Order "no-request" is invalid: \n\* spec.request: Required value\n\* spec.issuerRef.name: Required value/,
  },
  {
    resource: "challenges",
    valid: {
      apiVersion: V, kind: "Challenge", metadata: { name: "web-1-challenge" },
      spec: { authorizationURL: "https://acme.example.com/authz/1", dnsName: "web.example.com", issuerRef: ref, key: "k", token: "t", type: "HTTP-01", url: "https://acme.example.com/chall/1", solver: { http01: { gatewayHTTPRoute: { parentRefs: [{ name: "gw" }] } } }, bogus: 1 },
    },
    defaults: (o) => {
      assert.equal(o.spec.wildcard, false);
      assert.deepEqual(o.spec.solver.http01.gatewayHTTPRoute.parentRefs[0], { name: "gw", group: "gateway.networking.k8s.io", kind: "Gateway" });
      assert.equal(o.spec.solver.http01.gatewayHTTPRoute.serviceType, "NodePort");
    },
    refused: { apiVersion: V, kind: "Challenge", metadata: { name: "alpn" }, spec: { authorizationURL: "u", dnsName: "d", issuerRef: ref, key: "k", token: "t", type: "TLS-ALPN-01", url: "u", solver: {} } },
    message: /The Challenge "alpn" is invalid: spec.type: Unsupported value: "TLS-ALPN-01": supported values: "HTTP-01", "DNS-01"/,
  },
];

describe("kubectl 1.33: a large CRD bundle (six cert-manager-like kinds)", { skip: kubectlSkipReason() ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-e2e-bundle-"));
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    orch = await startOrch("apiserver", ["--api-group-suffix", "k8s.io"], { dataDir: join(dir, "data") });
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the bundle (over 5,000 lines) applies and every definition is established", async () => {
    const yaml = certBundleYaml();
    assert.ok(yaml.split("\n").length > 5000, `${yaml.split("\n").length} lines`);
    const applied = await k.ok("apply", "-f", file("bundle.yaml", yaml));
    for (const r of KINDS) assert.match(applied, new RegExp(`customresourcedefinition.apiextensions.k8s.io/${r.resource}.${CERT_GROUP.replace(/\./g, "\\.")} created`));
    const waited = await k.ok("wait", "--for", "condition=established", "--timeout=20s", "crd", "-l", "app=certs");
    assert.equal(waited.trim().split("\n").length, 6, waited);
  });

  for (const kind of KINDS) {
    test(`${kind.resource}: created (pruned, defaulted), a bad one refused`, async () => {
      let out = { code: 1, stdout: "", stderr: "" };
      // kubectl's discovery may lag a freshly established kind by a moment.
      for (let i = 0; i < 50; i++) {
        out = await k.run(["apply", "--validate=warn", "-f", file(`${kind.resource}.json`, JSON.stringify(kind.valid))]);
        if (out.code === 0 || !/no matches for kind|the server could not find/.test(out.stderr)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(out.code, 0, out.stderr);
      assert.match(out.stdout, / created/);
      assert.match(out.stderr, /unknown field "spec\.(.*\.)?bogus"/, "warned of the pruned field");
      const got = JSON.parse(await k.ok("get", `${kind.resource}.${CERT_GROUP}`, kind.valid.metadata.name, "-o", "json"));
      assert.equal(got.spec.bogus, undefined, "pruned");
      assert.ok(!JSON.stringify(got).includes('"bogus"'), "pruned everywhere");
      kind.defaults(got);
      const refused = await k.run(["apply", "-f", file(`${kind.resource}-bad.json`, JSON.stringify(kind.refused))]);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, kind.message);
    });
  }

  test("listed by kind, all together and by category, with printer columns", async () => {
    for (const kind of KINDS) {
      const list = JSON.parse(await k.ok("get", `${kind.resource}.${CERT_GROUP}`, "-A", "-o", "json"));
      assert.deepEqual(list.items.map((i: any) => i.metadata.name), [kind.valid.metadata.name], kind.resource);
    }
    const certs = await k.ok("get", "certs");
    assert.match(certs, /^NAME\s+READY\s+SECRET\s+AGE\nweb\s+web-tls\s+\d+s\n$/);
    const wide = await k.ok("get", "certificaterequests", "-o", "wide");
    assert.match(wide, /^NAME\s+APPROVED\s+DENIED\s+READY\s+ISSUER\s+REQUESTER\s+STATUS\s+AGE\n/);
    const category = await k.ok("get", "certs-example", "-A");
    for (const kind of KINDS) assert.match(category, new RegExp(`${kind.resource.replace(/s$/, "")}\\.${CERT_GROUP.replace(/\./g, "\\.")}/${kind.valid.metadata.name}`));
  });
});
