// The proxy's rules as text, then applied by the real iptables-restore inside
// a throwaway network namespace (root only), where a connection to a
// service address is DNATed to an endpoint served in that namespace.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import type { Service } from "../api/core/types.js";
import type { EndpointSlice } from "../api/discovery/types.js";
import { buildRules, chainNames, readyEndpoints } from "./rules.js";

const service = (name: string, spec: Service["spec"]): Service => ({ apiVersion: "v1", kind: "Service", metadata: { name, namespace: "default" }, spec });
const slice = (endpoints: { ip: string; ready?: boolean }[], port = 8080, name = "http"): EndpointSlice => ({
  apiVersion: "discovery.orch.io/v1", kind: "EndpointSlice", metadata: { name: "s", namespace: "default" }, addressType: "IPv4",
  ports: [{ name, port, protocol: "TCP" }],
  endpoints: endpoints.map((e) => ({ addresses: [e.ip], conditions: { ready: e.ready ?? true } })),
});

test("ready endpoints: by port name and protocol, not-ready ones left out, sorted and unique", () => {
  const slices = [slice([{ ip: "10.0.0.3" }, { ip: "10.0.0.2" }, { ip: "10.0.0.9", ready: false }]), slice([{ ip: "10.0.0.2" }]), slice([{ ip: "10.0.0.7" }], 9090, "metrics")];
  assert.deepEqual(readyEndpoints({ name: "http", port: 80 }, slices), ["10.0.0.2:8080", "10.0.0.3:8080"]);
  assert.deepEqual(readyEndpoints({ name: "metrics", port: 9090 }, slices), ["10.0.0.7:9090"]);
  assert.deepEqual(readyEndpoints({ name: "http", port: 80, protocol: "UDP" }, slices), []);
});

test("rules: a chain per service port with an even random split, node ports, rejects without endpoints; headless and ExternalName skipped", () => {
  const names = chainNames("T");
  const rules = buildRules(
    [
      service("web", { clusterIP: "10.96.0.10", type: "NodePort", ports: [{ name: "http", port: 80, nodePort: 30080 }] }),
      service("empty", { clusterIP: "10.96.0.11", ports: [{ name: "http", port: 80 }] }),
      service("headless", { clusterIP: "None", ports: [{ name: "http", port: 80 }] }),
      service("external", { type: "ExternalName", externalName: "example.com" }),
    ],
    (_ns, name) => (name === "web" ? [slice([{ ip: "10.1.0.2" }, { ip: "10.1.0.3" }, { ip: "10.1.0.4" }])] : name === "headless" ? [slice([{ ip: "10.1.0.5" }])] : []),
    names,
  );
  assert.deepEqual([rules.servicePorts, rules.withoutEndpoints], [2, 1]);
  const lines = rules.restore.split("\n");
  const svcJump = lines.find((l) => l.startsWith("-A T-SERVICES") && l.includes("-d 10.96.0.10/32"))!;
  assert.match(svcJump, /-p tcp -m tcp --dport 80 -j T-SVC-[A-Z0-9]{16}$/);
  const svcChain = svcJump.split(" -j ")[1]!;
  const picks = lines.filter((l) => l.startsWith(`-A ${svcChain} `) && l.includes("T-SEP-"));
  assert.deepEqual(picks.map((l) => /--probability ([\d.]+)/.exec(l)?.[1] ?? "last"), ["0.3333333333", "0.5000000000", "last"]);
  assert.equal(lines.filter((l) => l.includes("DNAT --to-destination")).map((l) => l.split(" ").at(-1)).join(","), "10.1.0.2:8080,10.1.0.3:8080,10.1.0.4:8080");
  assert.ok(lines.some((l) => l.startsWith("-A T-NODEPORTS") && l.includes("--dport 30080")));
  assert.ok(lines.some((l) => l.startsWith("-A T-SVC-REJECT") && l.includes("-d 10.96.0.11/32") && l.endsWith("-j REJECT --reject-with icmp-port-unreachable")));
  assert.ok(!rules.restore.includes("10.1.0.5"), "headless services are not proxied");
  assert.equal(lines.at(-2), "COMMIT");
  // Chains are named from content: the same input gives the same rules (no churn between syncs).
  assert.equal(buildRules([service("web", { clusterIP: "10.96.0.10", type: "NodePort", ports: [{ name: "http", port: 80, nodePort: 30080 }] })], () => [slice([{ ip: "10.1.0.2" }, { ip: "10.1.0.3" }, { ip: "10.1.0.4" }])], names).chains.join(), rules.chains.join());
});

