// Pod networking for the embedded runtime: a network namespace per sandbox,
// wired as the standard CNI bridge, host-local and loopback plugins wire it
// (a veth pair on the host bridge, hairpin on, an address from the shared
// host-local address book, the bridge as default gateway, one masquerade rule
// for the subnet) but by two `ip -batch` processes instead of four plugin
// processes; host ports go through the CNI portmap plugin, as containerd's.
// Without root or iproute2, pods use the host's network and the runtime says why.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PortMapping } from "../../cri/types.js";
import { AddressBook, parseSubnet, type Subnet } from "./address-book.js";
import { hostCommands } from "./host-commands.js";

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

/** What the runtime keeps per pod under <dataDir>/owners: enough to unwire it without the runtime's own records. */
interface OwnerRecord {
  owner: string;
  sandboxId: string;
  portMappings: PortMapping[];
  /** Absent in records of runtimes that wired pods through the bridge plugin (released through it too). */
  ip?: string;
  /** Set once release() gave the address and ports back. */
  released?: boolean;
}

/** How old a reservation without a namespace must be before it is taken for leaked: wiring a pod takes milliseconds. */
const ORPHAN_ADDRESS_AGE_MS = 60_000;

export class PodNetwork {
  readonly #bridge: string;
  readonly #subnetText: string;
  readonly #subnet: Subnet;
  readonly #cniBin: string;
  readonly #dataDir: string;
  readonly #owner: string;
  readonly #addresses: AddressBook;
  #masquerade: Promise<void> | undefined;
  #bridgeUp: Promise<void> | undefined;

  private constructor(options: PodNetworkOptions, owner: string) {
    this.#owner = owner;
    this.#bridge = options.bridge ?? "orch0";
    this.#subnetText = options.subnet ?? "10.89.0.0/16";
    this.#subnet = parseSubnet(this.#subnetText);
    this.#cniBin = options.cniBin ?? CNI_BIN;
    // One address book per bridge for the whole host, so several runtimes on
    // one bridge never hand out the same address; under /run, as the
    // namespaces it describes do not outlive a reboot either. The network
    // name "orch" is the folder the host-local plugin would use.
    this.#dataDir = join("/run/orch-cni", this.#bridge);
    this.#addresses = new AddressBook(join(this.#dataDir, "orch"), this.#subnet);
  }

