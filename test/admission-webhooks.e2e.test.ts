// End to end: the real `orch apiserver` on upstream's names
// (--api-group-suffix=k8s.io) and the real, unmodified kubectl 1.33 applying
// a ValidatingWebhookConfiguration and a MutatingWebhookConfiguration that
// point at HTTPS webhook servers started here: kubectl lists them (NAME
// WEBHOOKS AGE), prints the webhook's denial and warnings, and the mutating
// webhook's patch is stored.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";
import { selfSignedServingCert } from "../src/component/pki.js";

describe("kubectl 1.33: admission webhooks", { skip: kubectlSkipReason() ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-e2e-webhooks-"));
  let orch: OrchProcess;
  let k: Kubectl;
  let hook: Server;
  let port = 0;
  let caBundle = "";
  before(async () => {
    const pki = await selfSignedServingCert();
    caBundle = Buffer.from(pki.ca).toString("base64");
    hook = createServer({ cert: pki.cert, key: pki.key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const { request } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const name: string = request.object.metadata.name;
        const response = req.url!.startsWith("/mutate")
          ? { uid: request.uid, allowed: true, patchType: "JSONPatch", patch: Buffer.from(JSON.stringify([{ op: "add", path: "/data/mutated", value: "yes" }])).toString("base64") }
          : name.startsWith("forbidden")
            ? { uid: request.uid, allowed: false, status: { code: 403, reason: "Forbidden", message: "configmaps named forbidden* are not allowed" } }
            : { uid: request.uid, allowed: true, warnings: [`checked ${name}`] };
        res.setHeader("Content-Type", "application/json");
        res.end(JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response }));
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
    port = (hook.address() as AddressInfo).port;
    orch = await startOrch("apiserver", ["--api-group-suffix", "k8s.io"], { dataDir: join(dir, "data") });
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
    hook?.closeAllConnections();
    hook?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const config = (kind: string, name: string, path: string) => `apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}
metadata: {name: ${name}}
webhooks:
- name: ${name}.example.com
  clientConfig: {url: "https://127.0.0.1:${port}${path}", caBundle: ${caBundle}}
  rules:
  - {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}
  sideEffects: None
  admissionReviewVersions: [v1]
`;

  test("kubectl applies webhook configurations, lists them, and prints the denial, the warnings and the patched object", async () => {
    const applied = await k.run(["apply", "-f", "-"], { input: config("ValidatingWebhookConfiguration", "deny", "/validate") + "---\n" + config("MutatingWebhookConfiguration", "mutate", "/mutate") });
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /validatingwebhookconfiguration\.admissionregistration\.k8s\.io\/deny created/);
    assert.match(applied.stdout, /mutatingwebhookconfiguration\.admissionregistration\.k8s\.io\/mutate created/);
    const listed = await k.ok("get", "validatingwebhookconfigurations");
    assert.match(listed, /^NAME\s+WEBHOOKS\s+AGE\n/);
    assert.match(listed, /^deny\s+1\s+\S+$/m);

    // The plugins read the watch cache: the first request may race the configuration's arrival.
    let refused = await k.run(["create", "configmap", "forbidden-one", "--from-literal=a=b"]);
    for (let i = 0; i < 50 && refused.code === 0; i++) {
      await k.run(["delete", "configmap", "forbidden-one"]);
      await new Promise((r) => setTimeout(r, 50));
      refused = await k.run(["create", "configmap", "forbidden-one", "--from-literal=a=b"]);
    }
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^error: failed to create configmap: admission webhook "deny\.example\.com" denied the request: configmaps named forbidden\* are not allowed$/m);

    const created = await k.run(["create", "configmap", "fine", "--from-literal=a=b"]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stderr, /^Warning: checked fine$/m);
    assert.equal(await k.ok("get", "configmap", "fine", "-o", "jsonpath={.data.mutated}"), "yes");
  });

  test("kubectl applies a ValidatingAdmissionPolicy and its binding and prints the policy's denial", async () => {
    const policy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: small-configmaps}
spec:
  matchConstraints:
    resourceRules:
    - {operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}
  validations:
  - expression: "!has(object.data) || size(object.data) <= 2"
    message: at most two keys
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: small-configmaps-binding}
spec:
  policyName: small-configmaps
  validationActions: [Deny]
`;
    const applied = await k.run(["apply", "-f", "-"], { input: policy });
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /validatingadmissionpolicy\.admissionregistration\.k8s\.io\/small-configmaps created/);
    assert.match(await k.ok("get", "validatingadmissionpolicybindings"), /^small-configmaps-binding\s+small-configmaps\s+<unset>\s+\S+$/m);
    const args = ["create", "configmap", "big", "--from-literal=a=1", "--from-literal=b=2", "--from-literal=c=3"];
    let refused = await k.run(args);
    for (let i = 0; i < 50 && refused.code === 0; i++) {
      await k.run(["delete", "configmap", "big"]);
      await new Promise((r) => setTimeout(r, 50));
      refused = await k.run(args);
    }
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /ValidatingAdmissionPolicy 'small-configmaps' with binding 'small-configmaps-binding' denied request: at most two keys$/m);
  });
});
