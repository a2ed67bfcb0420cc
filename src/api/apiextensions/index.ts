// The apiextensions.<suffix>/v1 API group: CustomResourceDefinitions, and
// what the API server needs to serve their kinds (./custom-resource.ts).

import type { Naming } from "../../machinery/naming.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import { customResourceDefinitions } from "./crds.js";
import { APIEXTENSIONS_TYPES } from "./schemas.js";

export { APIEXTENSIONS_V1 } from "./schemas.js";
export { cleanupFinalizer, conditionOf, customResourceDefinitions, setCondition } from "./crds.js";
export { customResource, customResourceTypes, servedVersions } from "./custom-resource.js";
export type * from "./types.js";

export const apiextensionsModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...APIEXTENSIONS_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [customResourceDefinitions(naming)];
  },
};

export default apiextensionsModule;
