// What a simulated node writes: its Node (labels from the naming table,
// capacity, addresses, a pod range), its Lease, and the status of the pods
// it "runs" — the fields a real agent fills in, so controllers, the scheduler
// and kubectl see what they would see from one.

import type { Condition, Container, Node, NodeStatus, Pod, PodStatus } from "../api/core/types.js";
import type { Lease } from "../api/coordination/types.js";
import type { Naming } from "../machinery/naming.js";
import { formatMicroTimestamp, formatTimestamp } from "../machinery/meta.js";

export interface NodeShape {
  readonly cpu: string;
  readonly memory: string;
  readonly pods: string;
  readonly ephemeralStorage: string;
  /** What nodeInfo.kubeletVersion says. */
  readonly agentVersion: string;
}

/** Nodes one simulator can address: each gets a /24 of 10.128.0.0/9 for its pods. */
export const MAX_NODES = 1 << 15;

/** The node's own address: 10.64.0.0/10, one per index. */
export function nodeIP(index: number): string {
  const n = index + 1;
  return `10.${64 + ((n >> 16) & 63)}.${(n >> 8) & 255}.${n & 255}`;
}

/** The node's pod range: 10.(128 + index/256).(index%256).0/24. */
export function podCIDR(index: number): string {
  return `10.${128 + (index >> 8)}.${index & 255}.0/24`;
}

const rfc3339 = (ms: number): string => formatTimestamp(new Date(ms));
const microTime = (ms: number): string => formatMicroTimestamp(new Date(ms));

export function nodeLabels(naming: Naming, name: string): Record<string, string> {
  const d = naming.keyDomain;
  return { [`${d}/hostname`]: name, [`${d}/os`]: "linux", [`${d}/arch`]: "amd64", [`beta.${d}/os`]: "linux", [`beta.${d}/arch`]: "amd64", type: "simulated" };
}

const PRESSURES: readonly [string, string, string][] = [
  ["MemoryPressure", "KubeletHasSufficientMemory", "has sufficient memory available"],
  ["DiskPressure", "KubeletHasNoDiskPressure", "has no disk pressure"],
  ["PIDPressure", "KubeletHasSufficientPID", "has sufficient PID available"],
];

/** Healthy conditions; transition times kept from `old` (only heartbeats move). */
export function nodeConditions(old: readonly Condition[] | null | undefined, now: number): Condition[] {
  const since = (type: string) => old?.find((c) => c.type === type && c.status === (type === "Ready" ? "True" : "False"))?.lastTransitionTime ?? rfc3339(now);
  const beat = rfc3339(now);
  return [
    ...PRESSURES.map(([type, reason, message]) => ({ type, status: "False", reason, message: `simulated node ${message}`, lastHeartbeatTime: beat, lastTransitionTime: since(type) })),
    { type: "Ready", status: "True", reason: "KubeletReady", message: "simulated node is posting ready status", lastHeartbeatTime: beat, lastTransitionTime: since("Ready") },
  ];
}

export function nodeStatus(shape: NodeShape, index: number, name: string, conditions: Condition[]): NodeStatus {
  const resources = { cpu: shape.cpu, memory: shape.memory, pods: shape.pods, "ephemeral-storage": shape.ephemeralStorage };
  return {
    capacity: resources,
    allocatable: resources,
    conditions,
    addresses: [
      { type: "InternalIP", address: nodeIP(index) },
      { type: "Hostname", address: name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: "",
      systemUUID: "",
      bootID: "",
      kernelVersion: "simulated",
      osImage: "simulated",
      containerRuntimeVersion: "simulated://1",
      kubeletVersion: shape.agentVersion,
      kubeProxyVersion: shape.agentVersion,
      operatingSystem: "linux",
      architecture: "amd64",
    },
  };
}

export function nodeObject(naming: Naming, shape: NodeShape, index: number, name: string, now: number): Node {
  const cidr = podCIDR(index);
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels: nodeLabels(naming, name), annotations: { "simulate-nodes.orch.io/simulated": "true" } },
    spec: { podCIDR: cidr, podCIDRs: [cidr] },
    status: nodeStatus(shape, index, name, nodeConditions([], now)),
  };
}

export function leaseObject(naming: Naming, name: string, nodeUid: string | undefined, durationSeconds: number, now: number): Lease {
  return {
    apiVersion: `${naming.coordinationGroup}/v1`,
    kind: "Lease",
    metadata: {
      name,
      namespace: naming.nodeLeaseNamespace,
      ...(nodeUid ? { ownerReferences: [{ apiVersion: "v1", kind: "Node", name, uid: nodeUid }] } : {}),
    },
    spec: { holderIdentity: name, leaseDurationSeconds: durationSeconds, renewTime: microTime(now) },
  };
}

