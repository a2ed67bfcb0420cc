// The component server's access policies (the node agent's `authentication`
// and `authorization` settings) and its delegated authentication and
// authorization (TokenReview, SubjectAccessReview) against a real in-process
// API server with RBAC: component paths are asked as non-resource URLs, the
// node agent's as nodes/<subresource> of its node.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { issueClientCert } from "./pki.js";
import { builtinModules } from "../api/index.js";
import { startTestServer, type TestServer } from "../apiserver/testing/harness.js";
import { loadKubeconfig } from "../client/kubeconfig.js";
import { apiServerCheck } from "../client/api-server-check.js";
import { parseFeatureGates } from "./feature-gates.js";
import { startComponentServer, type RunningComponentServer } from "./component-server.js";
import { nodeAgentAttributes, type AccessPolicy } from "./scraper-auth.js";
import { httpsGet } from "./testing/https-get.js";

/** An HTTP/1.1 Upgrade request (as the API server opens exec streams): 101 when let through, else the refusal. */
function upgradeRequest(url: string, method: string, auth: { clientCert?: { cert: string; key: string }; token?: string }): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, {
      method, rejectUnauthorized: false, agent: false, ...(auth.clientCert ?? {}),
      headers: { connection: "Upgrade", upgrade: "SPDY/3.1", ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}) },
    });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, text: "" });
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString("utf8")));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("component server access: policies and delegated authorization", () => {
  let api: TestServer;
  let token: string;
  let ca: { cert: string; key: string };
  const servers: RunningComponentServer[] = [];
  const serve = async (access: AccessPolicy, more: Partial<Parameters<typeof startComponentServer>[0]> = {}) => {
    const c = await startComponentServer({
      name: "orch-access", bindAddress: "127.0.0.1", port: 0, log: () => {}, featureGates: parseFeatureGates({}),
      apiServer: apiServerCheck(loadKubeconfig(api.server.kubeconfigPath)), access, ...more,
    });
    servers.push(c);
    return c;
  };
  const bind = async (name: string, role: string, subject: object) => {
    const r = await api.request("POST", "/apis/rbac.authorization.orch.io/v1/clusterrolebindings", {
      body: { apiVersion: "rbac.authorization.orch.io/v1", kind: "ClusterRoleBinding", metadata: { name }, roleRef: { apiGroup: "rbac.authorization.orch.io", kind: "ClusterRole", name: role }, subjects: [subject] },
    });
    assert.equal(r.status, 201, r.text);
  };
  const role = async (name: string, rules: object[]) => {
    const r = await api.request("POST", "/apis/rbac.authorization.orch.io/v1/clusterroles", { body: { apiVersion: "rbac.authorization.orch.io/v1", kind: "ClusterRole", metadata: { name }, rules } });
    assert.equal(r.status, 201, r.text);
  };
  before(async () => {
    api = await startTestServer({ modules: builtinModules() });
    token = api.server.credentials.adminToken;
    ca = { cert: readFileSync(join(api.dataDir, "ca.crt"), "utf8"), key: readFileSync(join(api.dataDir, "ca.key"), "utf8") };
  });
  after(async () => {
    for (const c of servers) await c.close();
    await api?.close();
  });

  test("anonymous with AlwaysAllow lets a caller without credentials in; with Webhook RBAC refuses it (403, upstream's text); off, 401", async () => {
    assert.equal((await httpsGet(`${(await serve({ anonymous: true, mode: "AlwaysAllow" })).url}/metrics`)).status, 200);
    const webhook = await httpsGet(`${(await serve({ anonymous: true, mode: "Webhook" })).url}/metrics`);
    assert.deepEqual([webhook.status, webhook.text], [403, 'forbidden: User "system:anonymous" cannot get path "/metrics"\n']);
    assert.equal((await httpsGet(`${(await serve({ anonymous: false, mode: "AlwaysAllow" })).url}/metrics`)).status, 401);
  });

  test("AlwaysAllow still authenticates tokens (TokenReview); tokens off refuses even the admin's; AlwaysAllow admits any certificate of the cluster CA", async () => {
    const always = await serve({ mode: "AlwaysAllow" });
    assert.equal((await httpsGet(`${always.url}/metrics`, { token })).status, 200);
    assert.equal((await httpsGet(`${always.url}/metrics`, { token: "not-a-token" })).status, 401);
    assert.equal((await httpsGet(`${always.url}/metrics`, { clientCert: await issueClientCert(ca, "nobody") })).status, 200);
    const noTokens = await serve({ tokens: false });
    const refused = await httpsGet(`${noTokens.url}/metrics`, { token });
    assert.equal(refused.status, 401);
    assert.match(refused.text, /bearer tokens are not accepted here \(authentication.webhook.enabled is false\)/);
  });

  test("component /metrics with Webhook: a certificate user without RBAC gets 403, group system:monitoring and a binding to system:monitoring get in; /statusz stays refused", async () => {
    const c = await serve({ allowedTtlMs: 0, deniedTtlMs: 0 });
    const mallory = await issueClientCert(ca, "mallory");
    const denied = await httpsGet(`${c.url}/metrics`, { clientCert: mallory });
    assert.deepEqual([denied.status, denied.text], [403, 'forbidden: User "mallory" cannot get path "/metrics"\n']);
    assert.equal((await httpsGet(`${c.url}/metrics`, { clientCert: await issueClientCert(ca, "prometheus", ["system:monitoring"]) })).status, 200, "upstream's system:monitoring group");
    await bind("mallory-monitoring", "system:monitoring", { kind: "User", apiGroup: "rbac.authorization.orch.io", name: "mallory" });
    assert.equal((await httpsGet(`${c.url}/metrics`, { clientCert: mallory })).status, 200);
    assert.equal((await httpsGet(`${c.url}/statusz`, { clientCert: mallory })).status, 403, "system:monitoring covers /metrics and health only");
    assert.equal((await httpsGet(`${c.url}/statusz`, { token })).status, 200, "the admin (system:masters)");
  });

  test("node agent paths map to nodes/<subresource> as upstream's kubelet: stats, metrics, logs→log, everything else proxy; verb from the method", () => {
    const sub = (path: string) => nodeAgentAttributes("n1", "GET", path).subresource;
    assert.deepEqual(["/stats", "/stats/summary", "/metrics", "/metrics/cadvisor", "/logs/", "/logs/x.log", "/exec/ns/p/c", "/containerLogs/ns/p/c", "/pods", "/runningpods/", "/metricsz", "/statsx"].map(sub),
      ["stats", "stats", "metrics", "metrics", "log", "log", "proxy", "proxy", "proxy", "proxy", "proxy", "proxy"]);
    assert.deepEqual(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].map((m) => nodeAgentAttributes("n1", m, "/exec").verb), ["get", "get", "create", "update", "patch", "delete"]);
    assert.deepEqual(nodeAgentAttributes("n1", "POST", "/exec/a/b/c"), { verb: "create", group: "", version: "v1", resource: "nodes", subresource: "proxy", name: "n1" });
  });

  test("node agent port: eve (certificate, then a token user) gets upstream's 403 on /exec, /containerLogs and /metrics until bound to nodes/proxy, nodes/log... ; the API server's node-agent client certificate gets in", async () => {
    const agent = await serve({ nodeName: () => "node-1", allowedTtlMs: 0, deniedTtlMs: 0, tokenTtlMs: 0 }, {
      extra: { "/containerLogs/": (_req, res) => void res.end("log line\n") },
      upgrades: {
        "/exec/": (_req, socket) => void socket.end("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n"),
      },
    });
    const eve = await issueClientCert(ca, "eve");
    const exec = () => upgradeRequest(`${agent.url}/exec/default/p/c?command=true`, "POST", { clientCert: eve });
    const logs = () => httpsGet(`${agent.url}/containerLogs/default/p/c`, { clientCert: eve });
    const metrics = () => httpsGet(`${agent.url}/metrics`, { clientCert: eve });
    assert.deepEqual(await exec(), { status: 403, text: "Forbidden (user=eve, verb=create, resource=nodes, subresource=proxy)\n" });
    assert.deepEqual([(await logs()).status, (await logs()).text], [403, "Forbidden (user=eve, verb=get, resource=nodes, subresource=proxy)\n"]);
    assert.deepEqual([(await metrics()).status, (await metrics()).text], [403, "Forbidden (user=eve, verb=get, resource=nodes, subresource=metrics)\n"]);

    await role("node-proxy", [{ verbs: ["create", "get"], apiGroups: [""], resources: ["nodes/proxy"], resourceNames: ["node-1"] }]);
    await bind("eve-proxy", "node-proxy", { kind: "User", apiGroup: "rbac.authorization.orch.io", name: "eve" });
    assert.equal((await exec()).status, 101);
    assert.deepEqual([(await logs()).status, (await logs()).text], [200, "log line\n"]);
    assert.equal((await metrics()).status, 403, "nodes/proxy does not cover nodes/metrics");
    await role("node-metrics", [{ verbs: ["get"], apiGroups: [""], resources: ["nodes/metrics"] }]);
    await bind("eve-metrics", "node-metrics", { kind: "User", apiGroup: "rbac.authorization.orch.io", name: "eve" });
    assert.equal((await metrics()).status, 200);

    // A token user (a service account's token, judged by TokenReview).
    const NS = "/api/v1/namespaces/default";
    assert.equal((await api.request("POST", `${NS}/serviceaccounts`, { body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "robot" } } })).status, 201);
    const tr = await api.request("POST", `${NS}/serviceaccounts/robot/token`, { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} } });
    assert.equal(tr.status, 201, tr.text);
    const robot = tr.json.status.token as string;
    const robotLogs = await httpsGet(`${agent.url}/containerLogs/default/p/c`, { token: robot });
    assert.deepEqual([robotLogs.status, robotLogs.text], [403, "Forbidden (user=system:serviceaccount:default:robot, verb=get, resource=nodes, subresource=proxy)\n"]);
    assert.equal((await upgradeRequest(`${agent.url}/exec/default/p/c`, "POST", { token: robot })).status, 403);
    await bind("robot-proxy", "node-proxy", { kind: "ServiceAccount", namespace: "default", name: "robot" });
    assert.equal((await httpsGet(`${agent.url}/containerLogs/default/p/c`, { token: robot })).status, 200);
    assert.deepEqual(await upgradeRequest(`${agent.url}/exec/default/p/c`, "POST", { token: robot }), { status: 101, text: "" });
    assert.equal((await httpsGet(`${agent.url}/containerLogs/default/p/c`, { token: "not-a-token" })).status, 401);

    // The API server's own client certificate towards agents, by its user alone (bootstrap binding to system:kubelet-api-admin).
    const apiserver = await issueClientCert(ca, "orch-apiserver-nodeagent-client");
    assert.equal((await upgradeRequest(`${agent.url}/exec/default/p/c`, "POST", { clientCert: apiserver })).status, 101);
    assert.equal((await httpsGet(`${agent.url}/metrics`, { clientCert: apiserver })).status, 200);
  });

  test("decisions are cached for the configured TTL: a refusal stays until deniedTtlMs passes", async () => {
    const agent = await serve({ nodeName: () => "node-2", allowedTtlMs: 60_000, deniedTtlMs: 1_500 });
    const zed = await issueClientCert(ca, "zed");
    assert.equal((await httpsGet(`${agent.url}/metrics`, { clientCert: zed })).status, 403);
    await bind("zed-metrics", "system:kubelet-api-admin", { kind: "User", apiGroup: "rbac.authorization.orch.io", name: "zed" });
    assert.equal((await httpsGet(`${agent.url}/metrics`, { clientCert: zed })).status, 403, "the cached refusal");
    await new Promise((r) => setTimeout(r, 1_600));
    assert.equal((await httpsGet(`${agent.url}/metrics`, { clientCert: zed })).status, 200);
    await api.request("DELETE", "/apis/rbac.authorization.orch.io/v1/clusterrolebindings/zed-metrics");
    assert.equal((await httpsGet(`${agent.url}/metrics`, { clientCert: zed })).status, 200, "the cached allowance");
  });
});
