// Signer checks against the real server (--authorization-mode=RBAC): a
// CertificateSigningRequest's approval needs `approve` and its status
// (certificate, conditions) needs `sign` on `signers`, by the request's
// signerName or its domain's wildcard; upstream's 403 messages; a status
// update that changes neither is not checked; system:masters is exempt;
// a rule under upstream's group name counts on the orch.io profile.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { makeCertificateRequest } from "../../component/pki.js";
import type { TestServer } from "../testing/harness.js";
import { AUTHENTICATED, RBAC, RBAC_GROUP, rbacTestServer, type RbacTestServer } from "./testing.js";

const CERTS = "certificates.orch.io";
const CSRS = `/apis/${CERTS}/v1/certificatesigningrequests`;
const users = ["approver", "domain-approver", "upstream-approver", "plain", "signer"];

describe("CSR signer checks (approve and sign on signers)", () => {
  let t: TestServer;
  let s: RbacTestServer;

  const role = (name: string, rules: object[]) => s.create(`${RBAC}/clusterroles`, { apiVersion: `${RBAC_GROUP}/v1`, kind: "ClusterRole", metadata: { name }, rules });
  const bind = (user: string, roleName: string) => s.create(`${RBAC}/clusterrolebindings`, {
    apiVersion: `${RBAC_GROUP}/v1`, kind: "ClusterRoleBinding", metadata: { name: user }, subjects: [{ kind: "User", name: user }], roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: roleName },
  });
  const csr = async (name: string, signerName = "example.com/foo") => {
    const request = Buffer.from((await makeCertificateRequest(name, [])).csr).toString("base64");
    await s.create(CSRS, { apiVersion: `${CERTS}/v1`, kind: "CertificateSigningRequest", metadata: { name }, spec: { request, signerName, usages: ["client auth"] } });
    return (await t.request("GET", `${CSRS}/${name}`)).json;
  };
  const approve = (who: string, obj: { metadata: object }) => s.as(who, "PUT", `${CSRS}/${(obj.metadata as { name: string }).name}/approval`, {
    ...obj, status: { conditions: [{ type: "Approved", status: "True", reason: "Test", message: "approved" }] },
  });

  before(async () => {
    s = await rbacTestServer(Object.fromEntries(users.map((u) => [u, { name: u, groups: [AUTHENTICATED] }])));
    t = s.t;
    const csrRights = { apiGroups: [CERTS], resources: ["certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status"], verbs: ["get", "update"] };
    await role("approve-foo", [csrRights, { apiGroups: [CERTS], resources: ["signers"], verbs: ["approve"], resourceNames: ["example.com/foo"] }]);
    await role("approve-domain", [csrRights, { apiGroups: [CERTS], resources: ["signers"], verbs: ["approve"], resourceNames: ["example.com/*"] }]);
    await role("approve-upstream", [csrRights, { apiGroups: ["certificates.k8s.io"], resources: ["signers"], verbs: ["approve"] }]);
    await role("csr-only", [csrRights]);
    await role("sign-foo", [csrRights, { apiGroups: [CERTS], resources: ["signers"], verbs: ["sign"], resourceNames: ["example.com/foo"] }]);
    await bind("approver", "approve-foo");
    await bind("domain-approver", "approve-domain");
    await bind("upstream-approver", "approve-upstream");
    await bind("plain", "csr-only");
    await bind("signer", "sign-foo");
    await s.cached("clusterrolebindings", users.length);
  });
  after(() => t?.close());

  test("approval: approve on the signer's name, its domain's wildcard or under upstream's group name is allowed", async () => {
    for (const who of ["approver", "domain-approver", "upstream-approver"]) {
      const r = await approve(who, await csr(`ok-${who}`));
      assert.equal(r.status, 200, `${who}: ${r.text}`);
      assert.deepEqual(r.json.status.conditions.map((c: { type: string }) => c.type), ["Approved"]);
    }
  });

  test("approval without approve on the signer is 403 with upstream's message", async () => {
    const obj = await csr("denied");
    const r = await approve("plain", obj);
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json.message, `certificatesigningrequests.${CERTS} "denied" is forbidden: user not permitted to approve requests with signerName "example.com/foo"`);
    // approve for example.com/foo does not reach another signer of another domain.
    const other = await csr("other-signer", "other.example/bar");
    const r2 = await approve("approver", other);
    assert.equal(r2.status, 403, r2.text);
    assert.match(r2.json.message, /user not permitted to approve requests with signerName "other.example\/bar"/);
    // Dry run needs the same rights.
    const dry = await s.as("plain", "PUT", `${CSRS}/denied/approval?dryRun=All`, { ...obj, status: { conditions: [{ type: "Approved", status: "True" }] } });
    assert.equal(dry.status, 403, dry.text);
    // The stored request is unchanged.
    assert.deepEqual((await t.request("GET", `${CSRS}/denied`)).json.status?.conditions ?? [], []);
  });

  test("status: a new certificate or condition needs sign; an unchanged status is not checked", async () => {
    const obj = await csr("to-sign");
    const failed = { ...obj, status: { conditions: [{ type: "Failed", status: "True", reason: "Test", message: "no" }] } };
    const denied = await s.as("plain", "PUT", `${CSRS}/to-sign/status`, failed);
    assert.equal(denied.status, 403, denied.text);
    assert.equal(denied.json.message, `certificatesigningrequests.${CERTS} "to-sign" is forbidden: user not permitted to sign requests with signerName "example.com/foo"`);
    const unchanged = await s.as("plain", "PUT", `${CSRS}/to-sign/status`, obj);
    assert.equal(unchanged.status, 200, unchanged.text);
    const allowed = await s.as("signer", "PUT", `${CSRS}/to-sign/status`, failed);
    assert.equal(allowed.status, 200, allowed.text);
    assert.deepEqual(allowed.json.status.conditions.map((c: { type: string }) => c.type), ["Failed"]);
    // sign is not approve.
    const noApprove = await approve("signer", await csr("sign-not-approve"));
    assert.equal(noApprove.status, 403, noApprove.text);
  });

  test("system:masters approves any signer", async () => {
    const obj = await csr("by-admin", "anything.example/x");
    const r = await t.request("PUT", `${CSRS}/by-admin/approval`, { body: { ...obj, status: { conditions: [{ type: "Approved", status: "True" }] } } });
    assert.equal(r.status, 200, r.text);
  });
});
