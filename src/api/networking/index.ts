// The networking.<suffix> API group (v1): Ingresses, IngressClasses and
// NetworkPolicies. Stored and validated; traffic is left to an ingress
// controller and a network plugin (orch enforces neither).

import type { Naming } from "../../machinery/naming.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import { ingressClasses } from "./ingress-classes.js";
import { ingresses } from "./ingresses.js";
import { networkPolicies } from "./network-policies.js";
import { NETWORKING_TYPES } from "./schemas.js";

export { NETWORKING_TYPES, NETWORKING_V1 } from "./schemas.js";
export { defaultIngressClassAnnotation } from "./ingress-classes.js";
export type * from "./types.js";

export const networkingModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...NETWORKING_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [ingresses(naming), ingressClasses(naming), networkPolicies(naming)];
  },
};

export default networkingModule;
