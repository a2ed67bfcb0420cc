// The node.<suffix> API group (v1): RuntimeClasses.

import type { Naming } from "../../machinery/naming.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import { runtimeClasses } from "./runtime-classes.js";
import { NODE_TYPES } from "./schemas.js";

export { NODE_TYPES, NODE_V1 } from "./schemas.js";
export type { RuntimeClass } from "./runtime-classes.js";

export const nodeModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...NODE_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [runtimeClasses(naming)];
  },
};

export default nodeModule;
