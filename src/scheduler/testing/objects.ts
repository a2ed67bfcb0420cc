// Test and benchmark support: Node and Pod objects the way a node agent (or
// kwok) would register and a user would create them. Test code only.

import type { Node, Pod } from "../../api/core/types.js";
import { namingFor } from "../../machinery/naming.js";

const HOSTNAME_LABEL = `${namingFor().keyDomain}/hostname`;

export interface NodeShape {
  cpu?: string;
  memory?: string;
  pods?: string;
  labels?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
  unschedulable?: boolean;
  extended?: Record<string, string>;
}

export function makeNode(name: string, shape: NodeShape = {}): Node {
  const capacity = { cpu: shape.cpu ?? "4", memory: shape.memory ?? "8Gi", pods: shape.pods ?? "110", ...(shape.extended ?? {}) };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels: { [HOSTNAME_LABEL]: name, ...(shape.labels ?? {}) } },
    spec: { ...(shape.taints ? { taints: shape.taints } : {}), ...(shape.unschedulable ? { unschedulable: true } : {}) },
    status: {
      capacity,
      allocatable: capacity,
      conditions: [{ type: "Ready", status: "True", reason: "NodeAgentReady", message: "nodeagent is posting ready status" }],
    },
  };
}

export interface PodShape {
  namespace?: string;
  cpu?: string;
  memory?: string;
  labels?: Record<string, string>;
  spec?: Record<string, unknown>;
  requests?: Record<string, string>;
}

export function makePod(name: string, shape: PodShape = {}): Pod {
  const requests = { ...(shape.cpu ? { cpu: shape.cpu } : {}), ...(shape.memory ? { memory: shape.memory } : {}), ...(shape.requests ?? {}) };
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: shape.namespace ?? "default", ...(shape.labels ? { labels: shape.labels } : {}) },
    spec: {
      containers: [{ name: "app", image: "registry.example/app:1", ...(Object.keys(requests).length > 0 ? { resources: { requests } } : {}) }],
      ...(shape.spec ?? {}),
    },
  };
}
