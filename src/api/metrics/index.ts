// The resource metrics API, metrics.k8s.io/v1beta1 (NodeMetrics, PodMetrics),
// as metrics-server serves it: read-only (get, list), never stored. The API
// server answers it from the node agents' /metrics/resource (apiserver's
// metrics-api). kubectl top and the HPA controller ask for the group by
// upstream's name, so it keeps that name on both naming profiles.

import type { ApiObject } from "../../machinery/index.js";
import { f, s, type, type TypeDef, type SchemaRegistry } from "../../machinery/schema.js";
import { META_V1 } from "../meta/schemas.js";
import { defineResource, type ApiGroupModule, type ResourceDefinition, type TableColumn } from "../resource.js";

export const METRICS_GROUP = "metrics.k8s.io";
export const METRICS_VERSION = "v1beta1";
const M = "io.k8s.metrics.pkg.apis.metrics.v1beta1";

export const METRICS_TYPES: readonly TypeDef[] = [
  type(`${M}.NodeMetrics`, "The resource usage of a node.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "The node's name and labels."),
    timestamp: f(2, s.time(), "The end of the interval the usage was measured over.", { required: true }),
    window: f(3, s.string(), "The length of that interval (a duration: `15.2s`).", { required: true }),
    usage: f(4, s.map(s.quantity()), "cpu (cores) and memory (working set, bytes).", { required: true }),
  }),
  type(`${M}.PodMetrics`, "The resource usage of a pod's containers.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "The pod's name, namespace and labels."),
    timestamp: f(2, s.time(), "The end of the interval the usage was measured over.", { required: true }),
    window: f(3, s.string(), "The length of that interval.", { required: true }),
    containers: f(4, s.array(s.ref(`${M}.ContainerMetrics`)), "Each container's usage.", { required: true }),
  }),
  type(`${M}.ContainerMetrics`, "The resource usage of one container.", {
    name: f(1, s.string(), "The container's name.", { required: true }),
    usage: f(2, s.map(s.quantity()), "cpu (cores) and memory (working set, bytes).", { required: true }),
  }),
  type(`${M}.NodeMetricsList`, "A list of NodeMetrics.", {
    metadata: f(1, s.ref(`${META_V1}.ListMeta`), "Standard list metadata."),
    items: f(2, s.array(s.ref(`${M}.NodeMetrics`)), "The NodeMetrics objects.", { required: true }),
  }),
  type(`${M}.PodMetricsList`, "A list of PodMetrics.", {
    metadata: f(1, s.ref(`${META_V1}.ListMeta`), "Standard list metadata."),
    items: f(2, s.array(s.ref(`${M}.PodMetrics`)), "The PodMetrics objects.", { required: true }),
  }),
];

export interface NodeMetrics extends ApiObject {
  timestamp: string;
  window: string;
  usage: { cpu: string; memory: string };
}

export interface ContainerMetrics {
  name: string;
  usage: { cpu: string; memory: string };
}

export interface PodMetrics extends ApiObject {
  timestamp: string;
  window: string;
  containers: ContainerMetrics[];
}

// metrics-server's columns: Name, CPU, Memory, Window.
const column = (name: string, description: string): TableColumn => ({ name, type: "string", description, priority: 0 });
const COLUMNS: readonly TableColumn[] = [
  { name: "Name", type: "string", format: "name", description: "Name must be unique within a namespace.", priority: 0 },
  column("CPU", "CPU usage"),
  column("Memory", "Memory usage"),
  column("Window", "Interval the usage was measured over"),
];

/** Sums a list of quantities this API writes (`123n` nanocores, `456Ki`). */
function sumUsage(list: readonly { cpu: string; memory: string }[]): { cpu: string; memory: string } {
  const n = (q: string, suffix: string): number => Number(q.endsWith(suffix) ? q.slice(0, -suffix.length) : q);
  return {
    cpu: `${list.reduce((a, u) => a + n(u.cpu, "n"), 0)}n`,
    memory: `${list.reduce((a, u) => a + n(u.memory, "Ki"), 0)}Ki`,
  };
}

export function nodeMetricsResource(): ResourceDefinition {
  return defineResource<NodeMetrics>({
    group: METRICS_GROUP,
    versions: [METRICS_VERSION],
    resource: "nodes",
    singular: "",
    kind: "NodeMetrics",
    namespaced: false,
    verbs: ["get", "list"],
    schema: `${M}.NodeMetrics`,
    protobuf: false,
    table: { columns: COLUMNS, cells: (m) => [m.metadata.name ?? "", m.usage.cpu, m.usage.memory, m.window] },
  });
}

export function podMetricsResource(): ResourceDefinition {
  return defineResource<PodMetrics>({
    group: METRICS_GROUP,
    versions: [METRICS_VERSION],
    resource: "pods",
    singular: "",
    kind: "PodMetrics",
    namespaced: true,
    verbs: ["get", "list"],
    schema: `${M}.PodMetrics`,
    protobuf: false,
    table: {
      columns: COLUMNS,
      cells: (m) => {
        const total = sumUsage(m.containers.map((c) => c.usage));
        return [m.metadata.name ?? "", total.cpu, total.memory, m.window];
      },
    },
  });
}

export const metricsModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...METRICS_TYPES);
  },
  resources(): ResourceDefinition[] {
    return [nodeMetricsResource(), podMetricsResource()];
  },
};

export default metricsModule;
