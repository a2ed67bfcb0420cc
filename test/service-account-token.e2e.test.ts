// End to end: service-account tokens on a real `orch server` (embedded
// runtime, as root) with kubectl 1.33. `kubectl create token` with
// --audience, --duration and --bound-object-kind Pod; the ServiceAccount
// admission step giving a pod `default` and the projected token volume; and a
// pod running a Node script with the in-cluster client of src/client, which
// reaches the API with its mounted token: allowed what its RoleBinding grants
// (list configmaps in its namespace), 403 for the rest, and the token is
// bound to the pod.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { decodeJwt } from "jose";
import { spawnSync } from "node:child_process";
import { packageRoot } from "../src/component/index.js";
import { eventually } from "../src/controllers/testing.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-satoken-"));
const NS = "sa-e2e";
const CHAINS = "ORCHSAT";
const CLIENT = fileURLToPath(new URL("../src/client/index.js", import.meta.url));

function skipReason(): string | false {
  if (process.getuid?.() !== 0) return "needs root (pods on the embedded runtime)";
  return kubectlSkipReason() ?? false;
}

/** What the pod runs: the in-cluster client lists configmaps (allowed) and secrets (refused) and reports its files. */
const SCRIPT = `
const { readFileSync } = await import("node:fs");
const { inClusterConfig, RestClient } = await import(${JSON.stringify(CLIENT)});
const config = inClusterConfig();
const client = new RestClient(config);
const dir = "/var/run/secrets/orch.io/serviceaccount";
const out = { namespace: config.namespace, token: readFileSync(dir + "/token", "utf8"), caMatches: readFileSync(dir + "/ca.crt", "utf8").includes("BEGIN CERTIFICATE") };
const ref = (resource) => ({ group: "", version: "v1", resource, namespaced: true });
try { out.configmaps = (await client.list(ref("configmaps"), { namespace: config.namespace })).items.map((i) => i.metadata.name).sort(); } catch (e) { out.configmaps = "error " + (e.code ?? e.message); }
try { await client.list(ref("secrets"), { namespace: config.namespace }); out.secrets = "allowed"; } catch (e) { out.secrets = e.code ?? e.message; out.secretsMessage = e.message; }
try { await client.list(ref("configmaps"), { namespace: "default" }); out.otherNamespace = "allowed"; } catch (e) { out.otherNamespace = e.code ?? e.message; }
client.close();
console.log("RESULT " + JSON.stringify(out));
`;

