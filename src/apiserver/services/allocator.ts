// Cluster IPs and node ports for services (upstream's service IP and node port
// allocators). Each allocation is a key of its own in the store, created only
// if absent, so two API servers on one etcd never hand out the same value:
// `/registry/orch/serviceips/<ip>` and `/registry/orch/servicenodeports/<port>`,
// holding the owning service. Allocation happens in a mutating admission
// plugin (no reservation on dry runs); releases follow the services' own
// watch (deleted services, dropped ports or types), and a repair pass frees
// what failed writes left behind and records what older data lacks. Where
// IPAddresses are served, each cluster IP is also recorded as an IPAddress
// (./ip-addresses.ts), and an address with an IPAddress is never handed out.

import { isIP } from "node:net";
import { field, internalError, invalid, type ApiObject, type FieldError } from "../../machinery/index.js";
import type { Service, ServiceSpec } from "../../api/core/types.js";
import { keepAllocated } from "../../api/core/services.js";
import { AlreadyExistsError, NotFoundError, type Storage } from "../../storage/index.js";
import type { MutatingPlugin } from "../admission/index.js";
import type { IpAddressRecords } from "./ip-addresses.js";
import { bigToIp, inRange, type IpRange, type PortRange } from "./ranges.js";

const IPS = "/registry/orch/serviceips/";
const PORTS = "/registry/orch/servicenodeports/";
export const SERVICES_PREFIX = "/registry/core/services/";
/** A reservation no service uses is freed only after this long: its service's create may still be under way. */
const REPAIR_GRACE_MS = 60_000;

const enc = new TextEncoder();
const dec = new TextDecoder();

interface Reservation {
  service: string;
  at: string;
}

export interface ServiceAllocatorOptions {
  storage: Storage;
  ipRange: IpRange;
  portRange: PortRange;
  log?: (line: string) => void;
  /** The services as stored now (for repair). */
  listServices: () => Promise<Service[]>;
  decode: (value: Uint8Array) => ApiObject;
  /** The IPAddress objects, where served. */
  ipAddresses?: IpAddressRecords | undefined;
}

const ownerOf = (svc: ApiObject) => `${svc.metadata?.namespace ?? ""}/${svc.metadata?.name ?? ""}`;
const hasClusterIP = (spec: ServiceSpec | undefined) => spec !== undefined && spec.type !== "ExternalName" && spec.clusterIP !== "None";
const needsNodePorts = (spec: ServiceSpec | undefined) => spec?.type === "NodePort" || (spec?.type === "LoadBalancer" && spec.allocateLoadBalancerNodePorts !== false);

/** What a service holds: its primary cluster IP and its node ports. */
function holdings(svc: Service | undefined): { ips: string[]; ports: number[] } {
  const spec = svc?.spec;
  if (spec === undefined) return { ips: [], ports: [] };
  const ips = hasClusterIP(spec) ? (spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : [])).filter((ip) => isIP(ip) !== 0) : [];
  const ports = (spec.ports ?? []).map((p) => p?.nodePort ?? 0).filter((p) => p > 0);
  if (spec.healthCheckNodePort) ports.push(spec.healthCheckNodePort);
  return { ips, ports };
}

export class ServiceAllocator {
  readonly #o: ServiceAllocatorOptions;
  #watch: { close(): void } | undefined;

  constructor(options: ServiceAllocatorOptions) {
    this.#o = options;
  }

  get ipRange(): IpRange {
    return this.#o.ipRange;
  }

  /** The mutating admission plugin that assigns cluster IPs and node ports on service writes. */
  plugin(): MutatingPlugin {
    return {
      name: "ServiceAllocation",
      sideEffects: "NoneOnDryRun",
      handles: (a) => a.resource.group === "" && a.resource.resource === "services" && a.subresource === undefined && (a.operation === "CREATE" || a.operation === "UPDATE"),
      admit: (a) => this.assign(a.object as Service, a.oldObject as Service | undefined, a.dryRun),
    };
  }

