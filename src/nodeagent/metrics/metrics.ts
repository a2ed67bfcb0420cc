// The agent's own metrics on the component registry, upstream's kubelet
// families with the agent's name (naming table): node name, running pods,
// PLEG relist duration and pod start duration (first seen → running).

import type { Naming } from "../../machinery/naming.js";
import { exponentialBuckets, type MetricsRegistry } from "../../component/metrics/index.js";

export interface AgentMetrics {
  relisted(seconds: number): void;
  runningPods(n: number): void;
  podStarted(seconds: number): void;
}

export const NO_METRICS: AgentMetrics = { relisted: () => {}, runningPods: () => {}, podStarted: () => {} };

export function agentMetrics(registry: MetricsRegistry | undefined, naming: Naming, nodeName: string): AgentMetrics {
  if (!registry) return NO_METRICS;
  const p = naming.agentName;
  registry.gauge({ name: `${p}_node_name`, help: "The node's name. The count is always 1.", labelNames: ["node"], stabilityLevel: "ALPHA" }).set({ node: nodeName }, 1);
  const relist = registry.histogram({ name: `${p}_pleg_relist_duration_seconds`, help: "Duration in seconds for relisting pods in PLEG.", buckets: exponentialBuckets(0.001, 2, 15) });
  const running = registry.gauge({ name: `${p}_running_pods`, help: "Number of pods that have a running pod sandbox." });
  const start = registry.histogram({ name: `${p}_pod_start_duration_seconds`, help: "Duration in seconds from the agent seeing a pod for the first time to the pod starting to run.", buckets: [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600] });
  return {
    relisted: (s) => relist.observe({}, s),
    runningPods: (n) => running.set({}, n),
    podStarted: (s) => start.observe({}, s),
  };
}
