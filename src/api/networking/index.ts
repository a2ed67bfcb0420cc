// The networking.<suffix> API group (v1): Ingresses, IngressClasses and
// NetworkPolicies (stored and validated; traffic is left to an ingress
// controller and a network plugin, orch enforces neither), and IPAddresses
// and ServiceCIDRs (kept by the API server's service allocator).

import type { Naming } from "../../machinery/naming.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import { ingressClasses } from "./ingress-classes.js";
import { ingresses } from "./ingresses.js";
import { ipAddresses } from "./ip-addresses.js";
import { serviceCIDRs } from "./service-cidrs.js";
import { networkPolicies } from "./network-policies.js";
import { NETWORKING_TYPES } from "./schemas.js";

export { NETWORKING_TYPES, NETWORKING_V1 } from "./schemas.js";
export { defaultIngressClassAnnotation } from "./ingress-classes.js";
export { ipAddressManagedByLabel, ipAllocatorName, parentRefText } from "./ip-addresses.js";
export { DEFAULT_SERVICE_CIDR, serviceCIDRFinalizer } from "./service-cidrs.js";
export type * from "./types.js";

export const networkingModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...NETWORKING_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [ingresses(naming), ingressClasses(naming), networkPolicies(naming), ipAddresses(naming), serviceCIDRs(naming)];
  },
};

export default networkingModule;
