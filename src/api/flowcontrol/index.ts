// The flowcontrol.apiserver.<suffix> API group (v1, and v1beta3 with the same
// fields): FlowSchemas and PriorityLevelConfigurations, stored and validated,
// with upstream's bootstrap objects. Requests are not classified by them.

import type { Naming } from "../../machinery/naming.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import { flowSchemas, priorityLevelConfigurations } from "./resources.js";
import { FLOWCONTROL_TYPES } from "./schemas.js";

export { FLOWCONTROL_TYPES, FLOWCONTROL_V1 } from "./schemas.js";
export { autoUpdateAnnotation, bootstrapObjects } from "./bootstrap.js";
export type * from "./types.js";

export const flowcontrolModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...FLOWCONTROL_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [flowSchemas(naming), priorityLevelConfigurations(naming)];
  },
};

export default flowcontrolModule;
