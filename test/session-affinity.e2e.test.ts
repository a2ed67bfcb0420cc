// End to end: `sessionAffinity: ClientIP` on the real `orch server` with its
// proxy, in both data planes (iptables under a chain prefix of this test's
// own, and userspace), with a service range of its own so no other server's
// chains answer for its addresses. Three replicas serve their pod's name;
// kubectl 1.33 applies a NodePort Service with a 3 s affinity timeout. Every
// answer to one client comes from one replica, through the cluster IP and the
// node port from the host, and from a pod (kubectl exec, a wget loop); once
// the timeout has passed between two connections the choice is made again;
// switching affinity off spreads the answers, switching it on again holds.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { packageRoot } from "../src/component/package-root.js";
import { getText as get } from "./support/http-text.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { hostIPv4, startOrch, type OrchProcess } from "./support/orch-process.js";

const rootSkip = process.getuid?.() !== 0 ? "needs root (iptables, the embedded runtime's namespaces)" : undefined;
const TIMEOUT_SECONDS = 3;

const serviceYaml = (affinity: "ClientIP" | "None") => `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: NodePort
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 8080
  sessionAffinity: ${affinity}
${affinity === "ClientIP" ? `  sessionAffinityConfig:\n    clientIP:\n      timeoutSeconds: ${TIMEOUT_SECONDS}\n` : ""}`;

/** `count` answers of host:port, one connection each. */
async function answers(host: string, port: number, count: number, gapMs = 0): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    if (i > 0 && gapMs > 0) await sleep(gapMs);
    out.push(await get(host, port));
  }
  return out;
}

for (const mode of ["iptables", "userspace"] as const) {
  describe(`kubectl 1.33: ClientIP session affinity through the ${mode} proxy`, { skip: kubectlSkipReason() ?? rootSkip ?? false }, () => {
    const prefix = `A${mode[0]!.toUpperCase()}${process.pid.toString(36).toUpperCase()}`.slice(0, 8);
    let orch: OrchProcess;
    let k: Kubectl;
    let ip: string;
    let nodePort: number;
    let pods: string[];
    before(async () => {
      orch = await startOrch("server", [
        "--node-name=affinity",
        `--iptables-chain-prefix=${prefix}`,
        `--proxy-mode=${mode}`,
        "--iptables-min-sync-period=0",
        `--service-cluster-ip-range=10.${mode === "iptables" ? 231 : 232}.0.0/16`,
      ], { readyTimeoutMs: 60_000 });
      k = new Kubectl(orch.kubeconfig);
      await k.ok("create", "deployment", "web", "--image=busybox:1.36", "--replicas=3", "--", "sh", "-c", "mkdir -p /www && hostname > /www/index.html && exec busybox httpd -f -p 8080 -h /www");
      await k.ok("rollout", "status", "deployment/web", "--timeout=90s");
      pods = (await k.ok("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.name}")).trim().split(" ").sort();
      assert.equal(pods.length, 3);
      await k.ok("run", "client", "--image=busybox:1.36", "--restart=Never", "--", "sleep", "600");
      const applied = await k.run(["apply", "-f", "-"], { input: serviceYaml("ClientIP") });
      assert.equal(applied.code, 0, applied.stderr);
      ip = (await k.ok("get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")).trim();
      nodePort = Number((await k.ok("get", "service", "web", "-o", "jsonpath={.spec.ports[0].nodePort}")).trim());
      assert.equal((await k.ok("get", "service", "web", "-o", "jsonpath={.spec.sessionAffinityConfig.clientIP.timeoutSeconds}")).trim(), String(TIMEOUT_SECONDS));
      await eventually(() => get(ip, 80).catch(() => undefined), 30_000, "the service address to answer");
      await k.ok("wait", "pod/client", "--for=condition=Ready", "--timeout=60s");
    });
    after(async () => {
      await k?.run(["delete", "pod", "client", "--wait=false"]);
      await k?.run(["delete", "deployment", "web", "--wait=true"]);
      await orch?.stop();
      if (mode === "iptables") spawnSync(process.execPath, [join(packageRoot(), "bin", "orch.js"), "proxy", "--cleanup", `--iptables-chain-prefix=${prefix}`]);
    });

    test("one client, one replica: through the cluster IP and the node port from the host, and from a pod", async () => {
      const byIP = await answers(ip, 80, 15);
      assert.equal(new Set(byIP).size, 1, `cluster IP: ${byIP}`);
      assert.ok(pods.includes(byIP[0]!), byIP[0]);
      const host = hostIPv4();
      assert.ok(host, "the host has an external IPv4 address");
      const byNodePort = await eventually(() => get(host, nodePort).then(() => answers(host, nodePort, 15), () => undefined), 20_000, "the node port to answer");
      assert.equal(new Set(byNodePort).size, 1, `node port: ${byNodePort}`);
      const loop = await k.ok("exec", "client", "--", "sh", "-c", `for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do busybox wget -q -O - http://${ip}/; done`);
      const fromPod = loop.trim().split("\n");
      assert.equal(fromPod.length, 15, loop);
      assert.equal(new Set(fromPod).size, 1, `from a pod: ${fromPod}`);
    });

    test("after the timeout between two connections, the replica is chosen again", async () => {
      // Each connection comes after the 3 s timeout: eight fresh choices among three replicas.
      const lapsed = await answers(ip, 80, 8, TIMEOUT_SECONDS * 1000 + 700);
      assert.ok(new Set(lapsed).size > 1, `every answer from one replica although the affinity had lapsed: ${lapsed}`);
    });

    test("switching affinity off on the live Service spreads the answers; switching it on again holds them", async () => {
      const off = await k.run(["apply", "-f", "-"], { input: serviceYaml("None") });
      assert.equal(off.code, 0, off.stderr);
      const spread = await eventually(async () => {
        const seen = await answers(ip, 80, 20);
        return new Set(seen).size > 1 ? seen : undefined;
      }, 20_000, "answers from more than one replica with affinity off");
      assert.ok(new Set(spread).size > 1);
      await k.ok("patch", "service", "web", "-p", '{"spec":{"sessionAffinity":"ClientIP"}}');
      assert.equal((await k.ok("get", "service", "web", "-o", "jsonpath={.spec.sessionAffinityConfig.clientIP.timeoutSeconds}")).trim(), "10800", "upstream's default timeout");
      const held = await eventually(async () => {
        const seen = await answers(ip, 80, 15);
        return new Set(seen).size === 1 ? seen : undefined;
      }, 20_000, "one replica answering again with affinity on");
      assert.equal(new Set(held).size, 1);
    });
  });
}
