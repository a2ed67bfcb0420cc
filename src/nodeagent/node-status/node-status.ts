// Node registration and status (seed 001, "Node status", "Heartbeats" 2,
// "Node labels"): the Node is created with its labels, addresses, capacity and
// info; its five conditions come from real signals (memory, disk and PIDs
// against the eviction thresholds; the runtime's readiness and the PLEG). The
// status is written when something changed or every nodeStatusReportFrequency;
// until the node is first Ready it is looked at every 100 ms, not every
// nodeStatusUpdateFrequency, so a starting node turns Ready at once (upstream's
// fast status update at start-up).

import { readFileSync } from "node:fs";
import type { Condition, Node, NodeStatus } from "../../api/core/types.js";
import type { Naming } from "../../machinery/naming.js";
import { parseQuantity } from "../../api/core/quantity.js";
import { isApiError } from "../../machinery/index.js";
import type { RestClient } from "../../client/index.js";
import { rfc3339 } from "../status/pod-status.js";
import * as host from "../host/host.js";
import { NODES } from "../../api/resource-refs.js";

export { NODES };
/** Status period until the node is first Ready (upstream's kubelet polls at 100 ms then, too). */
const FAST_UPDATE_MS = 100;

export interface Signals {
  memoryAvailableBytes: number;
  memoryTotalBytes: number;
  fs: host.FsStats;
  pids: host.PidStats;
  /** Runtime conditions: RuntimeReady and NetworkReady, with the runtime's reasons. */
  runtimeReady: { ok: boolean; message: string };
  networkReady: { ok: boolean; message: string };
  pleg: { ok: boolean; message: string };
}

export interface NodeFacts {
  nodeName: string;
  hostname: string;
  internalIP: string;
  externalIP?: string;
  cpu: number;
  memoryBytes: number;
  ephemeralStorageBytes: number;
  maxPods: number;
  evictionHard: Readonly<Record<string, string>>;
  runtimeVersion: string;
  agentVersion: string;
  port: number;
  declaredFeatures: string[];
  /** Extended resources of device plugins (devices/device-manager.ts): every device, and the healthy ones. */
  extended?: { capacity: Record<string, number>; allocatable: Record<string, number> };
}

/** "100Mi" or "10%" of `total`. */
export function threshold(value: string | undefined, total: number): number {
  if (!value) return 0;
  if (value.endsWith("%")) return (Number(value.slice(0, -1)) / 100) * total;
  return parseQuantity(value) ?? 0;
}

const kib = (bytes: number): string => `${Math.floor(bytes / 1024)}Ki`;

export function capacity(f: NodeFacts): Record<string, string> {
  return { cpu: String(f.cpu), memory: kib(f.memoryBytes), "ephemeral-storage": kib(f.ephemeralStorageBytes), pods: String(f.maxPods), ...counts(f.extended?.capacity) };
}

const counts = (r: Record<string, number> | undefined): Record<string, string> => Object.fromEntries(Object.entries(r ?? {}).map(([k, v]) => [k, String(v)]));

/** Capacity minus the hard eviction thresholds (no reservations are configured), as upstream. */
export function allocatable(f: NodeFacts): Record<string, string> {
  const memory = Math.max(0, f.memoryBytes - threshold(f.evictionHard["memory.available"], f.memoryBytes));
  const storage = Math.max(0, f.ephemeralStorageBytes - threshold(f.evictionHard["nodefs.available"], f.ephemeralStorageBytes));
  return { cpu: String(f.cpu), memory: kib(memory), "ephemeral-storage": String(Math.floor(storage)), pods: String(f.maxPods), ...counts(f.extended?.allocatable) };
}

/** Allocatable as numbers (cores, bytes, pods) for admission. */
export function allocatableNumbers(f: NodeFacts): Map<string, number> {
  const a = allocatable(f);
  return new Map(Object.entries(a).map(([k, v]) => [k, parseQuantity(v) ?? 0]));
}

function reasonPrefix(naming: Naming): string {
  return naming.agentName === "kubelet" ? "Kubelet" : "NodeAgent";
}

/** What of the conditions counts as a change: not the heartbeat and transition times. */
function conditionsFingerprint(conditions: readonly Condition[] | null | undefined): unknown[] {
  return (conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message]);
}

