// End to end (issue 21, the first hour): two `orch server`s on one host with
// no flags to keep them apart, and Services on a machine without iptables.
// Each server takes a host slot of its own (a registry folder of this test's:
// its slot 0 is held by this test process, standing for a first server
// already running), so each has its own service range and proxy chains and
// says so in its ready line. Server A programs iptables; server B runs where
// iptables is "not installed" (its PATH holds every command of /usr/sbin but
// iptables*), so the default --proxy-mode=auto picks the userspace proxy. On each, a pod reaches a web pod through its
// own Service's cluster IP; on B also by the service's name (cluster DNS,
// UDP through the userspace proxy) and from the host.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { packageRoot } from "../src/component/package-root.js";
import { getText as get } from "./support/http-text.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const rootSkip = process.getuid?.() !== 0 ? "needs root (the proxy, the embedded runtime's namespaces)" : undefined;
const registry = mkdtempSync(join(tmpdir(), "orch-e2e-slots-"));
process.env["ORCH_HOST_SLOTS_DIR"] = registry;
// A first server already running: it holds slot 0 (the default range and the ORCH chains stay someone else's).
writeFileSync(join(registry, "slot-0.json"), JSON.stringify({ pid: process.pid, dataDir: "/var/lib/orch-first" }));

interface Cluster {
  orch: OrchProcess;
  k: Kubectl;
  slot: number;
  range: string;
  prefix: string;
}

/** A PATH like this host's with every command of /usr/sbin and /sbin but iptables*: a machine without iptables, to the proxy. */
function pathWithoutIptables(): string {
  const dir = mkdtempSync(join(tmpdir(), "orch-e2e-no-iptables-"));
  for (const sbin of ["/usr/sbin", "/sbin"]) {
    for (const cmd of readdirSync(sbin)) {
      if (cmd.startsWith("iptables") || cmd.startsWith("ip6tables")) continue;
      try { symlinkSync(join(sbin, cmd), join(dir, cmd)); } catch { /* /sbin is /usr/sbin here: already linked */ }
    }
  }
  return [dir, ...(process.env["PATH"] ?? "").split(":").filter((d) => !/^\/(usr\/)?(local\/)?sbin$/.test(d))].join(":");
}

async function startCluster(name: string, extra: string[], path?: string): Promise<Cluster> {
  // --disable-proxy=false: the test support turns the proxy off unless asked; no chain prefix or range is given.
  const saved = process.env["PATH"];
  // The server inherits the environment when it is spawned.
  if (path !== undefined) process.env["PATH"] = path;
  const orch = await startOrch("server", [`--node-name=${name}`, "--disable-proxy=false", "--iptables-min-sync-period=0", ...extra], { readyTimeoutMs: 90_000 }).finally(() => (process.env["PATH"] = saved));
  const ready = /orch server ready: .*; host slot (\d+) [^:]*: services (\S+), proxy chains (\S+)-\*/.exec(orch.output());
  assert.ok(ready, `the ready line says which slot, range and chains: ${orch.output().split("\n").find((l) => l.includes("ready:"))}`);
  return { orch, k: new Kubectl(orch.kubeconfig), slot: Number(ready[1]), range: ready[2]!, prefix: ready[3]! };
}

/** A web pod (it serves its own name) behind a ClusterIP Service; resolves to the service's address. */
async function exposeWeb(c: Cluster): Promise<string> {
  await c.k.ok("run", "web", "--image=busybox:1.36", "--labels=app=web", "--", "sh", "-c", "mkdir -p /www && hostname > /www/index.html && exec busybox httpd -f -p 8080 -h /www");
  await c.k.ok("wait", "--for=condition=Ready", "pod/web", "--timeout=60s");
  await c.k.ok("create", "service", "clusterip", "web", "--tcp=80:8080");
  return (await c.k.ok("get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")).trim();
}

/** A pod that fetches the URL once; resolves to its phase and log. */
async function fetchFromPod(c: Cluster, name: string, url: string): Promise<{ phase: string; log: string }> {
  await c.k.ok("run", name, "--image=busybox:1.36", "--restart=Never", "--", "sh", "-c", `for i in 1 2 3 4 5 6 7 8 9 10; do busybox wget -q -O - ${url} && exit 0; sleep 1; done; exit 1`);
  const phase = await eventually(async () => {
    const p = (await c.k.ok("get", "pod", name, "-o", "jsonpath={.status.phase}")).trim();
    return p === "Succeeded" || p === "Failed" ? p : undefined;
  }, 60_000, `the pod ${name} to finish`);
  return { phase, log: (await c.k.run(["logs", name])).stdout.trim() };
}

/** Whether an IPv4 address lies in a CIDR. */
function inRange(ip: string, cidr: string): boolean {
  const num = (a: string) => a.split(".").reduce((n, p) => n * 256 + Number(p), 0);
  const [base, bits] = cidr.split("/") as [string, string];
  const size = 2 ** (32 - Number(bits));
  return Math.floor(num(ip) / size) === Math.floor(num(base) / size);
}

describe("two orch servers on one host, one without iptables", { skip: kubectlSkipReason() ?? rootSkip ?? false, timeout: 300_000 }, () => {
  let a: Cluster;
  let b: Cluster;
  before(async () => {
    a = await startCluster("slot-a", []);
    b = await startCluster("slot-b", [], pathWithoutIptables());
  });
  after(async () => {
    await a?.orch.stop();
    await b?.orch.stop();
    for (const c of [a, b]) {
      if (c === undefined) continue;
      spawnSync(process.execPath, [join(packageRoot(), "bin", "orch.js"), "proxy", "--cleanup", `--iptables-chain-prefix=${c.prefix}`]);
      spawnSync("ip", ["link", "del", `${c.prefix.toLowerCase()}-svc`]);
    }
    rmSync(registry, { recursive: true, force: true });
  });

  test("each server took a slot of its own, with no flags: service ranges and proxy chains differ", () => {
    assert.deepEqual([a.slot, b.slot], [1, 2], "slot 0 is held: the first free ones");
    assert.deepEqual([a.range, b.range], ["10.112.0.0/12", "10.128.0.0/12"]);
    assert.deepEqual([a.prefix, b.prefix], ["ORCH1", "ORCH2"]);
    assert.match(b.orch.output(), /orch-proxy: iptables is not installed \(iptables, iptables-save, iptables-restore not on PATH\): serving service cluster IPs and node ports with the userspace proxy instead \(listeners on this node, cluster IPs on device orch2-svc/);
    assert.equal(b.orch.output().split("iptables is not installed").length, 2, "said once");
    assert.doesNotMatch(a.orch.output(), /userspace proxy/, "A has iptables and uses it");
  });

  test("server A (iptables): a pod reaches a pod of its own cluster through the Service's cluster IP", async () => {
    const ip = await exposeWeb(a);
    assert.ok(inRange(ip, a.range), `${ip} is in A's range ${a.range}`);
    const { phase, log } = await fetchFromPod(a, "client", `http://${ip}/`);
    assert.equal(phase, "Succeeded", log);
    assert.equal(log, "web", "A's own web pod answered");
  });

  test("server B (userspace proxy): a pod and the host reach its Service by cluster IP, and a pod by name through the cluster DNS", async () => {
    const ip = await exposeWeb(b);
    assert.ok(inRange(ip, b.range), `${ip} is in B's range ${b.range}`);
    assert.equal(await eventually(() => get(ip, 80).catch(() => undefined), 20_000, "the cluster IP to answer on the host"), "web");
    const byIP = await fetchFromPod(b, "client", `http://${ip}/`);
    assert.equal(byIP.phase, "Succeeded", byIP.log);
    assert.equal(byIP.log, "web");
    const dnsIP = (await b.k.ok("get", "service", "-n", "orch-system", "orch-dns", "-o", "jsonpath={.spec.clusterIP}")).trim();
    assert.ok(inRange(dnsIP, b.range), `the cluster DNS address ${dnsIP} is B's`);
    const byName = await fetchFromPod(b, "byname", "http://web/");
    assert.equal(byName.phase, "Succeeded", byName.log);
    assert.equal(byName.log, "web");
    // The service leaves: its address leaves B's device.
    await b.k.ok("delete", "service", "web");
    await eventually(async () => (spawnSync("ip", ["-4", "-o", "addr", "show", "dev", "orch2-svc"], { encoding: "utf8" }).stdout.includes(`inet ${ip}/`) ? undefined : true), 20_000, "the address to leave the device");
  });
});
