// The in-cluster configuration against a real API server: the service
// environment and the projected files make a working client, which follows
// the token file when the node agent replaces it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../api/index.js";
import { startTestServer, type TestServer } from "../apiserver/testing/harness.js";
import { inClusterConfig, NOT_IN_CLUSTER, tokenSource } from "./in-cluster.js";
import { RestClient } from "./rest.js";

const SELF_SUBJECT_REVIEWS = { group: "authentication.k8s.io", version: "v1", resource: "selfsubjectreviews", namespaced: false };

describe("in-cluster configuration", () => {
  let t: TestServer;
  let secrets: string;
  let dir: string;
  const tokenOf = async (account: string) => {
    const r = await t.request("POST", `/api/v1/namespaces/team/serviceaccounts/${account}/token`, { body: { spec: {} } });
    assert.equal(r.status, 201, r.text);
    return r.json.status.token as string;
  };
  const writeToken = (token: string) => {
    writeFileSync(join(dir, ".token.new"), token);
    renameSync(join(dir, ".token.new"), join(dir, "token"));
  };
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    for (const body of [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "team" } }]) assert.equal((await t.request("POST", "/api/v1/namespaces", { body })).status, 201);
    for (const name of ["first", "second"]) assert.equal((await t.request("POST", "/api/v1/namespaces/team/serviceaccounts", { body: { metadata: { name } } })).status, 201);
    secrets = mkdtempSync(join(tmpdir(), "orch-in-cluster-"));
    dir = join(secrets, "orch.io", "serviceaccount");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "ca.crt"), t.server.credentials.caCertPem);
    writeFileSync(join(dir, "namespace"), "team");
  });
  after(() => t.close());

  test("outside a pod: upstream's error", () => {
    assert.throws(() => inClusterConfig({ env: {}, secretsDir: secrets }), { message: NOT_IN_CLUSTER });
  });

  test("in a pod: the service address, CA, namespace and token; a replaced token file is used from then on", async () => {
    writeToken(await tokenOf("first"));
    const config = inClusterConfig({ env: { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: String(t.server.port) }, secretsDir: secrets });
    assert.equal(config.server, `https://127.0.0.1:${t.server.port}`);
    assert.equal(config.namespace, "team");
    assert.equal(config.tokenFile, join(dir, "token"));
    const client = new RestClient(config);
    try {
      const who = async () => ((await client.create(SELF_SUBJECT_REVIEWS, { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview", metadata: {} })) as any).status.userInfo.username;
      assert.equal(await who(), "system:serviceaccount:team:first");
      writeToken(await tokenOf("second"));
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal(await who(), "system:serviceaccount:team:second");
    } finally {
      client.close();
    }
  });

  test("tokenSource: checks the file at most once a second and keeps the last token while the file is missing", () => {
    let now = 0;
    const file = join(secrets, "lone-token");
    writeFileSync(file, "a\n");
    const source = tokenSource({ token: "a", tokenFile: file }, () => now);
    assert.equal(source(), "a");
    writeFileSync(join(secrets, "next"), "b");
    renameSync(join(secrets, "next"), file);
    now = 500;
    assert.equal(source(), "a");
    now = 1500;
    assert.equal(source(), "b");
    renameSync(file, join(secrets, "gone"));
    now = 3000;
    assert.equal(source(), "b");
    assert.equal(tokenSource({ token: "fixed" })(), "fixed");
  });
});