const rootSkip = process.getuid?.() !== 0 ? "needs root (a network namespace and iptables)" : undefined;

test("rules applied by iptables-restore in a network namespace: a service address reaches the endpoint", { skip: rootSkip }, () => {
  const ns = `orch-proxy-test-${process.pid}`;
  const sh = (script: string) => spawnSync("ip", ["netns", "exec", ns, "sh", "-c", script], { encoding: "utf8" });
  spawnSync("ip", ["netns", "add", ns]);
  try {
    // The endpoint's address is local (on lo); a veth pair gives the service range a route. busybox nc answers.
    assert.equal(sh("ip link set lo up && ip addr add 10.1.0.2/32 dev lo && ip link add name va type veth peer name vb && ip link set va up && ip link set vb up").status, 0);
    const rules = buildRules([service("web", { clusterIP: "10.96.0.10", ports: [{ name: "http", port: 80 }] })], () => [slice([{ ip: "10.1.0.2" }])], chainNames("T"));
    const restore = spawnSync("ip", ["netns", "exec", ns, "iptables-restore", "--noflush", "--wait"], { input: rules.restore, encoding: "utf8" });
    assert.equal(restore.status, 0, restore.stderr);
    assert.equal(sh("iptables -t nat -I OUTPUT -j T-SERVICES && iptables -t nat -I POSTROUTING -j T-POSTROUTING && ip route add 10.96.0.0/12 dev va").status, 0);
    const served = sh("(echo served | busybox nc -l -p 8080 &) ; sleep 0.3; busybox nc -w 2 10.96.0.10 80 </dev/null");
    assert.equal(served.stdout.trim(), "served", served.stderr);
  } finally {
    spawnSync("ip", ["netns", "delete", ns]);
  }
});

test("rules with ClientIP affinity: recent-list checks before the random choice, each endpoint chain records its clients", () => {
  const names = chainNames("T");
  const sticky = service("web", { clusterIP: "10.96.0.10", type: "NodePort", sessionAffinity: "ClientIP", sessionAffinityConfig: { clientIP: { timeoutSeconds: 15 } }, ports: [{ name: "http", port: 80, nodePort: 30080 }] });
  const lines = buildRules([sticky], () => [slice([{ ip: "10.1.0.2" }, { ip: "10.1.0.3" }])], names).restore.split("\n");
  const svcChain = lines.find((l) => l.startsWith("-A T-SERVICES") && l.includes("-d 10.96.0.10/32"))!.split(" -j ")[1]!;
  const inSvc = lines.filter((l) => l.startsWith(`-A ${svcChain} `) && l.includes("T-SEP-"));
  const seps = lines.filter((l) => l.includes("DNAT --to-destination")).map((l) => l.split(" ")[1]!);
  assert.equal(seps.length, 2);
  // The checks come first, one per endpoint, each jumping to the chain its list is named after; then the even split.
  assert.deepEqual(inSvc.map((l) => /--name (\S+) --rcheck --seconds 15 --reap -j (\S+)$/.exec(l)?.slice(1).join("=") ?? "pick"), [`${seps[0]}=${seps[0]}`, `${seps[1]}=${seps[1]}`, "pick", "pick"]);
  for (const sep of seps) assert.ok(lines.some((l) => l.startsWith(`-A ${sep} `) && l.includes(`-m recent --name ${sep} --set -p tcp`)), sep);
  // The node port goes through the same service chain, so it shares the affinity.
  assert.ok(lines.some((l) => l.startsWith("-A T-EXT-") && l.endsWith(`-j ${svcChain}`)));
  // Without affinity (and by default) no recent match at all; ClientIP without a config takes upstream's 10800 s.
  assert.ok(!buildRules([service("web", { clusterIP: "10.96.0.10", ports: [{ name: "http", port: 80 }] })], () => [slice([{ ip: "10.1.0.2" }])], names).restore.includes("recent"));
  assert.match(buildRules([service("web", { clusterIP: "10.96.0.10", sessionAffinity: "ClientIP", ports: [{ name: "http", port: 80 }] })], () => [slice([{ ip: "10.1.0.2" }])], names).restore, /--rcheck --seconds 10800 --reap/);
});