/** The five conditions from the signals, keeping transition times of unchanged ones. */
export function nodeConditions(naming: Naming, f: NodeFacts, s: Signals, old: readonly Condition[], now: Date): Condition[] {
  const P = reasonPrefix(naming);
  const agent = naming.agentName;
  const memoryPressure = s.memoryAvailableBytes < threshold(f.evictionHard["memory.available"], s.memoryTotalBytes);
  const diskPressure =
    s.fs.availableBytes < threshold(f.evictionHard["nodefs.available"], s.fs.capacityBytes) ||
    (s.fs.inodes > 0 && s.fs.inodesFree < threshold(f.evictionHard["nodefs.inodesFree"], s.fs.inodes));
  const pidThreshold = f.evictionHard["pid.available"];
  const pidPressure = pidThreshold !== undefined && s.pids.max - s.pids.running < threshold(pidThreshold, s.pids.max);
  const notReady = [s.runtimeReady, s.networkReady, s.pleg].filter((x) => !x.ok).map((x) => x.message);
  const make = (type: string, status: boolean, reason: string, message: string): Condition => {
    const value = status ? "True" : "False";
    const prev = old.find((c) => c.type === type);
    return { type, status: value, lastHeartbeatTime: rfc3339(now), lastTransitionTime: prev?.status === value ? prev.lastTransitionTime ?? rfc3339(now) : rfc3339(now), reason, message };
  };
  return [
    make("MemoryPressure", memoryPressure, memoryPressure ? `${P}HasInsufficientMemory` : `${P}HasSufficientMemory`, `${agent} has ${memoryPressure ? "insufficient" : "sufficient"} memory available`),
    make("DiskPressure", diskPressure, diskPressure ? `${P}HasDiskPressure` : `${P}HasNoDiskPressure`, `${agent} has ${diskPressure ? "" : "no "}disk pressure`),
    make("PIDPressure", pidPressure, pidPressure ? `${P}HasInsufficientPID` : `${P}HasSufficientPID`, `${agent} has ${pidPressure ? "insufficient" : "sufficient"} PID available`),
    make("NetworkUnavailable", !s.networkReady.ok, s.networkReady.ok ? "RuntimeNetworkReady" : "RuntimeNetworkNotReady", s.networkReady.ok ? "the container runtime's network is ready" : s.networkReady.message),
    make("Ready", notReady.length === 0, notReady.length === 0 ? `${P}Ready` : `${P}NotReady`, notReady.length === 0 ? `${agent} is posting ready status` : notReady.join(", ")),
  ];
}

const readTrim = (path: string): string => {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return "";
  }
};

export function nodeStatus(naming: Naming, f: NodeFacts, conditions: Condition[]): NodeStatus {
  const addresses = [{ type: "InternalIP", address: f.internalIP }, ...(f.externalIP ? [{ type: "ExternalIP", address: f.externalIP }] : []), { type: "Hostname", address: f.hostname }];
  return {
    capacity: capacity(f),
    allocatable: allocatable(f),
    conditions,
    addresses,
    daemonEndpoints: { kubeletEndpoint: { Port: f.port } },
    nodeInfo: {
      machineID: host.machineID(),
      systemUUID: readTrim("/sys/class/dmi/id/product_uuid"),
      bootID: host.bootID(),
      kernelVersion: host.kernelVersion(),
      osImage: host.osImage(),
      containerRuntimeVersion: f.runtimeVersion,
      kubeletVersion: f.agentVersion,
      kubeProxyVersion: "",
      operatingSystem: "linux",
      architecture: host.goArch(),
    },
    declaredFeatures: f.declaredFeatures,
  };
}

/**
 * As upstream's kubelet computes allocatable from every capacity entry: a
 * resource someone else put in the Node's capacity (the agent knows nothing of
 * it) is allocatable as a whole; once it leaves capacity it leaves allocatable
 * (null: removed by the merge patch).
 */
export function withForeignCapacity(status: NodeStatus, current: NodeStatus | null | undefined): NodeStatus {
  const ours = status.capacity ?? {};
  const theirs = current?.capacity ?? {};
  const allocatable: Record<string, string | number | null> = { ...(status.allocatable ?? {}) };
  for (const [name, value] of Object.entries(theirs)) if (!(name in ours) && value != null) allocatable[name] = String(value);
  for (const name of Object.keys(current?.allocatable ?? {})) if (!(name in ours) && !(name in theirs)) allocatable[name] = null;
  return { ...status, allocatable: allocatable as NodeStatus["allocatable"] };
}

