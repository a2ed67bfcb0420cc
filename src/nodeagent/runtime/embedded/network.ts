// Pod networking for the embedded runtime: a network namespace per sandbox,
// wired by the standard CNI plugins (containernetworking-plugins: bridge with
// host-local addresses and masquerading, loopback, portmap for host ports), as
// containerd's CRI plugin does. Without the plugins, or without root, pods use
// the host's network and the runtime says why.

import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { PortMapping } from "../../cri/types.js";

const run = promisify(execFile);
const CNI_BIN = "/usr/lib/cni";
const IP = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].find(existsSync);
const IPTABLES = ["/usr/sbin/iptables", "/sbin/iptables", "/usr/bin/iptables"].find(existsSync);

export interface PodNetworkOptions {
  /** Bridge device on the host (default orch0). */
  bridge?: string;
  /** Pod addresses (default 10.89.0.0/16); the bridge takes the first. */
  subnet?: string;
  /** Directory of the CNI plugins (default /usr/lib/cni). */
  cniBin?: string;
}

export interface Attached {
  /** /run/netns/<name>: what containers and exec enter. */
  netns: string;
  ip: string;
}

interface CniResult {
  ips?: { address?: string; version?: string }[];
}

export class PodNetwork {
  readonly #bridge: string;
  readonly #subnet: string;
  readonly #cniBin: string;
  readonly #dataDir: string;
  readonly #owner: string;
  #masquerade: Promise<void> | undefined;

  private constructor(options: PodNetworkOptions, owner: string) {
    this.#owner = owner;
    this.#bridge = options.bridge ?? "orch0";
    this.#subnet = options.subnet ?? "10.89.0.0/16";
    this.#cniBin = options.cniBin ?? CNI_BIN;
    // One address book per bridge for the whole host (host-local locks it), so
    // several runtimes on one bridge never hand out the same address; under
    // /run, as the namespaces it describes do not outlive a reboot either.
    this.#dataDir = join("/run/orch-cni", this.#bridge);
  }

