// End to end: the real `orch apiserver` with --audit-policy-file and
// --audit-log-path, driven by the real, unmodified kubectl 1.33; the log's
// JSON lines read back. A malformed policy makes the command exit 1 with
// what is wrong.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const BIN = fileURLToPath(new URL("../../bin/orch.js", import.meta.url));
const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    resources: [{group: "", resources: [secrets]}]
  - level: RequestResponse
    resources: [{group: "", resources: [configmaps]}]
  - level: None
`;

describe("kubectl 1.33 against orch apiserver with an audit log", { skip: kubectlSkipReason() ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-e2e-audit-"));
  const log = join(dir, "audit.log");
  let orch: OrchProcess;
  let k: Kubectl;
  const events = () => readFileSync(log, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  before(async () => {
    writeFileSync(join(dir, "policy.yaml"), POLICY);
    orch = await startOrch("apiserver", ["--audit-policy-file", join(dir, "policy.yaml"), "--audit-log-path", log]);
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("configmaps at RequestResponse, secrets at Metadata, everything else not at all", async () => {
    await k.ok("create", "configmap", "audited", "--from-literal=color=blue");
    await k.ok("get", "configmap", "audited", "-o", "json");
    await k.ok("delete", "configmap", "audited");
    await k.ok("create", "secret", "generic", "creds", "--from-literal=password=hunter2-e2e");
    await k.ok("get", "secret", "creds");
    await k.ok("get", "namespaces");
    const all = events();
    assert.ok(all.every((e) => e.stage === "ResponseComplete" && e.apiVersion === "audit.orch.io/v1"), "RequestReceived omitted");
    assert.ok(all.every((e) => e.objectRef?.resource === "configmaps" || e.objectRef?.resource === "secrets"), "level None for the rest");
    const create = all.find((e) => e.verb === "create" && e.objectRef.resource === "configmaps");
    assert.equal(create.level, "RequestResponse");
    assert.equal(create.objectRef.name, "audited");
    assert.equal(create.responseStatus.code, 201);
    assert.equal(create.user.username, "admin");
    assert.match(create.userAgent, /^kubectl/);
    assert.deepEqual(create.requestObject.data, { color: "blue" });
    assert.equal(create.responseObject.data.color, "blue");
    assert.ok(all.some((e) => e.verb === "delete" && e.objectRef.name === "audited" && e.responseStatus.code === 200));
    const secrets = all.filter((e) => e.objectRef.resource === "secrets");
    assert.deepEqual(secrets.map((e) => [e.verb, e.level, e.responseStatus.code]), [["create", "Metadata", 201], ["get", "Metadata", 200]]);
    assert.ok(!readFileSync(log, "utf8").includes(Buffer.from("hunter2-e2e").toString("base64")));
  });

  test("a malformed policy: orch apiserver exits 1 naming what is wrong", async () => {
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n    verbs: get\n");
    const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(process.execPath, [BIN, "apiserver", "--data-dir", join(dir, "bad-data"), "--secure-port", "0", "--audit-policy-file", bad, "--audit-log-path", log], { timeout: 20_000 }, (err, _o, stderr) =>
        resolve({ code: err === null ? 0 : typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : -1, stderr })),
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /audit policy file .*bad\.yaml: rules\[0\]\.verbs: Invalid value: must be a list/);
  });
});
