// The core API group ("" / v1): its schemas (with meta/v1) and resource
// declarations, plus the pod-spec helpers other groups' templates reuse.

import type { Naming } from "../../machinery/naming.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { configMapsResource } from "./configmaps.js";
import { endpointsResource } from "./endpoints.js";
import { eventsResource } from "./events.js";
import { namespacesResource } from "./namespaces.js";
import { nodesResource } from "./nodes.js";
import { podsResource } from "./pods.js";
import { registerCoreSchemas } from "./schemas.js";
import { secretsResource } from "./secrets.js";
import { serviceAccountsResource } from "./serviceaccounts.js";
import { servicesResource } from "./services.js";
import { TOKEN_REQUEST_TYPES } from "../authentication/token-request.js";

export { CORE_V1, registerCoreSchemas, listOf } from "./schemas.js";
export { defaultPodSpec, defaultPullPolicy } from "./pod-defaults.js";
export { validatePodSpec, validatePodSpecUpdate, validateTolerations, type PodSpecValidationOptions } from "./pod-validation.js";
export { podQOSClass, bindPod } from "./pods.js";
export { podStatusCells } from "./pod-table.js";
export { NAMESPACE_FINALIZER } from "./namespaces.js";
export type * from "./types.js";

export const coreModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registerCoreSchemas(registry);
    registry.add(...TOKEN_REQUEST_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    return [
      namespacesResource(naming),
      podsResource(naming),
      nodesResource(naming),
      servicesResource(),
      endpointsResource(),
      configMapsResource(),
      secretsResource(naming),
      serviceAccountsResource(naming),
      eventsResource(naming),
    ];
  },
};
