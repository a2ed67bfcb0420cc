// replicasets (apps/v1): replicas default to 1, the selector must select the
// template, the selector is immutable in apps/v1; `kubectl get` columns and
// Scale access over spec.replicas.

import type { FieldError } from "../../machinery/index.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { scale, status } from "../subresources/index.js";
import { APPS_V1 } from "./schemas.js";
import type { ReplicaSet, ReplicaSetSpec } from "./types.js";
import { defaultPodTemplate, immutable, nonnegative, replicaScale, specPods, validateSelectedTemplate, workloadTable } from "./workload.js";

export function defaultReplicaSet(obj: ReplicaSet): void {
  const spec = (obj.spec ??= {});
  spec.replicas ??= 1;
  defaultPodTemplate((spec.template ??= {}));
}

export function validateReplicaSetSpec(spec: ReplicaSetSpec, path = "spec"): FieldError[] {
  return [
    ...nonnegative(spec.replicas, `${path}.replicas`),
    ...nonnegative(spec.minReadySeconds, `${path}.minReadySeconds`),
    // Deployment's rules, worded as for a deployment: upstream shares them too.
    ...validateSelectedTemplate(spec, path),
  ];
}

export const replicasets: ResourceDefinition = defineResource<ReplicaSet>({
  group: "apps",
  versions: ["v1"],
  resource: "replicasets",
  singular: "replicaset",
  kind: "ReplicaSet",
  namespaced: true,
  shortNames: ["rs"],
  categories: ["all"],
  schema: `${APPS_V1}.ReplicaSet`,
  subresources: [scale(replicaScale<ReplicaSet>()), status()],
  defaults: defaultReplicaSet,
  prepareForCreate(obj) {
    obj.status = { replicas: 0 };
  },
  validate: (obj) => validateReplicaSetSpec(obj.spec ?? {}),
  validateUpdate: (obj, old) => [
    ...validateReplicaSetSpec(obj.spec ?? {}),
    ...immutable(obj.spec?.selector, old.spec?.selector, "spec.selector"),
  ],
  table: workloadTable<ReplicaSet>(
    {
      columns: [
        { name: "Desired", type: "integer", description: "Replicas is the number of desired replicas.", priority: 0 },
        { name: "Current", type: "integer", description: "Replicas is the most recently observed number of replicas.", priority: 0 },
        { name: "Ready", type: "integer", description: "The number of ready replicas for this replica set.", priority: 0 },
      ],
      cells: (obj) => [obj.spec?.replicas ?? 0, obj.status?.replicas ?? 0, obj.status?.readyReplicas ?? 0],
    },
    specPods(),
  ),
});
