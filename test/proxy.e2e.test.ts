// End to end: the proxy subresources on a real `orch server` (embedded
// runtime; busybox is not imported, so its httpd runs on the host's file
// system in the pod's network namespace), with kubectl 1.33's `get --raw`:
// nodes/NAME/proxy/healthz reaches the node agent's port with the API
// server's client certificate; a web server behind a service answers through
// services/NAME:PORT/proxy and pods/NAME:PORT/proxy; bad requests get
// upstream's errors.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../src/component/package-root.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { hostIPv4, startOrch, type OrchProcess } from "./support/orch-process.js";

const PREFIX = `P${process.pid.toString(36).toUpperCase()}`.slice(0, 8);
const rootSkip = process.getuid?.() !== 0 ? "needs root (the embedded runtime's network namespaces)" : undefined;
const NODE = "proxy-e2e";
// The node must advertise an address upstream's proxy accepts (not loopback, which the test servers use by default).
const hostIP = hostIPv4();

describe("kubectl 1.33: nodes, pods and services proxy", { skip: kubectlSkipReason() ?? rootSkip ?? (hostIP === undefined ? "no non-loopback IPv4 address for the node" : false) }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  let pods: string[] = [];
  before(async () => {
    orch = await startOrch("server", [`--node-name=${NODE}`, `--iptables-chain-prefix=${PREFIX}`, `--node-ip=${hostIP}`, `--nodeagent-bind-address=${hostIP}`], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
    await k.ok("create", "deployment", "web", "--image=busybox:1.36", "--replicas=2", "--port=8080", "--", "sh", "-c", "mkdir -p /www/sub && hostname > /www/index.html && echo deep > /www/sub/file.txt && exec busybox httpd -f -p 8080 -h /www");
    await k.ok("rollout", "status", "deployment/web", "--timeout=60s");
    await k.ok("expose", "deployment", "web", "--port=80", "--target-port=8080", "--name=web");
    pods = (await k.ok("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.name}")).trim().split(" ").sort();
  });
  after(async () => {
    await k?.run(["delete", "deployment", "web", "--wait=true"]);
    await orch?.stop();
    spawnSync(process.execPath, [join(packageRoot(), "bin", "orch.js"), "proxy", "--cleanup", `--iptables-chain-prefix=${PREFIX}`]);
  });

  test("kubectl get --raw /api/v1/nodes/NAME/proxy/healthz: the node agent answers", async () => {
    assert.equal((await k.ok("get", "--raw", `/api/v1/nodes/${NODE}/proxy/healthz`)).trim(), "ok");
    // The agent's port named explicitly is the same backend.
    const port = (await k.ok("get", "node", NODE, "-o", "jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}")).trim();
    assert.equal((await k.ok("get", "--raw", `/api/v1/nodes/${NODE}:${port}/proxy/healthz`)).trim(), "ok");
  });

  test("a pod behind a service answers through services/NAME:PORT/proxy, by port number and by the name-less port", async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 30 && seen.size < 2; i++) seen.add((await k.ok("get", "--raw", "/api/v1/namespaces/default/services/web:80/proxy/")).trim());
    assert.deepEqual([...seen].sort(), pods, "both replicas answer through the service's proxy");
    assert.equal((await k.ok("get", "--raw", "/api/v1/namespaces/default/services/web/proxy/sub/file.txt")).trim(), "deep");
  });

  test("pods/NAME/proxy: the pod's first declared port, or the one named", async () => {
    assert.equal((await k.ok("get", "--raw", `/api/v1/namespaces/default/pods/${pods[0]}/proxy/`)).trim(), pods[0]);
    assert.equal((await k.ok("get", "--raw", `/api/v1/namespaces/default/pods/http:${pods[1]}:8080/proxy/sub/file.txt`)).trim(), "deep");
  });

  test("bad names and ports: upstream's errors", async () => {
    const bad = await k.run(["get", "--raw", `/api/v1/nodes/a:b:c:d/proxy/healthz`]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /invalid node request "a:b:c:d"/);
    const port = await k.run(["get", "--raw", "/api/v1/namespaces/default/services/web:81/proxy/"]);
    assert.match(port.stderr, /no service port 81 found for service "web"/);
    const missing = await k.run(["get", "--raw", "/api/v1/namespaces/default/pods/nope/proxy/"]);
    assert.match(missing.stderr, /pods "nope" not found/);
  });
});
