// Test support: a ClusterView over NodeInfos built from Node and Pod objects,
// and a one-call filter helper for plugin unit tests. Test code only.

import type { Node, Pod } from "../../api/core/types.js";
import type { ClusterView, FilterPlugin, PreFilterPlugin, Status } from "../framework/interface.js";
import { NodeInfo } from "../framework/node-info.js";
import { PodInfo } from "../framework/pod-info.js";

export function nodeInfo(node: Node, pods: Pod[] = []): NodeInfo {
  const n = new NodeInfo(node.metadata.name!, node);
  for (const p of pods) n.addPod(new PodInfo({ ...p, spec: { ...p.spec, nodeName: node.metadata.name! } }));
  return n;
}

export function cluster(nodes: NodeInfo[]): ClusterView {
  return { nodes, nodesWithRequiredAntiAffinity: nodes.filter((n) => n.podsWithRequiredAntiAffinity.size > 0), get: (name) => nodes.find((n) => n.name === name) };
}

/** PreFilter (when the plugin has one) then Filter on each node: the status per node name ("skip" when PreFilter opted out). */
export function filterAll(plugin: FilterPlugin & Partial<PreFilterPlugin>, pod: Pod, nodes: NodeInfo[]): Record<string, Status | undefined | "skip"> {
  const state = new Map<string, unknown>();
  const pi = new PodInfo(pod);
  const pre = plugin.preFilter?.(state, pi, cluster(nodes));
  const out: Record<string, Status | undefined | "skip"> = {};
  for (const n of nodes) out[n.name] = pre === "skip" ? "skip" : pre !== undefined ? pre : plugin.filter(state, pi, n);
  return out;
}

/** The reasons per node, "fits" when it passes, "skip" when PreFilter opted out. */
export function reasons(plugin: FilterPlugin & Partial<PreFilterPlugin>, pod: Pod, nodes: NodeInfo[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, s] of Object.entries(filterAll(plugin, pod, nodes))) out[name] = s === undefined ? "fits" : s === "skip" ? "skip" : `${s.code}: ${s.reasons.join("; ")}`;
  return out;
}
