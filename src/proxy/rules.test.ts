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
