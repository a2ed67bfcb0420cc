// End to end: pods' resolv.conf and the cluster DNS on the real `orch server`
// (proxy under a chain prefix and a service range of this test's own, node
// agent with the embedded runtime; busybox is not imported, so the commands run
// on the host's file system with the pod's /etc files mounted), driven by the
// real kubectl 1.33. Each dnsPolicy's resolv.conf as the pod sees it
// (ClusterFirst, ClusterFirst with dnsConfig merged, Default, None with the
// conformance spec's dnsConfig); a headless service with a pod named by
// hostname and subdomain, asked with `dig` the questions the DNS conformance
// specs ask (A of the service and of the pod's name, SRV of its named port,
// PTR of a cluster IP and of the pod's address, the pod's a-b-c-d name) over
// UDP and TCP; a pod with dnsPolicy None and no dnsConfig is refused with
// upstream's message.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { packageRoot } from "../src/component/package-root.js";
import { parseResolvConf } from "../src/nodeagent/runtime-manager/pod-dns.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const PREFIX = `D${process.pid.toString(36).toUpperCase()}`.slice(0, 8);
// A range of its own: another orch server's proxy would answer for shared addresses (10.96.0.10 most of all).
const RANGE = "10.238.0.0/16";
const DNS_IP = "10.238.0.10";
const rootSkip = process.getuid?.() !== 0 ? "needs root (iptables, the embedded runtime's namespaces)" : undefined;
const digSkip = !existsSync("/usr/bin/dig") ? "dig (bind9-dnsutils) is not installed on this machine" : undefined;