  /** Fills spec.clusterIP(s) and node ports a service needs, reserving each (only checking on a dry run). */
  async assign(svc: Service, old: Service | undefined, dryRun: boolean): Promise<void> {
    const spec = (svc.spec ??= {});
    if (old?.spec !== undefined) keepAllocated(spec, old.spec);
    const owner = ownerOf(svc);
    const errs: FieldError[] = [];
    const mine = holdings(old);
    if (hasClusterIP(spec)) {
      const requested = spec.clusterIPs?.[0] || spec.clusterIP || "";
      if (requested === "") {
        const ip = await this.#freeIp(owner, dryRun);
        spec.clusterIP = ip;
        spec.clusterIPs = [ip];
      } else if (isIP(requested) !== 0 && !mine.ips.includes(requested)) {
        // (Malformed addresses are left to validation, which names them.)
        const canonical = inRange(this.#o.ipRange, requested);
        if (canonical === undefined) {
          errs.push(field.invalid("spec.clusterIPs", [requested], `failed to allocate IP ${requested}: the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${this.#o.ipRange.cidr}`));
        } else if (!(await this.#reserveIp(canonical, owner, dryRun))) {
          errs.push(field.invalid("spec.clusterIPs", [requested], `failed to allocate IP ${requested}: provided IP is already allocated`));
        }
      }
      if ((spec.ipFamilies ?? []).length === 0) spec.ipFamilies = [this.#o.ipRange.family === 6 ? "IPv6" : "IPv4"];
      spec.ipFamilyPolicy ||= "SingleStack";
    }
    if (needsNodePorts(spec)) {
      const { first, last, text } = this.#o.portRange;
      const taken = new Set<number>();
      for (const [i, p] of (spec.ports ?? []).entries()) {
        if (!p) continue;
        const path = `spec.ports[${i}].nodePort`;
        if (!p.nodePort) {
          p.nodePort = await this.#freePort(owner, dryRun, taken);
        } else if (!mine.ports.includes(p.nodePort) && !taken.has(p.nodePort)) {
          if (p.nodePort < first || p.nodePort > last) errs.push(field.invalid(path, p.nodePort, `provided port is not in the valid range. The range of valid ports is ${text}`));
          else if (!(await this.#reserve(PORTS + p.nodePort, owner, dryRun))) errs.push(field.invalid(path, p.nodePort, "provided port is already allocated"));
        }
        taken.add(p.nodePort);
      }
    }
    if (errs.length > 0) throw invalid({ group: "", kind: "Service" }, svc.metadata?.name ?? "", errs);
  }

  /** Frees what a service no longer holds (after an update) or held (after its deletion), if it is that service's. */
  async releaseChanges(before: Service | undefined, after: Service | undefined): Promise<void> {
    const owner = ownerOf((before ?? after)!);
    const now = holdings(after);
    const was = holdings(before);
    for (const ip of was.ips.filter((x) => !now.ips.includes(x))) {
      const canonical = inRange(this.#o.ipRange, ip) ?? ip;
      await this.#release(IPS + canonical, owner);
      await this.#o.ipAddresses?.release(canonical, owner);
    }
    for (const port of was.ports.filter((x) => !now.ports.includes(x))) await this.#release(PORTS + port, owner);
  }

  /**
   * Reservations no service holds (older than a minute) are freed; values
   * services hold without a reservation (data from before the allocator, or
   * a restore) are recorded.
   */
  async repair(now = Date.now()): Promise<{ freed: number; recorded: number }> {
    const held = new Map<string, string>();
    for (const svc of await this.#o.listServices()) {
      const { ips, ports } = holdings(svc);
      for (const ip of ips) {
        const c = inRange(this.#o.ipRange, ip);
        if (c !== undefined) held.set(IPS + c, ownerOf(svc));
      }
      for (const port of ports) held.set(PORTS + port, ownerOf(svc));
    }
    let freed = 0;
    let recorded = 0;
    for (const prefix of [IPS, PORTS]) {
      for (const kv of (await this.#o.storage.list(prefix)).items) {
        const r = JSON.parse(dec.decode(kv.value)) as Reservation;
        if (held.get(kv.key) === r.service) {
          held.delete(kv.key);
          continue;
        }
        if (now - Date.parse(r.at) < REPAIR_GRACE_MS) continue;
        await this.#o.storage.delete(kv.key).catch((err) => { if (!(err instanceof NotFoundError)) throw err; });
        freed++;
      }
    }
    for (const [key, owner] of held) {
      if (await this.#reserve(key, owner, false)) recorded++;
      else this.#o.log?.(`service allocator: ${key.slice(key.lastIndexOf("/") + 1)} is held by ${owner} and reserved by another service`);
    }
    const records = await this.#repairRecords(now);
    return { freed: freed + records.freed, recorded: recorded + records.recorded };
  }

  /** IPAddresses for reservations that lack one; the allocator's IPAddresses no reservation backs (after the grace period) deleted. */
  async #repairRecords(now: number): Promise<{ freed: number; recorded: number }> {
    const records = this.#o.ipAddresses;
    if (records === undefined) return { freed: 0, recorded: 0 };
    const reserved = new Map<string, string>();
    for (const kv of (await this.#o.storage.list(IPS)).items) reserved.set(kv.key.slice(IPS.length), (JSON.parse(dec.decode(kv.value)) as Reservation).service);
    const existing = await records.list();
    let freed = 0;
    let recorded = 0;
    for (const [ip, owner] of reserved) {
      if (existing.has(ip)) continue;
      if (await records.record(ip, this.#o.ipRange.family, owner)) recorded++;
    }
    for (const [ip, record] of existing) {
      if (!record.managed || record.owner === undefined || reserved.get(ip) === record.owner || now - record.createdAt < REPAIR_GRACE_MS) continue;
      await records.release(ip, record.owner);
      freed++;
    }
    return { freed, recorded };
  }

  /** Follows the services from `fromRevision`: releases on deletes and updates, until stop(). */
  follow(fromRevision: number): void {
    const watch = this.#o.storage.watch(SERVICES_PREFIX, { fromRevision });
    this.#watch = watch;
    void (async () => {
      try {
        for await (const e of watch) {
          if (e.type === "progress") continue;
          const before = e.prevKv ? (this.#o.decode(e.prevKv.value) as Service) : undefined;
          const after = e.type === "put" ? (this.#o.decode(e.kv.value) as Service) : undefined;
          if (before !== undefined) await this.releaseChanges(before, after).catch((err: Error) => this.#o.log?.(`service allocator: release failed: ${err.message}`));
        }
      } catch (err) {
        // The periodic repair covers whatever a broken watch missed.
        this.#o.log?.(`service allocator: the services watch ended: ${(err as Error).message}`);
      }
    })();
  }

  stop(): void {
    this.#watch?.close();
  }

  async #reserve(key: string, owner: string, dryRun: boolean): Promise<boolean> {
    if (dryRun) {
      const { kv } = await this.#o.storage.get(key);
      return kv === undefined || (JSON.parse(dec.decode(kv.value)) as Reservation).service === owner;
    }
    try {
      await this.#o.storage.create(key, enc.encode(JSON.stringify({ service: owner, at: new Date().toISOString() } satisfies Reservation)));
      return true;
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
      const { kv } = await this.#o.storage.get(key);
      // Ours already (a retried write) counts as reserved.
      return kv !== undefined && (JSON.parse(dec.decode(kv.value)) as Reservation).service === owner;
    }
  }

  /** Reserves a cluster IP and records its IPAddress; false when another service or object holds it. */
  async #reserveIp(ip: string, owner: string, dryRun: boolean): Promise<boolean> {
    const records = this.#o.ipAddresses;
    const record = await records?.get(ip);
    if (record !== undefined && record.owner !== owner) return false;
    if (!(await this.#reserve(IPS + ip, owner, dryRun))) return false;
    if (dryRun || records === undefined || (await records.record(ip, this.#o.ipRange.family, owner))) return true;
    // Another object's IPAddress appeared meanwhile: the address is not ours.
    await this.#release(IPS + ip, owner);
    return false;
  }

  async #release(key: string, owner: string): Promise<void> {
    const { kv } = await this.#o.storage.get(key);
    if (kv === undefined || (JSON.parse(dec.decode(kv.value)) as Reservation).service !== owner) return;
    await this.#o.storage.delete(key).catch((err) => { if (!(err instanceof NotFoundError)) throw err; });
  }

  /** A random free IP of the range (reserved unless dry run). */
  async #freeIp(owner: string, dryRun: boolean): Promise<string> {
    const { first, last, family, cidr } = this.#o.ipRange;
    const used = new Set((await this.#o.storage.list(IPS)).items.map((kv) => kv.key.slice(IPS.length)));
    for (const ip of (await this.#o.ipAddresses?.list())?.keys() ?? []) used.add(ip);
    const size = last - first + 1n;
    // Random start, then the next free one: every free address is reachable, and a full range is reported.
    const start = BigInt(Math.floor(Math.random() * Number(size > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : size)));
    const tries = size < 65_536n ? size : 65_536n;
    for (let i = 0n; i < tries; i++) {
      const ip = bigToIp(first + ((start + i) % size), family);
      if (used.has(ip)) continue;
      if (await this.#reserveIp(ip, owner, dryRun)) return ip;
    }
    throw internalError(new Error(`failed to allocate a serviceIP: range is full (${cidr})`));
  }

  /** A random free node port (reserved unless dry run), not one this request already took. */
  async #freePort(owner: string, dryRun: boolean, taken: Set<number>): Promise<number> {
    const { first, last, text } = this.#o.portRange;
    const used = new Set((await this.#o.storage.list(PORTS)).items.map((kv) => Number(kv.key.slice(PORTS.length))));
    const size = last - first + 1;
    const start = Math.floor(Math.random() * size);
    for (let i = 0; i < size; i++) {
      const port = first + ((start + i) % size);
      if (used.has(port) || taken.has(port)) continue;
      if (await this.#reserve(PORTS + port, owner, dryRun)) return port;
    }
    throw internalError(new Error(`failed to allocate a nodePort: range is full (${text})`));
  }
}
