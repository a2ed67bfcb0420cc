// The embedded runtime's pod network on a bridge and subnet of its own: what
// the CNI bridge + host-local + loopback plugins would have wired, addresses
// that pods reach each other on, host ports through portmap, and release.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { skipOrFailInCi } from "../../../../test/support/skip.js";
import { PodNetwork } from "./network.js";

const BUSYBOX = "/bin/busybox";
const skip = process.getuid?.() !== 0 ? "pod networks need root" : skipOrFailInCi(existsSync("/usr/sbin/ip") ? undefined : "iproute2 not installed (apt-get install iproute2)");
const sh = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

describe("PodNetwork", { skip }, () => {
  const n = 1 + Math.floor(Math.random() * 250);
  const bridge = `orchnt${n}`;
  const subnet = `10.198.${n}.0/24`; // apart from test/support/containerd.ts (10.200-249)
  const owner = mkdtempSync(join(tmpdir(), "orch-network-"));
  const network = skip === undefined ? PodNetwork.probe({ bridge, subnet }, owner) : "skipped";
  after(() => {
    try {
      sh("/usr/sbin/ip", ["link", "del", bridge]);
    } catch {
      // never made
    }
    try {
      sh("iptables", ["-w", "-t", "nat", "-D", "POSTROUTING", "-s", subnet, "!", "-d", subnet, "-m", "comment", "--comment", `orch pods on ${bridge}`, "-j", "MASQUERADE"]);
    } catch {
      // no rule
    }
    rmSync(join("/run/orch-cni", bridge), { recursive: true, force: true, maxRetries: 10 });
    rmSync(owner, { recursive: true, force: true, maxRetries: 10 });
  });

  test("attach wires a namespace on the bridge as the CNI plugins would; pods reach each other; release and detach undo it", async () => {
    assert.ok(typeof network !== "string", String(network));
    const [idA, idB] = ["a".repeat(64), "b".repeat(64)];
    const a = await network.attach(idA, []);
    const b = await network.attach(idB, []);
    try {
      assert.notEqual(a.ip, b.ip);
      for (const p of [a, b]) assert.match(p.ip, new RegExp(`^10\\.198\\.${n}\\.\\d+$`));
      assert.notEqual(a.ip, `10.198.${n}.1`, "the gateway is the bridge's");
      assert.equal(readFileSync(join("/run/orch-cni", bridge, "orch", a.ip), "utf8"), `${idA}\r\neth0`, "host-local's address book format");
      const name = a.netns.slice("/run/netns/".length);
      assert.match(sh("/usr/sbin/ip", ["-n", name, "addr", "show", "eth0"]), new RegExp(`inet ${a.ip.replace(/\./g, "\\.")}/24`));
      assert.match(sh("/usr/sbin/ip", ["-n", name, "link", "show", "lo"]), /UP/);
      assert.match(sh("/usr/sbin/ip", ["-n", name, "route"]), new RegExp(`default via 10\\.198\\.${n}\\.1 dev eth0`));
      const port = sh("/usr/sbin/ip", ["-d", "link", "show", `veth${idA.slice(0, 11)}`]);
      assert.match(port, new RegExp(`master ${bridge}`));
      assert.match(port, /hairpin on/);
      assert.match(sh("/usr/sbin/ip", ["addr", "show", bridge]), new RegExp(`inet 10\\.198\\.${n}\\.1/24`));
      if (skipOrFailInCi(existsSync(BUSYBOX) ? undefined : `${BUSYBOX} not installed: pods not pinged`) === undefined) {
        sh("/usr/bin/nsenter", [`--net=${a.netns}`, BUSYBOX, "ping", "-c", "1", "-W", "5", b.ip]);
        sh("/usr/bin/nsenter", [`--net=${a.netns}`, BUSYBOX, "ping", "-c", "1", "-W", "5", `10.198.${n}.1`]);
      }
      await network.release(idA, []);
      assert.equal(existsSync(join("/run/orch-cni", bridge, "orch", a.ip)), false, "the address is given back");
      assert.throws(() => sh("/usr/sbin/ip", ["link", "show", `veth${idA.slice(0, 11)}`]), "the veth pair is gone");
      assert.ok(existsSync(a.netns), "release keeps the namespace");
      await network.release(idA, []); // idempotent
    } finally {
      await network.detach(idA, []);
      await network.detach(idB, []);
    }
    assert.equal(existsSync(a.netns), false);
    assert.equal(existsSync(b.netns), false);
    assert.equal(existsSync(join("/run/orch-cni", bridge, "orch", b.ip)), false);
    assert.equal(existsSync(join("/run/orch-cni", bridge, "owners", a.netns.slice("/run/netns/".length))), false);
  });

  test("a bridge deleted by hand is made again by the next attach", async () => {
    assert.ok(typeof network !== "string", String(network));
    sh("/usr/sbin/ip", ["link", "del", bridge]);
    const id = "d".repeat(64);
    const p = await network.attach(id, []);
    try {
      assert.match(sh("/usr/sbin/ip", ["addr", "show", bridge]), new RegExp(`inet 10\\.198\\.${n}\\.1/24`));
      assert.match(sh("/usr/sbin/ip", ["-d", "link", "show", `veth${id.slice(0, 11)}`]), new RegExp(`master ${bridge}`));
      assert.match(sh("/usr/sbin/ip", ["-n", p.netns.slice("/run/netns/".length), "addr", "show", "eth0"]), new RegExp(`inet ${p.ip.replace(/\./g, "\\.")}/24`));
    } finally {
      await network.detach(id, []);
    }
  });

  test("host ports: the portmap plugin's DNAT rules come with attach and go with release", { skip: skipOrFailInCi(existsSync("/usr/lib/cni/portmap") ? undefined : "CNI portmap plugin not installed (apt-get install containernetworking-plugins)") }, async () => {
    assert.ok(typeof network !== "string", String(network));
    const id = "c".repeat(64);
    const hostPort = 30_000 + Math.floor(Math.random() * 20_000);
    const ports = [{ protocol: "TCP" as const, containerPort: 80, hostPort, hostIp: "" }];
    const p = await network.attach(id, ports);
    try {
      const rules = sh("iptables", ["-w", "-t", "nat", "-S"]);
      assert.ok(rules.includes(`--dport ${hostPort}`) && rules.includes(`${p.ip}:80`), `a DNAT rule for ${hostPort} → ${p.ip}:80`);
      await network.release(id, ports);
      assert.equal(sh("iptables", ["-w", "-t", "nat", "-S"]).includes(`${p.ip}:80`), false);
    } finally {
      await network.detach(id, ports);
    }
  });
});
