// Authentication end to end with the real kubectl 1.33 against a real `orch
// apiserver`: `kubectl auth whoami` as the admin, through --as impersonation,
// with a client-certificate kubeconfig and a --token-auth-file token; and a
// malformed token file stopping the start.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { issueClientCert } from "../src/component/pki.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const skip = kubectlSkipReason();

describe("authentication with kubectl 1.33", { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-auth-e2e-"));
  let orch: OrchProcess;
  let admin: Kubectl;
  before(async () => {
    writeFileSync(join(dir, "tokens.csv"), 'tok-bob,bob,uid-42,"team-a,team-b"\n');
    orch = await startOrch("apiserver", [`--token-auth-file=${join(dir, "tokens.csv")}`]);
    admin = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
  });

  const whoami = async (k: Kubectl, ...args: string[]) => JSON.parse(await k.ok("auth", "whoami", "-o", "json", ...args)).status.userInfo;

  test("kubectl auth whoami shows the admin", async () => {
    assert.deepEqual(await whoami(admin), { username: "admin", groups: ["system:masters", "system:authenticated"] });
    const table = await admin.ok("auth", "whoami");
    assert.match(table, /Username\s+admin/);
    assert.match(table, /Groups\s+\[system:masters system:authenticated\]/);
  });

  test("--as and --as-group: whoami shows the impersonated user", async () => {
    assert.deepEqual(await whoami(admin, "--as", "alice"), { username: "alice", groups: ["system:authenticated"] });
    assert.deepEqual(await whoami(admin, "--as", "alice", "--as-group", "team-x", "--as-uid", "u-1"), { username: "alice", uid: "u-1", groups: ["team-x", "system:authenticated"] });
    const r = await admin.run(["auth", "whoami", "--as-group", "team-x"]);
    assert.notEqual(r.code, 0);
  });

  test("a client-certificate kubeconfig (CN=alice, O=system:masters) gets through; a foreign one is refused", async () => {
    const ca = { cert: readFileSync(join(orch.dataDir, "ca.crt"), "utf8"), key: readFileSync(join(orch.dataDir, "ca.key"), "utf8") };
    const cert = await issueClientCert(ca, "alice", ["system:masters"]);
    const kubeconfig = join(dir, "alice.kubeconfig");
    writeFileSync(kubeconfig, certKubeconfig(orch.url, ca.cert, cert));
    const alice = new Kubectl(kubeconfig);
    assert.deepEqual(await whoami(alice), { username: "alice", groups: ["system:masters", "system:authenticated"] });
    assert.match(await alice.ok("get", "namespaces"), /default/);

    const otherCa = await (await import("../src/component/pki.js")).ensureCredentials(join(dir, "other"));
    const foreign = await issueClientCert({ cert: otherCa.caCertPem, key: readFileSync(join(dir, "other", "ca.key"), "utf8") }, "alice", ["system:masters"]);
    writeFileSync(join(dir, "foreign.kubeconfig"), certKubeconfig(orch.url, ca.cert, foreign));
    const r = await new Kubectl(join(dir, "foreign.kubeconfig")).run(["get", "namespaces"]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Unauthorized|must be logged in/);
  });

  test("a --token-auth-file token: whoami shows its user, uid and groups", async () => {
    assert.deepEqual(await whoami(admin, "--token", "tok-bob"), { username: "bob", uid: "uid-42", groups: ["team-a", "team-b", "system:authenticated"] });
  });
});

describe("a malformed --token-auth-file", { skip }, () => {
  test("stops the start with a message naming the line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orch-auth-e2e-bad-"));
    writeFileSync(join(dir, "tokens.csv"), "ok,alice,1\nbroken,line\n");
    await assert.rejects(startOrch("apiserver", [`--token-auth-file=${join(dir, "tokens.csv")}`]), /tokens\.csv', line 2: must have at least 3 columns/);
  });
});

function certKubeconfig(server: string, caPem: string, cert: { cert: string; key: string }): string {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return [
    "apiVersion: v1", "kind: Config",
    "clusters:", "- name: orch", "  cluster:", `    server: ${server}`, `    certificate-authority-data: ${b64(caPem)}`,
    "users:", "- name: alice", "  user:", `    client-certificate-data: ${b64(cert.cert)}`, `    client-key-data: ${b64(cert.key)}`,
    "contexts:", "- name: orch", "  context:", "    cluster: orch", "    user: alice",
    "current-context: orch", "",
  ].join("\n");
}
