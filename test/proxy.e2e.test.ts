// End to end: the proxy subresources on a real `orch server` (embedded
// runtime; busybox is not imported, so its httpd runs on the host's file
// system in the pod's network namespace), with kubectl 1.33's `get --raw`:
// nodes/NAME/proxy/healthz reaches the node agent's port with the API
// server's client certificate; a web server behind a service answers through
// services/NAME:PORT/proxy and pods/NAME:PORT/proxy; an https backend
// (openssl s_server) answers through pods/https:NAME:PORT and
// services/https:NAME:PORTNAME; absolute links in HTML answers come back
// under the proxy path; bad requests get upstream's errors.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../src/component/package-root.js";
import { eventually } from "../src/nodeagent/testing/eventually.js";
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
    await k.ok("create", "deployment", "web", "--image=busybox:1.36", "--replicas=2", "--port=8080", "--", "sh", "-c", "mkdir -p /www/sub && hostname > /www/index.html && echo deep > /www/sub/file.txt && echo '<a href=\"/rewriteme\">test</a>' > /www/links.html && exec busybox httpd -f -p 8080 -h /www");
    await k.ok("rollout", "status", "deployment/web", "--timeout=60s");
    await k.ok("expose", "deployment", "web", "--port=80", "--target-port=8080", "--name=web");
    pods = (await k.ok("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.name}")).trim().split(" ").sort();
    // An https backend: a throwaway self-signed certificate, openssl's web server on 8443 (HTML for .html files).
    const tls = "d=/tmp/orch-proxy-tls-$(hostname) && mkdir -p $d && cd $d && openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=tls -keyout k.pem -out c.pem -days 1 2>/dev/null && echo '<a href=\"/tlsrewriteme\">test</a>' > index.html && echo 'tls baz' > plain.txt && exec openssl s_server -quiet -accept 8443 -cert c.pem -key k.pem -WWW";
    await k.ok("run", "tls", "--image=busybox:1.36", "--labels=app=tls", "--port=8443", "--", "sh", "-c", tls);
    await k.ok("wait", "pod/tls", "--for=condition=Ready", "--timeout=60s");
    const svc = await k.run(["apply", "-f", "-"], { input: "apiVersion: v1\nkind: Service\nmetadata:\n  name: secure\nspec:\n  selector:\n    app: tls\n  ports:\n  - name: tlsportname1\n    port: 443\n    targetPort: 8443\n" });
    assert.equal(svc.code, 0, svc.stderr);
  });
  after(async () => {
    await k?.run(["delete", "pod", "tls", "--wait=false"]);
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

  test("https backends: pods/https:NAME:PORT and services/https:NAME:PORTNAME", async () => {
    // openssl's server takes one connection at a time and may still be starting: the first answer is waited for.
    const answered = (path: string) => eventually(async () => {
      const r = await k.run(["get", "--raw", path]);
      return r.code === 0 ? r.stdout : undefined;
    }, 20_000, `an answer from ${path}`);
    const podPath = "/api/v1/namespaces/default/pods/https:tls:8443/proxy";
    assert.equal((await answered(`${podPath}/plain.txt`)).trim(), "tls baz");
    const svcPath = "/api/v1/namespaces/default/services/https:secure:tlsportname1/proxy";
    assert.equal((await answered(`${svcPath}/plain.txt`)).trim(), "tls baz", "through the service's endpoints");
    // HTML over TLS: the absolute link is put under the proxy path it came through.
    assert.equal((await k.ok("get", "--raw", `${podPath}/index.html`)).trim(), `<a href="${podPath}/tlsrewriteme">test</a>`);
    assert.equal((await k.ok("get", "--raw", `${svcPath}/index.html`)).trim(), `<a href="${svcPath}/tlsrewriteme">test</a>`);
  });

  test("HTML answers over http: absolute links come back under the pod's and the service's proxy paths", async () => {
    const podPath = `/api/v1/namespaces/default/pods/${pods[0]}:8080/proxy`;
    assert.equal((await k.ok("get", "--raw", `${podPath}/links.html`)).trim(), `<a href="${podPath}/rewriteme">test</a>`);
    const svcPath = "/api/v1/namespaces/default/services/http:web:80/proxy";
    assert.equal((await k.ok("get", "--raw", `${svcPath}/links.html`)).trim(), `<a href="${svcPath}/rewriteme">test</a>`);
    // Not HTML: untouched.
    assert.equal((await k.ok("get", "--raw", `${podPath}/sub/file.txt`)).trim(), "deep");
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