const catPod = (name: string, spec: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  restartPolicy: Never
${spec}
  containers:
  - {name: c, image: busybox:1.36, command: [cat, /etc/resolv.conf]}
`;

describe("kubectl 1.33: pod DNS settings and the cluster DNS's answers", { skip: kubectlSkipReason() ?? rootSkip ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    orch = await startOrch("server", ["--node-name=dns", `--iptables-chain-prefix=${PREFIX}`, "--iptables-min-sync-period=0", `--service-cluster-ip-range=${RANGE}`], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
    spawnSync(process.execPath, [join(packageRoot(), "bin", "orch.js"), "proxy", "--cleanup", `--iptables-chain-prefix=${PREFIX}`]);
  });

  /** The pod's /etc/resolv.conf, as its container printed it. */
  async function resolvConf(name: string, spec: string): Promise<string> {
    assert.equal((await k.run(["apply", "-f", "-"], { input: catPod(name, spec) })).code, 0);
    await eventually(async () => ((await k.ok("get", "pod", name, "-o", "jsonpath={.status.phase}")).trim() === "Succeeded" ? true : undefined), 30_000, `pod ${name} to finish`);
    return k.ok("logs", name);
  }

  test("each dnsPolicy's resolv.conf, as upstream's kubelet forms it and containerd writes it", async () => {
    assert.equal((await k.ok("get", "service", "-n", "orch-system", "orch-dns", "-o", "jsonpath={.spec.clusterIP}")).trim(), DNS_IP);
    const host = parseResolvConf(readFileSync("/etc/resolv.conf", "utf8"));
    const hostSearch = host.searches.length ? ` ${host.searches.join(" ")}` : "";

    assert.equal(await resolvConf("first", ""), `search default.svc.cluster.local svc.cluster.local cluster.local${hostSearch}\nnameserver ${DNS_IP}\noptions ndots:5\n`);
    assert.equal(
      await resolvConf("merged", "  dnsConfig: {nameservers: [192.0.2.53], searches: [extra.example], options: [{name: ndots, value: '2'}, {name: edns0}]}"),
      `search default.svc.cluster.local svc.cluster.local cluster.local${hostSearch} extra.example\nnameserver ${DNS_IP}\nnameserver 192.0.2.53\noptions ndots:2 edns0\n`,
    );
    // The conformance spec "should support configurable pod DNS nameservers": agnhost dns-suffix reads the search line.
    assert.equal(await resolvConf("none", "  dnsPolicy: None\n  dnsConfig: {nameservers: [1.1.1.1], searches: [resolv.conf.local]}"), "search resolv.conf.local\nnameserver 1.1.1.1\n");
    const dflt = parseResolvConf(await resolvConf("default", "  dnsPolicy: Default"));
    assert.deepEqual(dflt, host, "Default: the host's nameservers, search and options");

    const bad = await k.run(["apply", "-f", "-"], { input: catPod("bad", "  dnsPolicy: None") });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None/);
  });

  test("a headless service and a pod with hostname and subdomain: the DNS specs' questions answered over UDP and TCP", { skip: digSkip ?? false }, async () => {
    await k.ok("create", "service", "clusterip", "dns-test-service", "--clusterip=None", "--tcp=80:80");
    await k.ok("create", "service", "clusterip", "test-service-2", "--tcp=80:80");
    // kubectl names the port "80-80": the spec's services name theirs "http" (SRV needs a name).
    await k.ok("patch", "service", "dns-test-service", "--type=json", "-p", '[{"op":"replace","path":"/spec/ports/0/name","value":"http"},{"op":"replace","path":"/spec/selector","value":{"dns-test":"true"}}]');
    await k.ok("patch", "service", "test-service-2", "--type=json", "-p", '[{"op":"replace","path":"/spec/ports/0/name","value":"http"}]');
    const querier = `apiVersion: v1
kind: Pod
metadata: {name: querier, labels: {dns-test: "true"}}
spec:
  hostname: dns-querier-1
  subdomain: dns-test-service
  containers:
  - {name: c, image: busybox:1.36, command: [sleep, "3600"]}
`;
    assert.equal((await k.run(["apply", "-f", "-"], { input: querier })).code, 0);
    await k.ok("wait", "--for=condition=Ready", "pod/querier", "--timeout=60s");
    const podIP = (await k.ok("get", "pod", "querier", "-o", "jsonpath={.status.podIP}")).trim();
    const svcIP = (await k.ok("get", "service", "test-service-2", "-o", "jsonpath={.spec.clusterIP}")).trim();
    const reverse = (ip: string) => `${ip.split(".").reverse().join(".")}.in-addr.arpa.`;
    const dig = async (transport: string, ...q: string[]) =>
      (await promisify(execFile)("dig", [`@${DNS_IP}`, transport, "+noall", "+answer", "+search", "+domain=default.svc.cluster.local", "+ndots=5", "+tries=1", "+time=2", ...q], { encoding: "utf8" })).stdout.trim();

    // The server learns the endpoints through its informers: wait for the headless name first.
    await eventually(async () => ((await dig("+notcp", "dns-test-service.default.svc.cluster.local", "A").catch(() => "")).includes(podIP) ? true : undefined), 30_000, "the headless service's A record");
    for (const t of ["+notcp", "+tcp"]) {
      assert.match(await dig(t, "dns-test-service.default.svc.cluster.local", "A"), new RegExp(`IN\\s+A\\s+${podIP.replace(/\./g, "\\.")}$`, "m"), t);
      assert.match(await dig(t, "dns-querier-1.dns-test-service.default.svc.cluster.local", "A"), new RegExp(`A\\s+${podIP.replace(/\./g, "\\.")}$`, "m"), t);
      assert.match(await dig(t, "_http._tcp.dns-test-service.default.svc.cluster.local", "SRV"), /SRV\s+0 100 80 dns-querier-1\.dns-test-service\.default\.svc\.cluster\.local\.$/m, t);
      assert.match(await dig(t, "_http._tcp.test-service-2.default.svc.cluster.local", "SRV"), /SRV\s+0 100 80 test-service-2\.default\.svc\.cluster\.local\.$/m, t);
      assert.match(await dig(t, reverse(svcIP), "PTR"), /PTR\s+test-service-2\.default\.svc\.cluster\.local\.$/m, t);
      assert.match(await dig(t, reverse(podIP), "PTR"), /PTR\s+dns-querier-1\.dns-test-service\.default\.svc\.cluster\.local\.$/m, t);
      assert.match(await dig(t, `${podIP.replace(/\./g, "-")}.default.pod.cluster.local`, "A"), new RegExp(`A\\s+${podIP.replace(/\./g, "\\.")}$`, "m"), t);
    }
    await k.run(["delete", "pod", "querier", "--wait=false"]);
  });
});
