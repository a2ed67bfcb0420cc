// The policy/v1 API group: PodDisruptionBudgets, which bound voluntary
// disruptions (the scheduler's preemption respects them).

import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { podDisruptionBudgets } from "./pod-disruption-budgets.js";
import { POLICY_TYPES } from "./schemas.js";

export { POLICY_TYPES, POLICY_V1 } from "./schemas.js";
export type { PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus } from "./types.js";

export const policyModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...POLICY_TYPES);
  },
  resources(): ResourceDefinition[] {
    return [podDisruptionBudgets];
  },
};

export default policyModule;
