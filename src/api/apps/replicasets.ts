// replicasets (apps/v1): replicas default to 1, the selector must select the
// template, the selector is immutable in apps/v1; `kubectl get` columns and
// Scale access over spec.replicas.

import { field, type FieldError } from "../../machinery/index.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { scale, status } from "../subresources/index.js";
import { formatAge } from "../table-format.js";
import { APPS_V1 } from "./schemas.js";
import type { ReplicaSet, ReplicaSetSpec } from "./types.js";
import {
  AGE_COLUMN,
  CONTAINERS_COLUMN,
  IMAGES_COLUMN,
  NAME_COLUMN,
  SELECTOR_COLUMN,
  containerCells,
  defaultPodTemplate,
  immutable,
  nonnegative,
  replicaScale,
  selectorCell,
  selectorMatchesTemplate,
  validateLongRunningTemplate,
  validatePodTemplate,
  validateRequiredSelector,
} from "./workload.js";

export function defaultReplicaSet(obj: ReplicaSet): void {
  const spec = (obj.spec ??= {});
  spec.replicas ??= 1;
  defaultPodTemplate((spec.template ??= {}));
}

export function validateReplicaSetSpec(spec: ReplicaSetSpec, path = "spec"): FieldError[] {
  const errs: FieldError[] = [...nonnegative(spec.replicas, `${path}.replicas`), ...nonnegative(spec.minReadySeconds, `${path}.minReadySeconds`)];
  // "for deployment" is upstream's own wording for replica sets too; clients may match on it.
  const selector = validateRequiredSelector(spec.selector, `${path}.selector`, "deployment", errs);
  if (selector === undefined) {
    errs.push(field.invalid(`${path}.selector`, spec.selector ?? null, "invalid label selector"));
  } else {
    errs.push(...selectorMatchesTemplate(selector, spec.template, `${path}.template`));
    errs.push(...validatePodTemplate(spec.template, `${path}.template`));
    errs.push(...validateLongRunningTemplate(spec.template, `${path}.template`, "ReplicaSet"));
  }
  return errs;
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
  table: {
    columns: [
      NAME_COLUMN,
      { name: "Desired", type: "integer", description: "Replicas is the number of desired replicas.", priority: 0 },
      { name: "Current", type: "integer", description: "Replicas is the most recently observed number of replicas.", priority: 0 },
      { name: "Ready", type: "integer", description: "The number of ready replicas for this replica set.", priority: 0 },
      AGE_COLUMN,
      CONTAINERS_COLUMN,
      IMAGES_COLUMN,
      SELECTOR_COLUMN,
    ],
    cells(obj, now) {
      const [containers, images] = containerCells(obj.spec?.template);
      return [
        obj.metadata.name ?? "",
        obj.spec?.replicas ?? 0,
        obj.status?.replicas ?? 0,
        obj.status?.readyReplicas ?? 0,
        formatAge(obj.metadata.creationTimestamp, now),
        containers,
        images,
        selectorCell(obj.spec?.selector),
      ];
    },
  },
});
