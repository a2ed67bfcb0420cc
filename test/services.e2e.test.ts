// End to end: Services on the real `orch server` with its proxy (iptables,
// under a chain prefix of this test's own) and node agent (embedded runtime;
// busybox is not imported, so the commands run on the host's file system).
// kubectl 1.33 exposes a two-replica web server; the cluster IP reaches both
// replicas from the host and from a pod, the cluster DNS resolves its name
// (for the host and, through the search path, for a pod), the node port
// answers on the host's address, and a service without endpoints refuses at once. `orch proxy
// --cleanup` removes the chains afterwards.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createSocket } from "node:dgram";
import * as dnsPacket from "dns-packet";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { packageRoot } from "../src/component/package-root.js";
import { getText as get } from "./support/http-text.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const PREFIX = `T${process.pid.toString(36).toUpperCase()}`.slice(0, 8);
const rootSkip = process.getuid?.() !== 0 ? "needs root (iptables, the embedded runtime's namespaces)" : undefined;

/** One A query over UDP: the response code and the answers as [type, data]. */
function dnsQuery(server: string, name: string): Promise<{ rcode: string; answers: [string, unknown][] }> {
  return new Promise((resolve, reject) => {
    const sock = createSocket("udp4");
    const timer = setTimeout(() => { sock.close(); reject(new Error("no DNS answer")); }, 2000);
    sock.on("message", (msg) => {
      clearTimeout(timer);
      sock.close();
      const p = dnsPacket.decode(msg) as dnsPacket.DecodedPacket & { rcode: string };
      resolve({ rcode: p.rcode, answers: (p.answers ?? []).map((a) => [a.type, (a as { data?: unknown }).data]) });
    });
    sock.send(dnsPacket.encode({ type: "query", id: 7, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: "A", name }] }), 53, server);
  });
}

const hostAddress = () => Object.values(networkInterfaces()).flat().find((a) => a?.family === "IPv4" && !a.internal && !a.address.startsWith("10.89."))?.address;

describe("kubectl 1.33: services through the orch proxy", { skip: kubectlSkipReason() ?? rootSkip ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    orch = await startOrch("server", ["--node-name=svc", `--iptables-chain-prefix=${PREFIX}`, "--iptables-min-sync-period=0"], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
    await k.ok("create", "deployment", "web", "--image=busybox:1.36", "--replicas=2", "--", "sh", "-c", "mkdir -p /www && hostname > /www/index.html && exec busybox httpd -f -p 8080 -h /www");
    await k.ok("rollout", "status", "deployment/web", "--timeout=60s");
  });
  after(async () => {
    await k?.run(["delete", "deployment", "web", "--wait=true"]);
    await orch?.stop();
    spawnSync(process.execPath, [join(packageRoot(), "bin", "orch.js"), "proxy", "--cleanup", `--iptables-chain-prefix=${PREFIX}`]);
  });

  test("a ClusterIP service reaches both replicas from the host and from a pod", async () => {
    await k.ok("expose", "deployment", "web", "--port=80", "--target-port=8080");
    const ip = (await k.ok("get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")).trim();
    assert.match(ip, /^10\.(9[6-9]|1[01][0-9])\.\d+\.\d+$/, "an address of --service-cluster-ip-range");
    const pods = (await k.ok("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.name}")).trim().split(" ").sort();
    await eventually(() => get(ip, 80).catch(() => undefined), 20_000, "the service address to answer");
    const seen = new Set<string>();
    for (let i = 0; i < 40 && seen.size < 2; i++) seen.add(await get(ip, 80));
    assert.deepEqual([...seen].sort(), pods, "both replicas answer (the hostname each serves is its pod's name)");

    await k.ok("run", "client", "--image=busybox:1.36", "--restart=Never", "--", "busybox", "wget", "-q", "-O", "-", `http://${ip}/`);
    const phase = await eventually(async () => {
      const p = (await k.ok("get", "pod", "client", "-o", "jsonpath={.status.phase}")).trim();
      return p === "Succeeded" || p === "Failed" ? p : undefined;
    }, 30_000, "the client pod to finish");
    assert.equal(phase, "Succeeded", "wget from inside a pod reached the service");
  });

  test("cluster DNS: a service's name resolves to its cluster IP, for the host and for pods (by the short name too)", async () => {
    const dnsIP = (await k.ok("get", "service", "-n", "orch-system", "orch-dns", "-o", "jsonpath={.spec.clusterIP}")).trim();
    assert.equal(dnsIP, "10.96.0.10", "upstream's kube-dns address for the default range");
    const webIP = (await k.ok("get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")).trim();
    // Until the DNS server's informers have the new service it answers NXDOMAIN: wait for the name itself.
    const found = await eventually(async () => {
      const answer = await dnsQuery(dnsIP, "web.default.svc.cluster.local").catch(() => undefined);
      return answer?.rcode === "NOERROR" ? answer : undefined;
    }, 20_000, "the cluster DNS to answer for the service");
    assert.deepEqual(found.answers, [["A", webIP]]);
    assert.equal((await dnsQuery(dnsIP, "nope.default.svc.cluster.local")).rcode, "NXDOMAIN");

    await k.ok("run", "byname", "--image=busybox:1.36", "--restart=Never", "--", "busybox", "wget", "-q", "-O", "-", "http://web/");
    const phase = await eventually(async () => {
      const p = (await k.ok("get", "pod", "byname", "-o", "jsonpath={.status.phase}")).trim();
      return p === "Succeeded" || p === "Failed" ? p : undefined;
    }, 30_000, "the pod that fetches http://web/ to finish");
    assert.equal(phase, "Succeeded", "the pod resolved `web` through its search path and fetched from it");
  });

  test("a NodePort service answers on the host's address", async () => {
    await k.ok("expose", "deployment", "web", "--name=web-np", "--type=NodePort", "--port=80", "--target-port=8080");
    const nodePort = Number((await k.ok("get", "service", "web-np", "-o", "jsonpath={.spec.ports[0].nodePort}")).trim());
    assert.ok(nodePort >= 30000 && nodePort <= 32767, String(nodePort));
    const host = hostAddress();
    assert.ok(host, "the host has an external IPv4 address");
    const answer = await eventually(() => get(host, nodePort).catch(() => undefined), 20_000, "the node port to answer");
    assert.match(answer, /^web-/);
  });

  test("a service without ready endpoints refuses connections at once", async () => {
    await k.ok("create", "service", "clusterip", "nothing", "--tcp=80:8080");
    const ip = (await k.ok("get", "service", "nothing", "-o", "jsonpath={.spec.clusterIP}")).trim();
    const err = await eventually(async () => {
      const started = Date.now();
      const e = await get(ip, 80).then(() => undefined, (x: NodeJS.ErrnoException) => x);
      return e?.code === "ECONNREFUSED" ? Date.now() - started : undefined;
    }, 20_000, "a refusal");
    assert.ok(err < 1500, `refused in ${err} ms, not left to time out`);
  });
});
