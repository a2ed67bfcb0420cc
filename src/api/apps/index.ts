// The apps/v1 API group: Deployments, ReplicaSets, DaemonSets, StatefulSets
// and ControllerRevisions. Registers apps' own types (and the claim type core
// lacks); PodTemplateSpec, ObjectMeta and the rest come from core and meta.

import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { controllerrevisions } from "./controllerrevisions.js";
import { daemonsets } from "./daemonsets.js";
import { deployments } from "./deployments.js";
import { replicasets } from "./replicasets.js";
import { registerPvcSchemas } from "./pvc-schemas.js";
import { APPS_TYPES } from "./schemas.js";
import { statefulsets } from "./statefulsets.js";

export { APPS_TYPES, APPS_V1 } from "./schemas.js";
export type { Deployment, ReplicaSet, DaemonSet, StatefulSet, ControllerRevision, PodTemplateSpec } from "./types.js";

export const appsModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...APPS_TYPES);
    // StatefulSet claim templates need the claim type, which core does not declare yet.
    registerPvcSchemas(registry);
  },
  resources(): ResourceDefinition[] {
    return [deployments, replicasets, daemonsets, statefulsets, controllerrevisions];
  },
};

export default appsModule;