// Inside the namespace: three endpoints on lo that answer their own address, and a client that connects to the
// service address `count` times (`gapMs` apart) and prints the answers as JSON.
const AFFINITY_PROBE = `
const net = require("node:net");
const [count, gapMs] = process.argv.slice(1).map(Number);
const servers = ["10.1.0.2", "10.1.0.3", "10.1.0.4"].map((a) => net.createServer((c) => c.end(a)).listen(8080, a));
const once = () => new Promise((resolve) => { let t = ""; net.connect(80, "10.96.0.10").on("data", (d) => (t += d)).on("close", () => resolve(t)).on("error", () => resolve("error")); });
(async () => {
  await new Promise((r) => setTimeout(r, 100));
  const out = [];
  for (let i = 0; i < count; i++) { if (i > 0 && gapMs > 0) await new Promise((r) => setTimeout(r, gapMs)); out.push(await once()); }
  console.log(JSON.stringify(out));
  for (const s of servers) s.close();
})();`;

test("rules applied in a network namespace: ClientIP affinity holds across syncs, lapses after its timeout, and switches off and on", { skip: rootSkip }, () => {
  const ns = `orch-affinity-test-${process.pid}`;
  const sh = (script: string) => spawnSync("ip", ["netns", "exec", ns, "sh", "-c", script], { encoding: "utf8" });
  const probe = (count: number, gapMs = 0): string[] => {
    const r = spawnSync("ip", ["netns", "exec", ns, process.execPath, "-e", AFFINITY_PROBE, String(count), String(gapMs)], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as string[];
  };
  const web = (affinity: number | undefined) => service("web", {
    clusterIP: "10.96.0.10",
    ...(affinity === undefined ? {} : { sessionAffinity: "ClientIP", sessionAffinityConfig: { clientIP: { timeoutSeconds: affinity } } }),
    ports: [{ name: "http", port: 80 }],
  });
  const apply = (affinity: number | undefined) => {
    const rules = buildRules([web(affinity)], () => [slice([{ ip: "10.1.0.2" }, { ip: "10.1.0.3" }, { ip: "10.1.0.4" }])], chainNames("T"));
    const restore = spawnSync("ip", ["netns", "exec", ns, "iptables-restore", "--noflush", "--wait"], { input: rules.restore, encoding: "utf8" });
    assert.equal(restore.status, 0, restore.stderr);
  };
  spawnSync("ip", ["netns", "add", ns]);
  try {
    assert.equal(sh("ip link set lo up && for a in 2 3 4; do ip addr add 10.1.0.$a/32 dev lo; done && ip link add name va type veth peer name vb && ip link set va up && ip link set vb up && ip addr add 10.2.0.1/24 dev va").status, 0);
    apply(undefined);
    assert.equal(sh("iptables -t nat -I OUTPUT -j T-SERVICES && iptables -t nat -I POSTROUTING -j T-POSTROUTING && ip route add 10.96.0.0/12 dev va").status, 0);
    assert.ok(new Set(probe(30)).size > 1, "without affinity the connections spread");

    apply(60);
    const sticky = probe(20);
    assert.equal(new Set(sticky).size, 1, `with affinity one endpoint answers: ${sticky}`);
    apply(60); // the proxier rewrites its rules on every sync: the clients' lists survive it
    assert.deepEqual(new Set(probe(5)), new Set(sticky), "the same endpoint after a rewrite of the rules");
    // A 1 s timeout, and connections 2 s apart (from one process, so the gaps are what they say): each is a fresh random choice among three.
    apply(1);
    const lapsed = probe(8, 2000);
    assert.ok(new Set(lapsed).size > 1, `after the timeout the choice is made again: ${lapsed}`);

    apply(undefined);
    assert.ok(new Set(probe(30)).size > 1, "affinity switched off: the connections spread again");
    apply(60);
    assert.equal(new Set(probe(20)).size, 1, "switched on again: one endpoint");
  } finally {
    spawnSync("ip", ["netns", "delete", ns]);
  }
});