  /**
   * A pod network when this host can give one, else why not. `owner` is the
   * runtime's root directory: namespaces whose owner directory is gone (a
   * deleted test folder) are cleaned up by the next runtime on the host.
   */
  static probe(options: PodNetworkOptions, owner: string): PodNetwork | string {
    if (process.getuid?.() !== 0) return "not running as root";
    if (IP === undefined) return "iproute2 (ip) not found";
    let network: PodNetwork;
    try {
      network = new PodNetwork(options, owner);
    } catch (err) {
      return (err as Error).message;
    }
    mkdirSync(join(network.#dataDir, "owners"), { recursive: true });
    return network;
  }

  get description(): string {
    return `bridge ${this.#bridge}, pods in ${this.#subnetText}`;
  }

  /** Creates the sandbox's namespace and wires it; returns its path and IP. */
  async attach(sandboxId: string, portMappings: readonly PortMapping[]): Promise<Attached> {
    const name = netnsName(sandboxId);
    const veth = vethName(sandboxId);
    await Promise.all([(this.#masquerade ??= this.#ensureMasquerade()), (this.#bridgeUp ??= this.#ensureBridge())]);
    const ip = this.#addresses.allocate(sandboxId, "eth0");
    const netns = `/run/netns/${name}`;
    const record: OwnerRecord = { owner: this.#owner, sandboxId, portMappings: [...portMappings], ip };
    writeFileSync(this.#ownerFile(name), JSON.stringify(record));
    try {
      // On the host: the namespace, the veth pair with its pod end already inside, the host end on the bridge.
      const plug = [`link add ${veth} type veth peer name eth0 netns ${name}`, `link set ${veth} master ${this.#bridge}`, `link set ${veth} type bridge_slave hairpin on`, `link set ${veth} up`];
      await ipBatch([], [`netns add ${name}`, ...plug]).catch(async (err: Error) => {
        if (!/Cannot find device|does not exist/.test(err.message)) throw err;
        // The bridge went away (deleted by hand): make it again, once, as the bridge plugin would.
        await (this.#bridgeUp = this.#ensureBridge());
        await ipBatch(["-force"], [`link del ${veth}`]).catch(() => {});
        await ipBatch([], plug);
      });
      // Inside: loopback, the address, the bridge as the default gateway.
      await ipBatch(["-n", name], [
        "link set lo up",
        `addr add ${ip}/${this.#subnet.prefix} dev eth0`,
        "link set eth0 up",
        `route add default via ${this.#subnet.gateway}`,
      ]);
      const hostPorts = portMappings.filter((p) => p.hostPort > 0);
      if (hostPorts.length > 0) {
        const prevResult = {
          cniVersion: "1.0.0",
          interfaces: [{ name: veth }, { name: "eth0", sandbox: netns }],
          ips: [{ address: `${ip}/${this.#subnet.prefix}`, gateway: this.#subnet.gateway, interface: 1 }],
        };
        await this.#plugin("ADD", sandboxId, netns, "eth0", { ...this.#portmapConfig(hostPorts), prevResult });
      }
      return { netns, ip };
    } catch (err) {
      await this.detach(sandboxId, portMappings).catch(() => {});
      throw err;
    }
  }

  /** Gives back the sandbox's address and ports and unplugs it from the bridge (as CNI DEL); idempotent. */
  async release(sandboxId: string, portMappings: readonly PortMapping[]): Promise<void> {
    const name = netnsName(sandboxId);
    const record = this.#record(name);
    if (record?.released) return;
    await this.#releasePorts(sandboxId, portMappings);
    if (record?.ip === undefined) {
      // Wired by the bridge plugin (an earlier version of this runtime): unwired by it too.
      await this.#plugin("DEL", sandboxId, `/run/netns/${name}`, "eth0", this.#bridgeConfig());
    } else {
      // Deleting the host end deletes the pair at once (a deleted namespace takes its veth along only later).
      await ipBatch(["-force"], [`link del ${vethName(sandboxId)}`]).catch(() => {});
      this.#addresses.release(record.ip, sandboxId);
    }
    if (record !== undefined) writeFileSync(this.#ownerFile(name), JSON.stringify({ ...record, released: true }));
  }

  /** release() and then the namespace itself. */
  async detach(sandboxId: string, portMappings: readonly PortMapping[]): Promise<void> {
    const name = netnsName(sandboxId);
    await this.release(sandboxId, portMappings).catch(() => {});
    await ipBatch(["-force"], [`netns delete ${name}`]).catch(() => {});
    rmSync(this.#ownerFile(name), { force: true });
  }

  /** Detaches the pods of runtimes whose directory no longer exists, and frees leaked addresses; returns how many. */
  async collectOrphans(): Promise<number> {
    let n = 0;
    for (const name of readdirSync(join(this.#dataDir, "owners"))) {
      const record = this.#record(name);
      if (record === undefined || existsSync(record.owner)) continue;
      await this.detach(record.sandboxId, record.portMappings);
      n++;
    }
    // Then addresses held by no namespace at all (a runtime killed between reserving one and recording it).
    return n + this.#addresses.collect((id) => existsSync(`/run/netns/${netnsName(id)}`), ORPHAN_ADDRESS_AGE_MS);
  }

  #ownerFile(name: string): string {
    return join(this.#dataDir, "owners", name);
  }

  #record(name: string): OwnerRecord | undefined {
    try {
      return JSON.parse(readFileSync(this.#ownerFile(name), "utf8")) as OwnerRecord;
    } catch {
      return undefined;
    }
  }

  async #releasePorts(sandboxId: string, portMappings: readonly PortMapping[]): Promise<void> {
    const hostPorts = portMappings.filter((p) => p.hostPort > 0);
    if (hostPorts.length === 0) return;
    await this.#plugin("DEL", sandboxId, `/run/netns/${netnsName(sandboxId)}`, "eth0", this.#portmapConfig(hostPorts)).catch(() => {});
  }

  #portmapConfig(hostPorts: readonly PortMapping[]): Record<string, unknown> {
    return {
      cniVersion: "1.0.0",
      name: "orch",
      type: "portmap",
      capabilities: { portMappings: true },
      runtimeConfig: { portMappings: hostPorts.map((p) => ({ hostPort: p.hostPort, containerPort: p.containerPort, protocol: p.protocol.toLowerCase(), ...(p.hostIp ? { hostIP: p.hostIp } : {}) })) },
    };
  }

  /** The bridge with the gateway address, up, and forwarding on (what the bridge plugin's isGateway does). */
  async #ensureBridge(): Promise<void> {
    // -force: "File exists" for a bridge or address already there is fine.
    await ipBatch(["-force"], [`link add ${this.#bridge} type bridge`, `addr add ${this.#subnet.gateway}/${this.#subnet.prefix} dev ${this.#bridge}`, `link set ${this.#bridge} up`]).catch(() => {});
    try {
      writeFileSync("/proc/sys/net/ipv4/ip_forward", "1");
    } catch {
      // read-only /proc/sys (a container without privileges): pods still reach each other
    }
  }

  /**
   * One masquerade rule for the whole pod subnet, instead of the bridge
   * plugin's ipMasq (a chain and rules per pod): those iptables calls take the
   * host-wide xtables lock, so pods starting together queued behind each other
   * (about 0.1 s each on an idle host, seconds under load). Idempotent (-C first).
   */
  async #ensureMasquerade(): Promise<void> {
    if (IPTABLES === undefined) return; // no iptables: pods reach the bridge and each other only
    const rule = ["POSTROUTING", "-s", this.#subnetText, "!", "-d", this.#subnetText, "-m", "comment", "--comment", `orch pods on ${this.#bridge}`, "-j", "MASQUERADE"];
    if ((await hostCommands.run([IPTABLES, "-w", "-t", "nat", "-C", ...rule])).code === 0) return;
    const added = await hostCommands.run([IPTABLES, "-w", "-t", "nat", "-A", ...rule]);
    if (added.code !== 0) this.#masquerade = undefined; // try again with the next pod
  }

  /** The bridge plugin's configuration that wired pods of earlier versions (for their DEL). */
  #bridgeConfig(): Record<string, unknown> {
    return {
      cniVersion: "1.0.0",
      name: "orch",
      type: "bridge",
      bridge: this.#bridge,
      isGateway: true,
      ipMasq: false, // one rule for the subnet instead (#ensureMasquerade)
      hairpinMode: true,
      ipam: { type: "host-local", ranges: [[{ subnet: this.#subnetText }]], routes: [{ dst: "0.0.0.0/0" }], dataDir: this.#dataDir },
    };
  }

  /** Runs one CNI plugin as the specification says: command in the environment, config on stdin; rejects with the plugin's message. */
  async #plugin(command: "ADD" | "DEL", id: string, netns: string, ifname: string, config: Record<string, unknown>): Promise<void> {
    const r = await hostCommands.run([join(this.#cniBin, String(config.type))], {
      env: { CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_NETNS: netns, CNI_IFNAME: ifname, CNI_PATH: this.#cniBin },
      input: JSON.stringify(config),
    });
    if (r.code === 0) return;
    let msg = r.output;
    try {
      msg = (JSON.parse(r.output) as { msg?: string }).msg ?? msg; // a CNI error object
    } catch {
      // plain text
    }
    throw new Error(`CNI ${String(config.type)} ${command}: ${msg}`);
  }
}

function netnsName(sandboxId: string): string {
  return `orch-${sandboxId.slice(0, 20)}`;
}

/** The host end of a pod's veth pair: 15 characters, the longest name Linux takes. */
function vethName(sandboxId: string): string {
  return `veth${sandboxId.slice(0, 11)}`;
}

/** Runs `ip [options] -batch -` with `lines` on stdin; rejects with ip's own words on failure. */
async function ipBatch(options: string[], lines: string[]): Promise<void> {
  const r = await hostCommands.run([IP!, ...options, "-batch", "-"], { input: lines.join("\n") });
  if (r.code !== 0) throw new Error(`ip ${[...options, ...lines.slice(0, 1)].join(" ")}…: ${r.output || `exit ${r.code}`}`);
}
