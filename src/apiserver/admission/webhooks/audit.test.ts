// Webhooks' and policies' audit annotations reach the audit event: a
// webhook's auditAnnotations (NAME/KEY), a failed-open webhook's mark, a
// policy's Audit action and its auditAnnotations.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../../../api/index.js";
import { selfSignedServingCert } from "../../../component/pki.js";
import { startTestServer } from "../../testing/harness.js";
import { createUntil } from "./testing.js";

const GROUP = "admissionregistration.orch.io";
const AUDIT_POLICY = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n  resources: [{group: "", resources: [configmaps]}]\n- level: None\n';
const rules = [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] }];

test("audit annotations from webhooks and policies are on the request's audit event", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-webhook-audit-"));
  const pki = await selfSignedServingCert();
  const hook = createServer({ cert: pki.cert, key: pki.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const { request } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: request.uid, allowed: true, auditAnnotations: { verdict: "fine" } } }));
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
  const port = (hook.address() as AddressInfo).port;
  writeFileSync(join(dir, "policy.yaml"), AUDIT_POLICY);
  const log = join(dir, "audit.log");
  const t = await startTestServer({ modules: builtinModules(), audit: { policyFile: join(dir, "policy.yaml"), logPath: log } });
  try {
    const caBundle = Buffer.from(pki.ca).toString("base64");
    const webhook = (name: string, url: string, failurePolicy: string) => ({ name, clientConfig: { url, caBundle }, rules, sideEffects: "None", admissionReviewVersions: ["v1"], failurePolicy });
    const vwc = await t.request("POST", `/apis/${GROUP}/v1/validatingwebhookconfigurations`, {
      body: { apiVersion: `${GROUP}/v1`, kind: "ValidatingWebhookConfiguration", metadata: { name: "audit" }, webhooks: [webhook("ok.example.com", `https://127.0.0.1:${port}/`, "Fail"), webhook("gone.example.com", "https://127.0.0.1:1/", "Ignore")] },
    });
    assert.equal(vwc.status, 201, vwc.text);
    const vap = await t.request("POST", `/apis/${GROUP}/v1/validatingadmissionpolicies`, {
      body: { apiVersion: `${GROUP}/v1`, kind: "ValidatingAdmissionPolicy", metadata: { name: "named" }, spec: { matchConstraints: { resourceRules: rules }, validations: [{ expression: "object.metadata.name.startsWith('ok-')", message: "names start with ok-" }], auditAnnotations: [{ key: "name", valueExpression: "object.metadata.name" }] } },
    });
    assert.equal(vap.status, 201, vap.text);
    const vapb = await t.request("POST", `/apis/${GROUP}/v1/validatingadmissionpolicybindings`, { body: { apiVersion: `${GROUP}/v1`, kind: "ValidatingAdmissionPolicyBinding", metadata: { name: "named-audit" }, spec: { policyName: "named", validationActions: ["Audit"] } } });
    assert.equal(vapb.status, 201, vapb.text);
    const body = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "audited" } };
    const hasAll = () => {
      const events = readFileSync(log, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
      return events.filter((e) => e.verb === "create" && e.objectRef?.resource === "configmaps").at(-1)?.annotations ?? {};
    };
    const r = await createUntil(t, "/api/v1/namespaces/default/configmaps", body, (x) => x.status === 201 && Object.keys(hasAll()).length >= 4);
    assert.equal(r.status, 201, r.text);
    const annotations = hasAll();
    assert.equal(annotations["ok.example.com/verdict"], "fine");
    assert.equal(annotations["failed-open.validating.webhook.admission.k8s.io/round_0_index_1"], "gone.example.com");
    assert.equal(annotations["named/name"], "audited");
    assert.deepEqual(JSON.parse(annotations["validation.policy.admission.k8s.io/validation_failure"]), [{ message: "names start with ok-", policy: "named", binding: "named-audit", expressionIndex: 0, validationActions: ["Audit"] }]);
  } finally {
    await t.close();
    hook.closeAllConnections();
    hook.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