  /**
   * A pod network when this host can give one, else why not. `owner` is the
   * runtime's root directory: namespaces whose owner directory is gone (a
   * deleted test folder) are cleaned up by the next runtime on the host.
   */
  static probe(options: PodNetworkOptions, owner: string): PodNetwork | string {
    if (process.getuid?.() !== 0) return "not running as root";
    if (IP === undefined) return "iproute2 (ip) not found";
    const bin = options.cniBin ?? CNI_BIN;
    const missing = ["bridge", "host-local", "loopback"].filter((p) => !existsSync(join(bin, p)));
    if (missing.length > 0) return `CNI plugins ${missing.join(", ")} not found in ${bin} (apt-get install containernetworking-plugins)`;
    const network = new PodNetwork(options, owner);
    mkdirSync(join(network.#dataDir, "owners"), { recursive: true });
    return network;
  }

  get description(): string {
    return `bridge ${this.#bridge}, pods in ${this.#subnet}`;
  }

  /** Creates the sandbox's namespace and wires it; returns its path and IP. */
  async attach(sandboxId: string, portMappings: readonly PortMapping[]): Promise<Attached> {
    const name = netnsName(sandboxId);
    await (this.#masquerade ??= this.#ensureMasquerade());
    await run(IP!, ["netns", "add", name]).catch((err: Error) => {
      if (!/File exists/.test(err.message)) throw err;
    });
    const netns = `/run/netns/${name}`;
    writeFileSync(join(this.#dataDir, "owners", name), JSON.stringify({ owner: this.#owner, sandboxId, portMappings }));
    try {
      await this.#plugin("ADD", sandboxId, netns, "lo", { cniVersion: "1.0.0", name: "orch-lo", type: "loopback" });
      const result = await this.#plugin("ADD", sandboxId, netns, "eth0", this.#bridgeConfig());
      const ip = result.ips?.find((i) => i.address?.includes("."))?.address?.split("/")[0] ?? result.ips?.[0]?.address?.split("/")[0];
      if (ip === undefined) throw new Error("the bridge plugin assigned no address");
      if (portMappings.some((p) => p.hostPort > 0)) {
        await this.#plugin("ADD", sandboxId, netns, "eth0", {
          cniVersion: "1.0.0",
          name: "orch",
          type: "portmap",
          capabilities: { portMappings: true },
          runtimeConfig: { portMappings: portMappings.filter((p) => p.hostPort > 0).map((p) => ({ hostPort: p.hostPort, containerPort: p.containerPort, protocol: p.protocol.toLowerCase(), ...(p.hostIp ? { hostIP: p.hostIp } : {}) })) },
          prevResult: result,
        });
      }
      return { netns, ip };
    } catch (err) {
      await this.detach(sandboxId, portMappings).catch(() => {});
      throw err;
    }
  }

  /** Releases the sandbox's address and ports (CNI DEL); idempotent. */
  async release(sandboxId: string, portMappings: readonly PortMapping[]): Promise<void> {
    const netns = `/run/netns/${netnsName(sandboxId)}`;
    if (portMappings.some((p) => p.hostPort > 0)) {
      await this.#plugin("DEL", sandboxId, netns, "eth0", { cniVersion: "1.0.0", name: "orch", type: "portmap", capabilities: { portMappings: true }, runtimeConfig: { portMappings: portMappings.filter((p) => p.hostPort > 0).map((p) => ({ hostPort: p.hostPort, containerPort: p.containerPort, protocol: p.protocol.toLowerCase() })) } }).catch(() => {});
    }
    await this.#plugin("DEL", sandboxId, netns, "eth0", this.#bridgeConfig());
  }

  /** release() and then the namespace itself. */
  async detach(sandboxId: string, portMappings: readonly PortMapping[]): Promise<void> {
    await this.release(sandboxId, portMappings).catch(() => {});
    await run(IP!, ["netns", "delete", netnsName(sandboxId)]).catch(() => {});
    rmSync(join(this.#dataDir, "owners", netnsName(sandboxId)), { force: true });
  }

  /** Detaches the pods of runtimes whose directory no longer exists; returns how many. */
  async collectOrphans(): Promise<number> {
    let n = 0;
    for (const name of readdirSync(join(this.#dataDir, "owners"))) {
      let record: { owner: string; sandboxId: string; portMappings: PortMapping[] };
      try {
        record = JSON.parse(readFileSync(join(this.#dataDir, "owners", name), "utf8")) as typeof record;
      } catch {
        continue;
      }
      if (existsSync(record.owner)) continue;
      await this.detach(record.sandboxId, record.portMappings);
      n++;
    }
    return n;
  }

  /**
   * One masquerade rule for the whole pod subnet, instead of the bridge
   * plugin's ipMasq (a chain and rules per pod): those iptables calls take the
   * host-wide xtables lock, so pods starting together queued behind each other
   * (about 0.1 s each on an idle host, seconds under load). Idempotent (-C first).
   */
  async #ensureMasquerade(): Promise<void> {
    if (IPTABLES === undefined) return; // no iptables: pods reach the bridge and each other only
    const rule = ["POSTROUTING", "-s", this.#subnet, "!", "-d", this.#subnet, "-m", "comment", "--comment", `orch pods on ${this.#bridge}`, "-j", "MASQUERADE"];
    try {
      await run(IPTABLES, ["-w", "-t", "nat", "-C", ...rule]);
    } catch {
      await run(IPTABLES, ["-w", "-t", "nat", "-A", ...rule]).catch(() => {
        this.#masquerade = undefined; // try again with the next pod
      });
    }
  }

  #bridgeConfig(): Record<string, unknown> {
    return {
      cniVersion: "1.0.0",
      name: "orch",
      type: "bridge",
      bridge: this.#bridge,
      isGateway: true,
      ipMasq: false, // one rule for the subnet instead (#ensureMasquerade)
      hairpinMode: true,
      ipam: { type: "host-local", ranges: [[{ subnet: this.#subnet }]], routes: [{ dst: "0.0.0.0/0" }], dataDir: this.#dataDir },
    };
  }

  /** Runs one CNI plugin as the specification says: command in the environment, config on stdin, result on stdout. */
  #plugin(command: "ADD" | "DEL", id: string, netns: string, ifname: string, config: Record<string, unknown>): Promise<CniResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(join(this.#cniBin, String(config.type)), [], {
        env: { CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_NETNS: netns, CNI_IFNAME: ifname, CNI_PATH: this.#cniBin, PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      child.once("error", reject);
      child.once("close", (code) => {
        if (code === 0) {
          try {
            return resolve(out.trim() === "" ? {} : (JSON.parse(out) as CniResult));
          } catch {
            return resolve({});
          }
        }
        let msg = err.trim() || out.trim();
        try {
          msg = (JSON.parse(out) as { msg?: string }).msg ?? msg;
        } catch {
          // not a CNI error object
        }
        reject(new Error(`CNI ${String(config.type)} ${command}: ${msg}`));
      });
      child.stdin.end(JSON.stringify(config));
    });
  }
}

function netnsName(sandboxId: string): string {
  return `orch-${sandboxId.slice(0, 20)}`;
}