/** Hands out the addresses of one node's /24 (.2 to .254), taking freed ones back. */
export class PodIPs {
  readonly #prefix: string;
  readonly #free: number[] = [];
  #next = 2;
  readonly #used = new Set<number>();

  constructor(cidr: string) {
    this.#prefix = cidr.split("/")[0]!.split(".").slice(0, 3).join(".");
  }

  /** An unused address, or undefined when all 253 are taken. */
  take(): string | undefined {
    let last = this.#free.pop();
    if (last === undefined && this.#next <= 254) last = this.#next++;
    if (last === undefined) return undefined;
    this.#used.add(last);
    return `${this.#prefix}.${last}`;
  }

  /** Marks `ip` used (a pod already Running when the simulator started). False when it is not of this range. */
  claim(ip: string): boolean {
    if (!ip.startsWith(`${this.#prefix}.`)) return false;
    const last = Number(ip.slice(this.#prefix.length + 1));
    if (!Number.isInteger(last) || last < 2 || last > 254 || this.#used.has(last)) return false;
    this.#used.add(last);
    const i = this.#free.indexOf(last);
    if (i >= 0) this.#free.splice(i, 1);
    while (this.#next <= last) {
      if (!this.#used.has(this.#next)) this.#free.push(this.#next);
      this.#next++;
    }
    return true;
  }

  release(ip: string): void {
    if (!ip.startsWith(`${this.#prefix}.`)) return;
    const last = Number(ip.slice(this.#prefix.length + 1));
    if (this.#used.delete(last)) this.#free.push(last);
  }

  get inUse(): number {
    return this.#used.size;
  }
}

function containerID(pod: Pod, c: Container): string {
  return `simulated://${(pod.metadata.uid ?? pod.metadata.name ?? "").slice(0, 18)}-${c.name}`;
}

/** Running: every container started and ready, init containers completed, the pod Ready. */
export function runningStatus(pod: Pod, hostIP: string, podIP: string, now: number): PodStatus {
  const t = rfc3339(now);
  const started = pod.status?.startTime ?? t;
  const scheduled = pod.status?.conditions?.find((c) => c.type === "PodScheduled")?.lastTransitionTime ?? t;
  return {
    phase: "Running",
    hostIP,
    podIP,
    podIPs: [{ ip: podIP }],
    startTime: started,
    conditions: [
      { type: "Initialized", status: "True", lastProbeTime: null, lastTransitionTime: t },
      { type: "Ready", status: "True", lastProbeTime: null, lastTransitionTime: t },
      { type: "ContainersReady", status: "True", lastProbeTime: null, lastTransitionTime: t },
      { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: scheduled },
    ],
    initContainerStatuses: (pod.spec?.initContainers ?? []).map((c) => ({
      name: c.name,
      state: { terminated: { exitCode: 0, reason: "Completed", startedAt: t, finishedAt: t, containerID: containerID(pod, c) } },
      lastState: {},
      ready: true,
      restartCount: 0,
      image: c.image,
      imageID: `simulated://${c.image}`,
      containerID: containerID(pod, c),
    })),
    containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
      name: c.name,
      state: { running: { startedAt: t } },
      lastState: {},
      ready: true,
      restartCount: 0,
      image: c.image,
      imageID: `simulated://${c.image}`,
      containerID: containerID(pod, c),
      started: true,
    })),
  };
}

/** Succeeded: every container exited 0, the pod no longer Ready. */
export function succeededStatus(pod: Pod, now: number): PodStatus {
  const t = rfc3339(now);
  const startedAt = (name: string | undefined) => pod.status?.containerStatuses?.find((s) => s.name === name)?.state?.running?.startedAt ?? t;
  const keep = (type: string) => pod.status?.conditions?.find((c) => c.type === type)?.lastTransitionTime ?? t;
  return {
    phase: "Succeeded",
    conditions: [
      { type: "Initialized", status: "True", reason: "PodCompleted", lastProbeTime: null, lastTransitionTime: keep("Initialized") },
      { type: "Ready", status: "False", reason: "PodCompleted", lastProbeTime: null, lastTransitionTime: t },
      { type: "ContainersReady", status: "False", reason: "PodCompleted", lastProbeTime: null, lastTransitionTime: t },
      { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: keep("PodScheduled") },
    ],
    containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
      name: c.name,
      state: { terminated: { exitCode: 0, reason: "Completed", startedAt: startedAt(c.name), finishedAt: t, containerID: containerID(pod, c) } },
      lastState: {},
      ready: false,
      restartCount: 0,
      image: c.image,
      imageID: `simulated://${c.image}`,
      containerID: containerID(pod, c),
      started: false,
    })),
  };
}
