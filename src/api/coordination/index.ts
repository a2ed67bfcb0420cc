// The coordination.<suffix> API group: Leases, served as v1 (preferred and
// stored) and v1beta1 from one storage. Registers the Lease types of both.

import type { Naming } from "../../machinery/naming.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { leases } from "./leases.js";
import { COORDINATION_TYPES } from "./schemas.js";

export { COORDINATION_TYPES, COORDINATION_V1, COORDINATION_V1BETA1 } from "./schemas.js";
export type { Lease, LeaseSpec } from "./types.js";

export const coordinationModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...COORDINATION_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [leases(naming)];
  },
};

export default coordinationModule;
