// CertificateSigningRequests against the real server: the requester's
// identity comes from the authenticated user (not the body), upstream's
// validation messages, the approval and status subresources' rules (what
// each may change), the main resource changing metadata only, and the
// Table columns of `kubectl get csr`.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../index.js";
import { makeCertificateRequest, issueClientCert } from "../../component/pki.js";
import { TokenAuthenticator } from "../../apiserver/filters/index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const CSRS = "/apis/certificates.orch.io/v1/certificatesigningrequests";
const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("certificatesigningrequests", () => {
  let t: TestServer;
  let request: string;
  const csr = (name: string, spec: Record<string, unknown> = {}) => ({
    apiVersion: "certificates.orch.io/v1", kind: "CertificateSigningRequest", metadata: { name },
    spec: { request, signerName: "orch.io/kube-apiserver-client", usages: ["client auth"], ...spec },
  });

  before(async () => {
    t = await startTestServer({
      modules: builtinModules(),
      authorizationModes: ["AlwaysAllow"],
      authenticators: [new TokenAuthenticator(new Map([["alice-token", { name: "alice", uid: "u-1", groups: ["devs", "system:authenticated"], extra: { scopes: ["a", "b"] } }]]))],
    });
    request = b64((await makeCertificateRequest("alice", ["devs"])).csr);
  });
  after(() => t.close());

  test("the requester's name, uid, groups and extra are the authenticated user's, whatever the body says", async () => {
    const r = await t.request("POST", CSRS, { headers: { authorization: "Bearer alice-token" }, body: csr("mine", { username: "mallory", groups: ["system:masters"], uid: "x" }) });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.spec.username, "alice");
    assert.equal(r.json.spec.uid, "u-1");
    assert.deepEqual(r.json.spec.groups, ["devs", "system:authenticated"]);
    assert.deepEqual(r.json.spec.extra, { scopes: ["a", "b"] });
    assert.deepEqual(r.json.status, { conditions: [] });
    const admin = await t.request("POST", CSRS, { body: { ...csr("admins"), status: { certificate: "eA==", conditions: [{ type: "Approved", status: "True" }] } } });
    assert.equal(admin.status, 201, admin.text);
    assert.equal(admin.json.spec.username, "admin");
    assert.deepEqual(admin.json.status, { conditions: [] }, "status is never taken from a create");
  });

  test("validation: upstream's messages", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ request: b64("not pem") }, /spec\.request: Invalid value: .*PEM block type must be CERTIFICATE REQUEST/],
      [{ request: b64("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n") }, /PEM block type must be CERTIFICATE REQUEST/],
      [{ usages: [] }, /spec\.usages: Required value: usages must be provided/],
      [{ usages: ["client auth", "flying"] }, /spec\.usages\[1\]: Unsupported value: "flying": supported values: "any", "cert sign"/],
      [{ usages: ["client auth", "client auth"] }, /spec\.usages\[1\]: Duplicate value: "client auth"/],
      [{ signerName: "" }, /spec\.signerName: Required value: signerName must be provided/],
      [{ signerName: "nodomain" }, /spec\.signerName: Invalid value: "nodomain": must be a fully qualified domain and path of the form 'example.com\/signer-name'/],
      [{ signerName: "example/x" }, /should be a domain with at least two segments separated by dots/],
      [{ signerName: "orch.io/legacy-unknown" }, /the legacy signerName is not allowed via this API version/],
      [{ expirationSeconds: 599 }, /spec\.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds \(10 minutes\)/],
    ];
    for (const [spec, message] of cases) {
      const r = await t.request("POST", CSRS, { body: csr("bad", spec) });
      assert.equal(r.status, 422, `${JSON.stringify(spec)}: ${r.text}`);
      assert.match(r.json.message, message);
    }
    // A request signed by another key than the one it carries fails the signature check.
    const other = (await makeCertificateRequest("bob")).csr;
    const der = Buffer.from(other.replace(/-----[^-]+-----|\s/g, ""), "base64");
    der[der.length - 5] ^= 0xff;
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64")}\n-----END CERTIFICATE REQUEST-----\n`;
    const r = await t.request("POST", CSRS, { body: csr("tampered", { request: b64(tampered) }) });
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.message, /spec\.request: Invalid value/);
  });

  test("approval adds Approved or Denied (stamped), never both; the main resource and /status may not", async () => {
    await t.request("POST", CSRS, { body: csr("approve-me") });
    const viaMain = await t.request("PATCH", `${CSRS}/approve-me`, { headers: { "content-type": "application/merge-patch+json" }, body: { spec: { username: "x" }, status: { conditions: [{ type: "Approved", status: "True" }] }, metadata: { labels: { a: "b" } } } });
    assert.equal(viaMain.status, 200, viaMain.text);
    assert.equal(viaMain.json.spec.username, "admin", "spec does not change through the main resource");
    assert.deepEqual(viaMain.json.status.conditions, [], "nor status");
    assert.equal(viaMain.json.metadata.labels.a, "b");
    const viaStatus = await t.request("PATCH", `${CSRS}/approve-me/status`, { headers: { "content-type": "application/merge-patch+json" }, body: { status: { conditions: [{ type: "Approved", status: "True" }] } } });
    assert.equal(viaStatus.status, 422, viaStatus.text);
    assert.match(viaStatus.json.message, /status\.conditions: Forbidden: updates may not add a condition of type "Approved"/);
    const current = (await t.request("GET", `${CSRS}/approve-me`)).json;
    current.status.conditions = [{ type: "Approved", status: "True", reason: "ByHand", message: "ok" }];
    const approved = await t.request("PUT", `${CSRS}/approve-me/approval`, { body: current });
    assert.equal(approved.status, 200, approved.text);
    const c = approved.json.status.conditions[0];
    assert.equal(c.type, "Approved");
    assert.ok(c.lastUpdateTime && c.lastTransitionTime, "times are stamped");
    approved.json.status.conditions.push({ type: "Denied", status: "True" });
    const both = await t.request("PUT", `${CSRS}/approve-me/approval`, { body: approved.json });
    assert.equal(both.status, 422);
    assert.match(both.json.message, /status\.conditions\[1\]\.type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive/);
    const removed = await t.request("PUT", `${CSRS}/approve-me/approval`, { body: { ...approved.json, status: { conditions: [] } } });
    assert.equal(removed.status, 422);
    assert.match(removed.json.message, /updates may not remove a condition of type "Approved"/);
    const notTrue = await t.request("PUT", `${CSRS}/approve-me/approval`, { body: { ...approved.json, status: { conditions: [{ type: "Approved", status: "False" }] } } });
    assert.equal(notTrue.status, 422, notTrue.text);
    assert.match(notTrue.json.message, /status\.conditions\[0\]\.status: Unsupported value: "False": supported values: "True"/);
  });

  test("status sets the certificate once, keeps the approval as it was, and refuses a non-certificate", async () => {
    await t.request("POST", CSRS, { body: csr("issue-me") });
    const current = (await t.request("GET", `${CSRS}/issue-me`)).json;
    const cert = (await issueClientCert({ cert: readFileSync(join(t.dataDir, "ca.crt"), "utf8"), key: readFileSync(join(t.dataDir, "ca.key"), "utf8") }, "alice")).cert;
    const junk = await t.request("PUT", `${CSRS}/issue-me/status`, { body: { ...current, status: { certificate: b64("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") } } });
    assert.equal(junk.status, 422, junk.text);
    assert.match(junk.json.message, /status\.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"/);
    const viaApproval = await t.request("PUT", `${CSRS}/issue-me/approval`, { body: { ...current, status: { certificate: b64(cert), conditions: [] } } });
    assert.equal(viaApproval.status, 200, viaApproval.text);
    assert.equal(viaApproval.json.status.certificate, undefined, "approval does not move the certificate");
    const issued = await t.request("PUT", `${CSRS}/issue-me/status`, { body: { ...current, status: { certificate: b64(cert), conditions: [{ type: "Failed", status: "True", reason: "X" }] } } });
    assert.equal(issued.status, 200, issued.text);
    assert.equal(Buffer.from(issued.json.status.certificate, "base64").toString(), cert);
    assert.equal(issued.json.status.conditions[0].type, "Failed");
    const again = await t.request("PUT", `${CSRS}/issue-me/status`, { body: { ...issued.json, status: { ...issued.json.status, certificate: b64(cert + cert) } } });
    assert.equal(again.status, 422);
    assert.match(again.json.message, /status\.certificate: Forbidden: updates may not modify existing certificate content/);
  });

  test("kubectl get csr columns: NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION", async () => {
    await t.request("POST", CSRS, { body: csr("table", { expirationSeconds: 3600 }) });
    const r = await t.request("GET", `${CSRS}/table`, { headers: { accept: "application/json;as=Table;v=v1;g=meta.orch.io" } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.columnDefinitions.map((c: { name: string }) => c.name), ["Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"]);
    const [name, , signer, requestor, duration, condition] = r.json.rows[0].cells;
    assert.deepEqual([name, signer, requestor, duration, condition], ["table", "orch.io/kube-apiserver-client", "admin", "60m", "Pending"]);
    const approved = (await t.request("GET", `${CSRS}/approve-me`, { headers: { accept: "application/json;as=Table;v=v1;g=meta.orch.io" } })).json.rows[0].cells;
    assert.equal(approved[5], "Approved");
    const issued = (await t.request("GET", `${CSRS}/issue-me`, { headers: { accept: "application/json;as=Table;v=v1;g=meta.orch.io" } })).json.rows[0].cells;
    assert.equal(issued[4], "<none>");
    assert.equal(issued[5], "Pending,Failed,Issued");
    const list = await t.request("GET", `${CSRS}?fieldSelector=spec.signerName%3Dorch.io%2Fkube-apiserver-client`);
    assert.ok(list.json.items.length >= 3);
  });
});