describe("service-account tokens on orch server", { skip: skipReason() }, () => {
  let orch: OrchProcess;
  let k: Kubectl;

  before(async () => {
    // The proxy programs the kubernetes service's cluster IP, which in-cluster clients reach the API server at.
    orch = await startOrch("server", ["--node-name=satoken-main", `--iptables-chain-prefix=${CHAINS}`, "--iptables-min-sync-period=0"], { readyTimeoutMs: 90_000 });
    k = new Kubectl(orch.kubeconfig);
    await k.ok("create", "namespace", NS);
    await k.ok("create", "serviceaccount", "reader", "-n", NS);
    // kubectl create role/rolebinding post to upstream's group name; the orch.io profile's is rbac.authorization.orch.io.
    writeFileSync(join(files, "rbac.yaml"), [
      "apiVersion: rbac.authorization.orch.io/v1",
      "kind: Role",
      `metadata: {name: cm-reader, namespace: ${NS}}`,
      "rules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [get, list]}]",
      "---",
      "apiVersion: rbac.authorization.orch.io/v1",
      "kind: RoleBinding",
      `metadata: {name: cm-reader, namespace: ${NS}}`,
      "roleRef: {apiGroup: rbac.authorization.orch.io, kind: Role, name: cm-reader}",
      `subjects: [{kind: ServiceAccount, name: reader, namespace: ${NS}}]`,
      "",
    ].join("\n"));
    await k.ok("create", "-f", join(files, "rbac.yaml"));
  });
  after(async () => {
    await orch?.stop();
    spawnSync(process.execPath, [join(packageRoot(), "bin", "orch.js"), "proxy", "--cleanup", `--iptables-chain-prefix=${CHAINS}`]);
    rmSync(files, { recursive: true, force: true, maxRetries: 10 });
  });

  test("kubectl create token: --audience and --duration make the claims", async () => {
    const token = (await k.ok("create", "token", "reader", "-n", NS, "--audience=vault", "--audience=api", "--duration=20m")).trim();
    const claims = decodeJwt(token);
    assert.equal(claims.sub, `system:serviceaccount:${NS}:reader`);
    assert.deepEqual(claims.aud, ["vault", "api"]);
    assert.equal(claims.exp! - claims.iat!, 1200);
    const short = await k.run(["create", "token", "reader", "-n", NS, "--duration=5m"]);
    assert.notEqual(short.code, 0);
    assert.match(short.stderr, /may not specify a duration less than 10 minutes/);
    const missing = await k.run(["create", "token", "nobody", "-n", NS]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /serviceaccounts "nobody" not found/);
  });

  test("a token from kubectl create token authenticates: kubectl auth whoami and RBAC's rights", async () => {
    const token = (await k.ok("create", "token", "reader", "-n", NS)).trim();
    const whoami = await k.ok("auth", "whoami", "--token", token, "-o", "jsonpath={.status.userInfo.username}");
    assert.equal(whoami, `system:serviceaccount:${NS}:reader`);
    assert.equal((await k.run(["get", "configmaps", "-n", NS, "--token", token])).code, 0);
    const denied = await k.run(["get", "secrets", "-n", NS, "--token", token]);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, new RegExp(`User "system:serviceaccount:${NS}:reader" cannot list resource "secrets" in API group "" in the namespace "${NS}"`));
  });

  test("a pod runs as default with the projected volume; a pod naming a missing account is refused", async () => {
    // The namespace's default account comes from the ServiceAccount controller a moment after the namespace; until
    // then a pod is refused as upstream refuses it (the admission step looks the account up).
    await eventually("the default ServiceAccount", async () => (await k.run(["get", "serviceaccount", "default", "-n", NS])).code === 0);
    writeFileSync(join(files, "plain.yaml"), `apiVersion: v1\nkind: Pod\nmetadata: {name: plain, namespace: ${NS}}\nspec:\n  restartPolicy: Never\n  terminationGracePeriodSeconds: 1\n  containers:\n  - {name: c, image: busybox, command: [sh, -c, "true"]}\n`);
    await k.ok("create", "-f", join(files, "plain.yaml"));
    const spec = JSON.parse(await k.ok("get", "pod", "plain", "-n", NS, "-o", "jsonpath={.spec}"));
    assert.equal(spec.serviceAccountName, "default");
    const volume = spec.volumes.find((v: { name: string }) => v.name.startsWith("orch-api-access-"));
    assert.ok(volume, JSON.stringify(spec.volumes));
    assert.deepEqual(spec.containers[0].volumeMounts, [{ name: volume.name, readOnly: true, mountPath: "/var/run/secrets/orch.io/serviceaccount" }]);
    writeFileSync(join(files, "lost.yaml"), `apiVersion: v1\nkind: Pod\nmetadata: {name: lost, namespace: ${NS}}\nspec:\n  serviceAccountName: ghost\n  containers:\n  - {name: c, image: busybox}\n`);
    const lost = await k.run(["create", "-f", join(files, "lost.yaml")]);
    assert.notEqual(lost.code, 0);
    assert.match(lost.stderr, new RegExp(`pods "lost" is forbidden: error looking up service account ${NS}/ghost: serviceaccount "ghost" not found`));
  });

  /** Runs `script` with Node in a pod of the account `reader` (host network) and answers the object it printed after RESULT. */
  async function runScriptPod(name: string, script: string, env: Record<string, string> = {}): Promise<any> {
    const envLines = Object.entries(env).map(([k, v]) => `    - {name: ${k}, value: ${JSON.stringify(v)}}`);
    writeFileSync(join(files, `${name}.yaml`), [
      "apiVersion: v1",
      "kind: Pod",
      `metadata: {name: ${name}, namespace: ${NS}}`,
      "spec:",
      "  serviceAccountName: reader",
      "  restartPolicy: Never",
      "  hostNetwork: true",
      "  terminationGracePeriodSeconds: 1",
      "  containers:",
      "  - name: script",
      "    image: busybox",
      `    command: [${JSON.stringify(process.execPath)}, --input-type=module, -e, ${JSON.stringify(script)}]`,
      ...(envLines.length > 0 ? ["    env:", ...envLines] : []),
      "",
    ].join("\n"));
    await k.ok("create", "-f", join(files, `${name}.yaml`));
    await eventually("the script finished", async () => {
      const phase = (await k.ok("get", "pod", name, "-n", NS, "-o", "jsonpath={.status.phase}")).trim();
      return phase === "Succeeded" || phase === "Failed" ? phase : undefined;
    }, 90_000);
    const logs = await k.ok("logs", name, "-n", NS);
    const line = logs.split("\n").find((l) => l.startsWith("RESULT "));
    assert.ok(line, logs);
    return JSON.parse(line.slice(7));
  }

  test("a pod's Node script reaches the API with its mounted token: its role's rights, 403 for the rest", async () => {
    // The API server's own address, so this test does not depend on the proxy (the next one goes through the service).
    const result = await runScriptPod("in-cluster", SCRIPT, { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: new URL(orch.url).port });
    assert.equal(result.namespace, NS);
    assert.equal(result.caMatches, true);
    assert.ok(result.configmaps.includes("orch-root-ca.crt"), JSON.stringify(result));
    assert.equal(result.secrets, 403, JSON.stringify(result));
    assert.match(result.secretsMessage, new RegExp(`User "system:serviceaccount:${NS}:reader" cannot list resource "secrets"`));
    assert.equal(result.otherNamespace, 403);
    // The mounted token is bound to the pod; asked for 3607 s by the admission step, it is signed for a year with
    // warnafter at 3607 s (--service-account-extend-token-expiration, on by default as upstream's).
    const uid = (await k.ok("get", "pod", "in-cluster", "-n", NS, "-o", "jsonpath={.metadata.uid}")).trim();
    const claims = decodeJwt(result.token);
    const own = claims["orch.io"] as { pod?: unknown; warnafter?: number };
    assert.deepEqual(own.pod, { name: "in-cluster", uid });
    assert.equal(claims.exp! - claims.iat!, 365 * 24 * 3600);
    assert.equal(own.warnafter, claims.iat! + 3607);
  });

  test("without env of its own, a pod finds the API server by the kubernetes service's environment and cluster IP", async () => {
    const script = `
const { inClusterConfig, RestClient } = await import(${JSON.stringify(CLIENT)});
const config = inClusterConfig();
const client = new RestClient(config);
const out = { server: config.server };
try { out.configmaps = (await client.list({ group: "", version: "v1", resource: "configmaps", namespaced: true }, { namespace: config.namespace })).items.length; } catch (e) { out.error = e.code ?? e.message; }
client.close();
console.log("RESULT " + JSON.stringify(out));
`;
    const result = await runScriptPod("by-service", script);
    const ip = (await k.ok("get", "service", "kubernetes", "-n", "default", "-o", "jsonpath={.spec.clusterIP}")).trim();
    assert.equal(result.server, `https://${ip}:443`);
    assert.ok(typeof result.configmaps === "number" && result.configmaps >= 1, JSON.stringify(result));
  });

  test("kubectl create token --bound-object-kind Pod binds to the pod; the token dies with it", async () => {
    const uid = (await k.ok("get", "pod", "in-cluster", "-n", NS, "-o", "jsonpath={.metadata.uid}")).trim();
    const token = (await k.ok("create", "token", "reader", "-n", NS, "--bound-object-kind=Pod", "--bound-object-name=in-cluster", `--bound-object-uid=${uid}`)).trim();
    assert.deepEqual((decodeJwt(token)["orch.io"] as { pod?: unknown }).pod, { name: "in-cluster", uid });
    assert.equal((await k.run(["get", "configmaps", "-n", NS, "--token", token])).code, 0);
    await k.ok("delete", "pod", "in-cluster", "-n", NS, "--wait=true", "--timeout=60s");
    await eventually("the bound token refused", async () => {
      const r = await k.run(["get", "configmaps", "-n", NS, "--token", token]);
      return r.code !== 0 && /Unauthorized|must be logged in/.test(r.stderr);
    }, 20_000);
  });
});
