// The autoscaling group: the v1 Scale type, which the scale subresources of
// deployments, replicasets and statefulsets speak, and the v2
// HorizontalPodAutoscaler, also served as autoscaling/v1 (v2 preferred and
// stored; v1 converted through it, ./hpa-v1.ts and ../versions.ts).

import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import type { Naming } from "../../machinery/naming.js";
import { AUTOSCALING_TYPES } from "./schemas.js";
import { HPA_TYPES, horizontalPodAutoscalers } from "./horizontalpodautoscalers.js";
import { HPA_V1_TYPES, hpaV1 } from "./hpa-v1.js";
import { servedAtVersions } from "../versions.js";

export { AUTOSCALING_TYPES, AUTOSCALING_V1 } from "./schemas.js";
export type { Scale } from "./schemas.js";
export { AUTOSCALING_V2, HPA_TYPES, defaultScaleDown, defaultScaleUp, type HorizontalPodAutoscaler, type HorizontalPodAutoscalerCondition, type HPAScalingRules, type MetricSpec, type MetricStatus } from "./horizontalpodautoscalers.js";

export const autoscalingModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...AUTOSCALING_TYPES, ...HPA_TYPES, ...HPA_V1_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [servedAtVersions(horizontalPodAutoscalers, { v1: hpaV1(naming.keyDomain) })];
  },
};

export default autoscalingModule;
