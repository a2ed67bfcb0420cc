// Kubeconfig parsing: the server's own admin.kubeconfig, contexts, inline
// data versus file paths, and errors that say what is wrong.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadKubeconfig, parseKubeconfig } from "./kubeconfig.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");

test("the API server's kubeconfig shape: server, CA data and a bearer token", () => {
  const config = parseKubeconfig(
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: orch",
      "  cluster:",
      "    server: https://127.0.0.1:6443/",
      `    certificate-authority-data: ${b64("CA PEM")}`,
      "users:",
      "- name: admin",
      "  user:",
      "    token: secret",
      "contexts:",
      "- name: orch",
      "  context:",
      "    cluster: orch",
      "    user: admin",
      "current-context: orch",
    ].join("\n"),
  );
  assert.deepEqual(config, { server: "https://127.0.0.1:6443", ca: "CA PEM", token: "secret" });
});

test("contexts, client certificates, files relative to the kubeconfig, insecure-skip-tls-verify", () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-kubeconfig-"));
  try {
    writeFileSync(join(dir, "client.crt"), "CERT");
    writeFileSync(join(dir, "client.key"), "KEY");
    writeFileSync(join(dir, "token"), "from-file\n");
    const path = join(dir, "config");
    writeFileSync(
      path,
      `
clusters:
- name: a
  cluster: { server: "https://a:6443", insecure-skip-tls-verify: true, tls-server-name: api.local }
- name: b
  cluster: { server: "https://b:6443", certificate-authority-data: ${b64("B CA")} }
users:
- name: certs
  user: { client-certificate: client.crt, client-key: client.key }
- name: inline
  user: { client-certificate-data: ${b64("C2")}, client-key-data: ${b64("K2")} }
- name: tokenfile
  user: { tokenFile: token }
contexts:
- name: one
  context: { cluster: a, user: certs }
- name: two
  context: { cluster: b, user: inline }
- name: three
  context: { cluster: b, user: tokenfile }
current-context: one
`,
    );
    assert.deepEqual(loadKubeconfig(path), { server: "https://a:6443", insecureSkipTlsVerify: true, tlsServerName: "api.local", cert: "CERT", key: "KEY" });
    assert.deepEqual(loadKubeconfig(path, { context: "two" }), { server: "https://b:6443", ca: "B CA", cert: "C2", key: "K2" });
    assert.equal(loadKubeconfig(path, { context: "three" }).token, "from-file");
    assert.throws(() => loadKubeconfig(path, { context: "nope" }), /config: context "nope" not found/);
    assert.throws(() => loadKubeconfig(join(dir, "missing")), /cannot read kubeconfig .*missing/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("what is missing or unsupported is named", () => {
  assert.throws(() => parseKubeconfig("clusters: []"), /no current-context/);
  assert.throws(() => parseKubeconfig("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: {}"), /cluster "c" has no server/);
  assert.throws(
    () => parseKubeconfig("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: 'https://h'}\nusers:\n- name: u\n  user: {exec: {command: aws}}"),
    /exec plugins and auth providers are not supported/,
  );
  assert.throws(() => parseKubeconfig(": : :\n  - ["), /not valid YAML/);
});
