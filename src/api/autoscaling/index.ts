// The autoscaling/v1 group as far as orch serves it: only the Scale type,
// which the scale subresources of deployments, replicasets and statefulsets
// speak. It has no resource of its own.

import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { AUTOSCALING_TYPES } from "./schemas.js";

export { AUTOSCALING_TYPES, AUTOSCALING_V1 } from "./schemas.js";
export type { Scale } from "./schemas.js";

export const autoscalingModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...AUTOSCALING_TYPES);
  },
  resources(): ResourceDefinition[] {
    return [];
  },
};

export default autoscalingModule;
