// The scheduling.<suffix> API group: PriorityClasses (v1), which give pods
// their spec.priority and decide who may preempt whom.

import type { Naming } from "../../machinery/naming.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { priorityClasses } from "./priority-classes.js";
import { SCHEDULING_TYPES } from "./schemas.js";

export { SCHEDULING_TYPES, SCHEDULING_V1 } from "./schemas.js";
export { HIGHEST_USER_DEFINABLE_PRIORITY, SYSTEM_CRITICAL_PRIORITY, SYSTEM_PRIORITY_CLASSES } from "./priority-classes.js";
export type { PriorityClass } from "./types.js";

export const schedulingModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...SCHEDULING_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [priorityClasses(naming)];
  },
};

export default schedulingModule;
