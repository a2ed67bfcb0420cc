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
import { registerPersistentVolumeSchemas } from "./persistent-volume-schemas.js";
import { persistentVolumeClaimsResource, persistentVolumesResource } from "./persistent-volumes.js";
import { secretsResource } from "./secrets.js";
import { serviceAccountsResource } from "./serviceaccounts.js";
import { servicesResource } from "./services.js";
import { TOKEN_REQUEST_TYPES } from "../authentication/token-request.js";
import { CORE_V1, registerCoreSchemas } from "./schemas.js";
import { POD_TEMPLATE_TYPES, podTemplatesResource } from "./pod-templates.js";
import { REPLICATION_CONTROLLER_TYPES, replicationControllersResource } from "./replication-controllers.js";
import { LIMIT_RANGE_TYPES, limitRangesResource } from "./limit-ranges.js";
import { RESOURCE_QUOTA_TYPES, resourceQuotasResource } from "./resource-quotas.js";
import { COMPONENT_STATUS_TYPES, componentStatusesResource } from "./component-statuses.js";
import { bindingsResource } from "./bindings.js";

export { CORE_V1, registerCoreSchemas, listOf } from "./schemas.js";
export { defaultPodSpec, defaultPullPolicy } from "./pod-defaults.js";
export { validatePodSpec, validatePodSpecUpdate, validateTolerations, type PodSpecValidationOptions } from "./pod-validation.js";
export { podQOSClass, bindPod } from "./pods.js";
export { BINDINGS } from "./bindings.js";
export { podStatusCells } from "./pod-table.js";
export { NAMESPACE_FINALIZER } from "./namespaces.js";
export type * from "./types.js";
export type * from "./persistent-volume-types.js";
export { ACCESS_MODES, accessModesString, claimRequest, localVolumePath, volumeReachableFrom, validateClaimSpec } from "./persistent-volumes.js";
export { findMatchingVolume, volumeFits, volumeRefersTo, describeClaim } from "./persistent-volume-matching.js";
export { PERSISTENT_VOLUME_TYPES, registerPersistentVolumeSchemas } from "./persistent-volume-schemas.js";
export type { ReplicationController, ReplicationControllerStatus } from "./replication-controllers.js";
export type { LimitRange, LimitRangeItem } from "./limit-ranges.js";
export type { ResourceQuota, ResourceQuotaSpec } from "./resource-quotas.js";
export type { PodTemplate } from "./pod-templates.js";
export type { ComponentStatus, ComponentCondition } from "./component-statuses.js";

export const coreModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registerCoreSchemas(registry);
    registerPersistentVolumeSchemas(registry);
    registry.add(...TOKEN_REQUEST_TYPES);
    if (registry.get(`${CORE_V1}.ReplicationController`) === undefined) {
      registry.add(...REPLICATION_CONTROLLER_TYPES, ...POD_TEMPLATE_TYPES, ...LIMIT_RANGE_TYPES, ...RESOURCE_QUOTA_TYPES, ...COMPONENT_STATUS_TYPES);
    }
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
      persistentVolumesResource(),
      persistentVolumeClaimsResource(),
      replicationControllersResource(),
      podTemplatesResource(),
      limitRangesResource(),
      resourceQuotasResource(),
      componentStatusesResource(),
      bindingsResource(),
    ];
  },
};
