// The apiregistration.<suffix>/v1 API group: APIServices, the registry of
// which server answers each group version (the aggregation layer).

import type { Naming } from "../../machinery/naming.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import { apiServices } from "./apiservices.js";
import { APIREGISTRATION_TYPES } from "./schemas.js";

export { APIREGISTRATION_TYPES, APIREGISTRATION_V1 } from "./schemas.js";
export { availableCondition, type APIService, type APIServiceCondition, type APIServiceSpec, type ServiceReference } from "./apiservices.js";

/** The label on the APIServices the API server keeps itself (upstream's kube-aggregator.kubernetes.io/automanaged). */
export function automanagedLabel(naming: Naming): string {
  const product = naming.systemNamespace.slice(0, -"-system".length);
  return `${product}-aggregator.${naming.keyDomain}/automanaged`;
}

export const apiregistrationModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...APIREGISTRATION_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [apiServices(naming)];
  },
};

export default apiregistrationModule;
