// PodInfo: a pod with what every scheduling cycle asks of it computed once
// (requests, host ports, parsed affinity terms, priority), so the filters on
// the hot path read fields instead of walking the spec again per node.

import type { Pod } from "../../api/core/types.js";
import { keyOf } from "../../client/index.js";
import { selectorFromLabelSelector, type LabelSelector, type Selector } from "../../machinery/index.js";
import { nonZeroRequests, podResources, type Resources } from "./resources.js";

export interface HostPort {
  ip: string;
  protocol: string;
  port: number;
}

/** A required (anti-)affinity term: pods matching `selector` in `namespaces` (null: every namespace) within the same `topologyKey` domain. */
export interface AffinityTerm {
  selector: Selector;
  namespaces: ReadonlySet<string> | null;
  topologyKey: string;
}

interface RawTerm {
  labelSelector?: LabelSelector | null;
  namespaces?: string[] | null;
  namespaceSelector?: LabelSelector | null;
  topologyKey?: string;
  matchLabelKeys?: string[] | null;
}

export class PodInfo {
  readonly key: string;
  readonly pod: Pod;
  readonly priority: number;
  readonly requests: Resources;
  readonly nonZeroCpu: number;
  readonly nonZeroMemory: number;
  readonly hostPorts: readonly HostPort[];
  readonly requiredAffinity: readonly AffinityTerm[];
  readonly requiredAntiAffinity: readonly AffinityTerm[];

  constructor(pod: Pod) {
    this.pod = pod;
    this.key = keyOf(pod);
    this.priority = pod.spec?.priority ?? 0;
    this.requests = podResources(pod);
    const nz = nonZeroRequests(pod);
    this.nonZeroCpu = nz.milliCpu;
    this.nonZeroMemory = nz.memory;
    this.hostPorts = hostPortsOf(pod);
    const affinity = (pod.spec?.affinity ?? {}) as {
      podAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: RawTerm[] | null } | null;
      podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: RawTerm[] | null } | null;
    };
    this.requiredAffinity = termsOf(pod, affinity.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution);
    this.requiredAntiAffinity = termsOf(pod, affinity.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution);
  }

  get namespace(): string {
    return this.pod.metadata.namespace ?? "";
  }

  get labels(): Readonly<Record<string, string>> {
    return this.pod.metadata.labels ?? {};
  }
}

function hostPortsOf(pod: Pod): HostPort[] {
  const out: HostPort[] = [];
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []).filter((c) => c?.restartPolicy === "Always")];
  for (const c of containers) {
    for (const p of c?.ports ?? []) {
      if (!p?.hostPort) continue;
      out.push({ ip: p.hostIP || "0.0.0.0", protocol: p.protocol || "TCP", port: p.hostPort });
    }
  }
  return out;
}

function termsOf(pod: Pod, raw: RawTerm[] | null | undefined): AffinityTerm[] {
  return (raw ?? []).map((t) => {
    let selector: Selector;
    try {
      // matchLabelKeys: the incoming pod's values for those keys join the selector (upstream's MatchLabelKeysInPodAffinity).
      const extra = (t.matchLabelKeys ?? []).filter((k) => pod.metadata.labels?.[k] !== undefined);
      const ls: LabelSelector = {
        matchLabels: { ...(t.labelSelector?.matchLabels ?? {}), ...Object.fromEntries(extra.map((k) => [k, pod.metadata.labels![k]!])) },
        matchExpressions: t.labelSelector?.matchExpressions ?? [],
      };
      // A null labelSelector matches no pods (upstream).
      selector = t.labelSelector == null ? selectorFromLabelSelector(null) : selectorFromLabelSelector(ls);
    } catch {
      selector = selectorFromLabelSelector(null);
    }
    // An empty namespaceSelector ({}) means every namespace; other namespace selectors are not evaluated (no namespace labels cached).
    const all = t.namespaceSelector != null && !t.namespaceSelector.matchLabels && !(t.namespaceSelector.matchExpressions ?? []).length;
    const names = t.namespaces ?? [];
    const namespaces = all ? null : new Set(names.length > 0 ? names : [pod.metadata.namespace ?? ""]);
    return { selector, namespaces, topologyKey: t.topologyKey ?? "" };
  });
}

/** Whether `pod` matches `term` (namespace and labels). */
export function termMatches(term: AffinityTerm, pod: PodInfo): boolean {
  return (term.namespaces === null || term.namespaces.has(pod.namespace)) && term.selector.matches(pod.labels);
}
