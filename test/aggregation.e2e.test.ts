// End to end: the aggregation layer driven by the real, unmodified kubectl
// 1.33 against the real `orch apiserver --api-group-suffix=k8s.io`: `kubectl
// get apiservices` lists the local ones as upstream's does; an extension API
// server (src/apiserver/aggregation/testing.ts) registered with an APIService
// over a Service without selector and manual Endpoints at 127.0.0.1 serves
// `kubectl get widgets` (its Table) and `kubectl get widget w1 -o json`,
// receiving the admin in X-Remote-User under the front proxy's certificate
// from the data folder; when it stops, kubectl's request fails and the
// APIService shows False (FailedDiscoveryCheck).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FRONT_PROXY_FILES } from "../src/component/pki.js";
import { extensionServer } from "../src/apiserver/aggregation/testing.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const skip = kubectlSkipReason();
if (skip !== undefined) console.log(`# skipping aggregation e2e: ${skip}`);

describe("aggregation with kubectl 1.33", { skip }, () => {
  let orch: OrchProcess;
  let kubectl: Kubectl;
  before(async () => {
    orch = await startOrch("apiserver", ["--api-group-suffix", "k8s.io"]);
    kubectl = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
  });

  test("kubectl get apiservices lists the local ones", async () => {
    const out = await kubectl.ok("get", "apiservices");
    const lines = out.trim().split("\n");
    assert.match(lines[0]!, /^NAME\s+SERVICE\s+AVAILABLE\s+AGE$/);
    for (const name of ["v1.", "v1.apps", "v1.apiregistration.k8s.io", "v1.rbac.authorization.k8s.io", "v1beta1.metrics.k8s.io"]) {
      assert.ok(lines.some((l) => new RegExp(`^${name.replace(/\./g, "\\.")}\\s+Local\\s+True\\s+`).test(l)), `${name} not listed Local True:\n${out}`);
    }
  });

  test("kubectl get widgets through an extension API server; Available False when it stops", async () => {
    const ext = await extensionServer(readFileSync(join(orch.dataDir, FRONT_PROXY_FILES.caCert), "utf8"));
    try {
      const manifest = [
        { apiVersion: "v1", kind: "Service", metadata: { name: "w", namespace: "default" }, spec: { ports: [{ name: "https", port: 443, targetPort: ext.port }] } },
        { apiVersion: "v1", kind: "Endpoints", metadata: { name: "w", namespace: "default" }, subsets: [{ addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port: ext.port }] }] },
        { apiVersion: "apiregistration.k8s.io/v1", kind: "APIService", metadata: { name: "v1.x.example.com" }, spec: { group: "x.example.com", version: "v1", service: { namespace: "default", name: "w", port: 443 }, caBundle: Buffer.from(ext.ca).toString("base64"), groupPriorityMinimum: 1000, versionPriority: 15 } },
      ];
      const applied = await kubectl.run(["apply", "-f", "-"], { input: manifest.map((o) => JSON.stringify(o)).join("\n---\n") });
      assert.equal(applied.code, 0, applied.stderr);
      await kubectl.ok("wait", "--for=condition=Available", "apiservice/v1.x.example.com", "--timeout=30s");

      const table = await kubectl.ok("get", "widgets");
      assert.match(table, /^NAME\s+COLOR\nw1\s+blue\n$/);
      const one = JSON.parse(await kubectl.ok("get", "widget", "w1", "-o", "json"));
      assert.deepEqual([one.kind, one.color], ["Widget", "blue"]);
      const resources = await kubectl.ok("api-resources", "--api-group", "x.example.com");
      assert.match(resources, /widgets\s+wd\s+x\.example\.com\/v1\s+true\s+Widget/);
      const hit = ext.seen.find((s) => s.path.startsWith("/apis/x.example.com/v1/namespaces/default/widgets/w1"))!;
      assert.equal(hit.headers["x-remote-user"], "admin");
      assert.deepEqual([hit.cn, hit.authorized, hit.headers.authorization], ["front-proxy-client", true, undefined]);

      ext.server.closeAllConnections();
      await new Promise<void>((resolve) => ext.server.close(() => resolve()));
      const failed = await kubectl.run(["get", "widget", "w1"]);
      assert.notEqual(failed.code, 0, failed.stdout);
      let shown = "";
      for (let i = 0; i < 100 && !/False \(FailedDiscoveryCheck\)/.test(shown); i++) {
        shown = await kubectl.ok("get", "apiservice", "v1.x.example.com");
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.match(shown, /v1\.x\.example\.com\s+default\/w\s+False \(FailedDiscoveryCheck\)/);
    } finally {
      ext.server.closeAllConnections();
      ext.server.close();
    }
  });
});
