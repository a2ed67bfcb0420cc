// Pod admission on the node, as upstream's predicate admit handler: a pod that
// would exceed maxPods or the allocatable CPU, memory or ephemeral storage is
// rejected with reason OutOfpods / OutOfcpu / OutOfmemory / OutOfephemeral-storage
// and the message upstream prints, one asking for a host port another pod on
// the node holds with reason NodePorts, and it fails without running (a
// StatefulSet's pod is then replaced by its controller, as upstream's
// "recreate evicted statefulset" conformance spec expects).

import { parseQuantity } from "../../api/core/quantity.js";
import type { Container, Pod } from "../../api/core/types.js";

export interface Rejection {
  reason: string;
  message: string;
}

/** Upstream's effective request: max(any init container, sum of containers) + overhead, per resource. */
export function podRequests(pod: Pod): Map<string, number> {
  const sum = new Map<string, number>();
  const add = (m: Map<string, number>, c: Container) => {
    for (const [name, q] of Object.entries(c.resources?.requests ?? {})) m.set(name, (m.get(name) ?? 0) + (parseQuantity(q) ?? 0));
  };
  for (const c of pod.spec?.containers ?? []) add(sum, c);
  for (const c of pod.spec?.initContainers ?? []) {
    const one = new Map<string, number>();
    add(one, c);
    for (const [name, v] of one) sum.set(name, Math.max(sum.get(name) ?? 0, v));
  }
  for (const [name, q] of Object.entries(pod.spec?.overhead ?? {})) sum.set(name, (sum.get(name) ?? 0) + (parseQuantity(q) ?? 0));
  return sum;
}

const format = (resource: string, v: number): string => (resource === "cpu" ? `${Math.round(v * 1000)}m` : String(Math.round(v)));

/** Whether `pod` fits next to `active` pods on a node with `allocatable` (numbers: cores, bytes, pods). */
export function admitPod(pod: Pod, active: readonly Pod[], allocatable: ReadonlyMap<string, number>): Rejection | undefined {
  const capacityPods = allocatable.get("pods") ?? Infinity;
  if (active.length + 1 > capacityPods) {
    return { reason: "OutOfpods", message: `Node didn't have enough resource: pods, requested: 1, used: ${active.length}, capacity: ${capacityPods}` };
  }
  const requested = podRequests(pod);
  for (const [resource, want] of requested) {
    if (want <= 0 || !allocatable.has(resource) || resource === "pods") continue;
    const used = active.reduce((sum, p) => sum + (podRequests(p).get(resource) ?? 0), 0);
    const capacity = allocatable.get(resource)!;
    if (used + want > capacity) {
      return {
        reason: `OutOf${resource}`,
        message: `Node didn't have enough resource: ${resource}, requested: ${format(resource, want)}, used: ${format(resource, used)}, capacity: ${format(resource, capacity)}`,
      };
    }
  }
  if (hostPortsTaken(pod, active)) return { reason: "NodePorts", message: "Predicate NodePorts failed" };
  return undefined;
}

/** A container port bound on the node: protocol, host IP (0.0.0.0: every address) and port. */
interface HostPort {
  protocol: string;
  ip: string;
  port: number;
}

function hostPortsOf(pod: Pod): HostPort[] {
  const ports: HostPort[] = [];
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort || p.hostPort <= 0) continue;
      ports.push({ protocol: p.protocol || "TCP", ip: p.hostIP || "0.0.0.0", port: p.hostPort });
    }
  }
  return ports;
}

/** Upstream's NodePorts filter: the same protocol and port on the same address, or either on every address. */
function hostPortsTaken(pod: Pod, active: readonly Pod[]): boolean {
  const wanted = hostPortsOf(pod);
  if (wanted.length === 0) return false;
  const used = active.flatMap(hostPortsOf);
  return wanted.some((w) => used.some((u) => u.protocol === w.protocol && u.port === w.port && (u.ip === w.ip || u.ip === "0.0.0.0" || w.ip === "0.0.0.0")));
}

/** Upstream's rejection when devices cannot be allocated at admission (cm/admission's UnexpectedAdmissionError). */
export function allocationRejection(error: string): Rejection {
  return { reason: "UnexpectedAdmissionError", message: `Allocate failed due to ${error}, which is unexpected` };
}

/** What admission asks of the device manager (devices/device-manager.ts). */
export interface DeviceAdmission {
  /** Whether the pod asks for a resource a device plugin serves. */
  needsDevices(pod: Pod): boolean;
  /** Allocates the devices of every container; resolves with the error text when they cannot be. */
  admit(pod: Pod): Promise<string | undefined>;
  /** An admitted pod's worker runs now (or the pod went away first): the active pods speak for it from now on. */
  settled(uid: string): void;
}
