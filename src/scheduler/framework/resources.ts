// A pod's resource requests as the scheduler counts them (upstream's
// resource helpers): per resource, the larger of the sum over containers and
// the largest init container, plus the pod overhead; cpu in millicores, the
// rest in their base unit. Non-zero requests (100m cpu, 200 MiB memory for
// containers that ask for nothing) are what scoring uses, as upstream.

import { parseQuantity } from "../../api/core/quantity.js";
import type { Node, Pod, Quantities } from "../../api/core/types.js";

export type Resources = Map<string, number>;

export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

/** The number a quantity counts as: millicores for cpu (rounded up, as MilliValue), the value otherwise. */
export function quantityValue(resource: string, q: unknown): number {
  const v = parseQuantity(q) ?? 0;
  return resource === "cpu" ? Math.ceil(Math.round(v * 1e9) / 1e6) : Math.ceil(v);
}

export function toResources(quantities: Quantities | null | undefined): Resources {
  const out: Resources = new Map();
  for (const [name, q] of Object.entries(quantities ?? {})) out.set(name, quantityValue(name, q));
  return out;
}

function addInto(into: Resources, from: Resources): void {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v);
}

function maxInto(into: Resources, from: Resources): void {
  for (const [k, v] of from) if (v > (into.get(k) ?? 0)) into.set(k, v);
}

/** Requests (or limits) of the whole pod, as upstream's PodRequests / PodLimits. */
export function podResources(pod: Pod, kind: "requests" | "limits" = "requests"): Resources {
  const spec = pod.spec ?? {};
  const total: Resources = new Map();
  for (const c of spec.containers ?? []) addInto(total, toResources(c?.resources?.[kind] as Quantities | undefined));
  // Restartable (sidecar) init containers run beside the app containers; the others one at a time before them.
  let sidecars: Resources = new Map();
  const initMax: Resources = new Map();
  for (const c of spec.initContainers ?? []) {
    const r = toResources(c?.resources?.[kind] as Quantities | undefined);
    if (c?.restartPolicy === "Always") {
      addInto(total, r);
      const next = new Map(sidecars);
      addInto(next, r);
      sidecars = next;
    } else {
      const withSidecars = new Map(sidecars);
      addInto(withSidecars, r);
      maxInto(initMax, withSidecars);
    }
  }
  maxInto(total, initMax);
  if (kind === "requests") addInto(total, toResources(spec.overhead));
  return total;
}

/** cpu and memory with upstream's non-zero defaults for containers that request neither. */
export function nonZeroRequests(pod: Pod): { milliCpu: number; memory: number } {
  let milliCpu = 0;
  let memory = 0;
  for (const c of pod.spec?.containers ?? []) {
    const r = (c?.resources?.requests ?? {}) as Quantities;
    milliCpu += r["cpu"] !== undefined ? quantityValue("cpu", r["cpu"]) : DEFAULT_MILLI_CPU_REQUEST;
    memory += r["memory"] !== undefined ? quantityValue("memory", r["memory"]) : DEFAULT_MEMORY_REQUEST;
  }
  const overhead = toResources(pod.spec?.overhead);
  return { milliCpu: milliCpu + (overhead.get("cpu") ?? 0), memory: memory + (overhead.get("memory") ?? 0) };
}

/** What pods may use: status.allocatable, or capacity when unset. */
export function nodeAllocatable(node: Node): Resources {
  return toResources(node.status?.allocatable ?? node.status?.capacity);
}
