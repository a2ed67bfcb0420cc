// The component server's access policies (the node agent's `authentication`
// and `authorization` settings) against a real in-process API server.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { issueClientCert } from "./pki.js";
import { sampleApi } from "../apiserver/testing/sample-api.js";
import { startTestServer, type TestServer } from "../apiserver/testing/harness.js";
import { loadKubeconfig } from "../client/kubeconfig.js";
import { apiServerCheck } from "../client/api-server-check.js";
import { parseFeatureGates } from "./feature-gates.js";
import { startComponentServer, type RunningComponentServer } from "./component-server.js";
import type { AccessPolicy } from "./scraper-auth.js";
import { httpsGet } from "./testing/https-get.js";

describe("component server access policies", () => {
  let api: TestServer;
  let token: string;
  const servers: RunningComponentServer[] = [];
  const serve = async (access: AccessPolicy) => {
    const c = await startComponentServer({
      name: "orch-access", bindAddress: "127.0.0.1", port: 0, log: () => {}, featureGates: parseFeatureGates({}),
      apiServer: apiServerCheck(loadKubeconfig(api.server.kubeconfigPath)), access,
    });
    servers.push(c);
    return c;
  };
  before(async () => {
    api = await startTestServer({ modules: [sampleApi] });
    token = api.server.credentials.adminToken;
  });
  after(async () => {
    for (const c of servers) await c.close();
    await api?.close();
  });

  test("anonymous with AlwaysAllow lets a caller without credentials in; with Webhook the API server refuses it (403); off, 401", async () => {
    assert.equal((await httpsGet(`${(await serve({ anonymous: true, mode: "AlwaysAllow" })).url}/metrics`)).status, 200);
    const webhook = await httpsGet(`${(await serve({ anonymous: true, mode: "Webhook" })).url}/metrics`);
    assert.deepEqual([webhook.status, webhook.text], [403, "Forbidden: system:anonymous may not GET /metrics\n"]);
    assert.equal((await httpsGet(`${(await serve({ anonymous: false, mode: "AlwaysAllow" })).url}/metrics`)).status, 401);
  });

  test("AlwaysAllow still authenticates tokens; tokens off refuses even the admin's; client certificates of the cluster CA always get in", async () => {
    const always = await serve({ mode: "AlwaysAllow" });
    assert.equal((await httpsGet(`${always.url}/metrics`, { token })).status, 200);
    assert.equal((await httpsGet(`${always.url}/metrics`, { token: "not-a-token" })).status, 401);
    const noTokens = await serve({ tokens: false });
    const refused = await httpsGet(`${noTokens.url}/metrics`, { token });
    assert.equal(refused.status, 401);
    assert.match(refused.text, /bearer tokens are not accepted here \(authentication.webhook.enabled is false\)/);
    const ca = { cert: readFileSync(join(api.dataDir, "ca.crt"), "utf8"), key: readFileSync(join(api.dataDir, "ca.key"), "utf8") };
    assert.equal((await httpsGet(`${noTokens.url}/metrics`, { clientCert: await issueClientCert(ca, "scraper") })).status, 200);
  });
});
