// componentstatuses (core/v1, cluster-scoped, short name `cs`, read only):
// the health of the control plane's parts as `kubectl get cs` shows it
// (controller-manager, scheduler, etcd-0). Clients may only get and list; the
// API server keeps the objects current itself (src/apiserver/component-statuses.ts).
// Upstream deprecated the kind in v1.19 and still serves it; so do we.

import type { ApiObject } from "../../machinery/index.js";
import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1 } from "../meta/schemas.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { CORE_V1, listOf } from "./schemas.js";

export interface ComponentCondition {
  type?: string;
  status?: string;
  message?: string;
  error?: string;
}

export interface ComponentStatus extends ApiObject {
  conditions?: ComponentCondition[] | null;
}

export const COMPONENT_STATUS_TYPES: readonly TypeDef[] = [
  type(`${CORE_V1}.ComponentStatus`, "The health of one part of the control plane (deprecated upstream in v1.19).", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata; the name is the component's."),
    conditions: f(2, s.array(s.ref(`${CORE_V1}.ComponentCondition`), { listType: "map", listMapKeys: ["type"] }), "Observations of the component's health.", {
      patchStrategy: "merge",
      patchMergeKey: "type",
    }),
  }),
  type(`${CORE_V1}.ComponentCondition`, "One observation of a component's health.", {
    type: f(1, s.string(), "Healthy.", { required: true }),
    status: f(2, s.string(), "True, False or Unknown.", { required: true }),
    message: f(3, s.string(), "What the health check answered."),
    error: f(4, s.string(), "Why the health check failed."),
  }),
  listOf(CORE_V1, "ComponentStatus", "A list of ComponentStatuses."),
];

/** upstream's printComponentStatus: Healthy when a Healthy condition is True, else Unhealthy; the first message and error. */
function cells(cs: ComponentStatus): string[] {
  let status = "Unknown";
  let message = "";
  let error = "";
  for (const c of cs.conditions ?? []) {
    if (c.type !== "Healthy") continue;
    status = c.status === "True" ? "Healthy" : "Unhealthy";
    message = c.message ?? "";
    error = c.error ?? "";
    break;
  }
  return [cs.metadata.name ?? "", status, message, error];
}

export function componentStatusesResource(): ResourceDefinition {
  return defineResource<ComponentStatus>({
    group: "",
    versions: ["v1"],
    resource: "componentstatuses",
    singular: "componentstatus",
    kind: "ComponentStatus",
    namespaced: false,
    shortNames: ["cs"],
    verbs: ["get", "list"],
    schema: `${CORE_V1}.ComponentStatus`,
    table: {
      columns: [
        { name: "Name", type: "string", format: "name", description: "Name must be unique within a namespace.", priority: 0 },
        { name: "Status", type: "string", description: "Status of the component conditions", priority: 0 },
        { name: "Message", type: "string", description: "Message of the component conditions", priority: 0 },
        { name: "Error", type: "string", description: "Error of the component conditions", priority: 0 },
      ],
      cells,
    },
  });
}
