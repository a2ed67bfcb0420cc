// The discovery.<suffix> API group: EndpointSlices (v1), which the
// endpointslice controller writes for every Service with a selector.

import type { Naming } from "../../machinery/naming.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { endpointSlicesResource } from "./endpointslices.js";
import { DISCOVERY_TYPES } from "./schemas.js";

export { DISCOVERY_TYPES, DISCOVERY_V1 } from "./schemas.js";
export { validateEndpointSlice, formatSlicePorts, formatSliceEndpoints } from "./endpointslices.js";
export type { EndpointSlice, Endpoint, EndpointPort, EndpointConditions } from "./types.js";
export { endpointSliceLabels, type EndpointSliceLabels } from "./labels.js";

export const discoveryModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...DISCOVERY_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [endpointSlicesResource(naming)];
  },
};

export default discoveryModule;