export function nodeLabels(naming: Naming, f: NodeFacts): Record<string, string> {
  const d = naming.keyDomain;
  return { [`${d}/hostname`]: f.hostname, [`${d}/os`]: "linux", [`${d}/arch`]: host.goArch(), [`beta.${d}/os`]: "linux", [`beta.${d}/arch`]: host.goArch() };
}

export interface NodeStatusManagerOptions {
  client: RestClient;
  naming: Naming;
  facts: () => NodeFacts;
  signals: () => Promise<Signals>;
  updateFrequencyMs: number;
  reportFrequencyMs: number;
  log?: (line: string) => void;
}

export class NodeStatusManager {
  readonly #o: NodeStatusManagerOptions;
  #node: Node | undefined;
  #lastWritten = "";
  #lastReport = 0;
  /** The node has been reported Ready since the agent started: the normal period applies. */
  #readyOnce = false;

  constructor(options: NodeStatusManagerOptions) {
    this.#o = options;
  }

  get uid(): string | undefined {
    return this.#node?.metadata.uid;
  }

  /** Creates the Node (or adopts the one there, fixing its labels), with a first status. */
  async register(): Promise<Node> {
    const { client, naming } = this.#o;
    const f = this.#o.facts();
    const conditions = nodeConditions(naming, f, await this.#o.signals(), [], new Date());
    const labels = nodeLabels(naming, f);
    const desired: Node = { apiVersion: "v1", kind: "Node", metadata: { name: f.nodeName, labels }, spec: {}, status: nodeStatus(naming, f, conditions) };
    try {
      this.#node = await client.create<Node>(NODES, desired);
      this.#o.log?.(`node ${f.nodeName} registered`);
    } catch (err) {
      if (!isApiError(err) || err.code !== 409) throw err;
      this.#node = await client.patch<Node>(NODES, { name: f.nodeName, patch: { metadata: { labels } } });
      this.#o.log?.(`node ${f.nodeName} already registered; taking it over`);
    }
    await this.sync(true);
    return this.#node;
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const period = this.#readyOnce ? this.#o.updateFrequencyMs : Math.min(FAST_UPDATE_MS, this.#o.updateFrequencyMs);
      await new Promise((r) => setTimeout(r, period).unref?.());
      if (signal.aborted) break;
      await this.sync(false).catch((err: Error) => this.#o.log?.(`node status: ${err.message}`));
    }
  }

  /** Writes the status when it changed (beyond heartbeat times) or the report interval passed. */
  async sync(force: boolean): Promise<void> {
    const { client, naming } = this.#o;
    const f = this.#o.facts();
    const now = new Date();
    // The Node as it is now: others may have added capacity (an extended resource patched in by an operator or a test).
    const current = await client.get<Node>(NODES, { name: f.nodeName }).catch(() => this.#node);
    const old = current?.status?.conditions ?? this.#node?.status?.conditions ?? [];
    const status = withForeignCapacity(nodeStatus(naming, f, nodeConditions(naming, f, await this.#o.signals(), old, now)), current?.status);
    const conditions = conditionsFingerprint(status.conditions);
    const fingerprint = JSON.stringify({ ...status, conditions });
    // Compared with the Node as the server has it too, as upstream's kubelet compares: the node lifecycle
    // controller marks the conditions Unknown when the heartbeats stop (a control plane down longer than
    // the grace period), and the node must turn Ready at the next period, not a report interval later.
    const overwritten = current !== undefined && JSON.stringify(conditionsFingerprint(current.status?.conditions)) !== JSON.stringify(conditions);
    if (!force && !overwritten && fingerprint === this.#lastWritten && now.getTime() - this.#lastReport < this.#o.reportFrequencyMs) return;
    this.#node = await client.patch<Node>(NODES, { name: f.nodeName, subresource: "status", patch: { status } });
    this.#lastWritten = fingerprint;
    this.#lastReport = now.getTime();
    this.#readyOnce ||= status.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
  }
}
