// deployments (apps/v1): upstream's defaults (SetDefaults_Deployment),
// validation (ValidateDeploymentSpec, selector immutable in apps/v1), the
// `kubectl get` columns and Scale access over spec.replicas.

import { field, type FieldError } from "../../machinery/index.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { scale, status } from "../subresources/index.js";
import { APPS_V1 } from "./schemas.js";
import type { Deployment, DeploymentSpec } from "./types.js";
import {
  defaultPodTemplate,
  defaultRollingUpdate,
  immutable,
  intOrPercentValue,
  nonnegative,
  notMoreThan100Percent,
  replicaScale,
  specPods,
  validateIntOrPercent,
  validateSelectedTemplate,
  workloadTable,
} from "./workload.js";

export function defaultDeployment(obj: Deployment): void {
  const spec = (obj.spec ??= {});
  spec.replicas ??= 1;
  defaultRollingUpdate((spec.strategy ??= {}), { maxUnavailable: "25%", maxSurge: "25%" });
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  defaultPodTemplate((spec.template ??= {}));
}

function validateStrategy(strategy: DeploymentSpec["strategy"], path: string): FieldError[] {
  const errs: FieldError[] = [];
  switch (strategy?.type) {
    case "Recreate":
      if (strategy.rollingUpdate) errs.push(field.forbidden(`${path}.rollingUpdate`, "may not be specified when strategy `type` is 'Recreate'"));
      break;
    case "RollingUpdate": {
      const ru = strategy.rollingUpdate;
      if (!ru) {
        errs.push(field.required(`${path}.rollingUpdate`, "this should be defaulted and never be nil"));
        break;
      }
      errs.push(...validateIntOrPercent(ru.maxUnavailable, `${path}.rollingUpdate.maxUnavailable`));
      errs.push(...validateIntOrPercent(ru.maxSurge, `${path}.rollingUpdate.maxSurge`));
      if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) {
        errs.push(field.invalid(`${path}.rollingUpdate.maxUnavailable`, ru.maxUnavailable, "may not be 0 when `maxSurge` is 0"));
      }
      errs.push(...notMoreThan100Percent(ru.maxUnavailable, `${path}.rollingUpdate.maxUnavailable`));
      break;
    }
    default:
      errs.push(field.notSupported(`${path}.type`, strategy?.type ?? "", ["Recreate", "RollingUpdate"]));
  }
  return errs;
}

export function validateDeploymentSpec(spec: DeploymentSpec, path = "spec"): FieldError[] {
  const errs: FieldError[] = [...nonnegative(spec.replicas, `${path}.replicas`), ...validateSelectedTemplate(spec, path)];
  errs.push(...validateStrategy(spec.strategy, `${path}.strategy`));
  errs.push(...nonnegative(spec.minReadySeconds, `${path}.minReadySeconds`));
  errs.push(...nonnegative(spec.revisionHistoryLimit, `${path}.revisionHistoryLimit`));
  const deadline = spec.progressDeadlineSeconds;
  if (typeof deadline === "number") {
    if (deadline <= 0) errs.push(field.invalid(`${path}.progressDeadlineSeconds`, deadline, "must be greater than zero"));
    if (deadline <= (spec.minReadySeconds ?? 0)) errs.push(field.invalid(`${path}.progressDeadlineSeconds`, deadline, "must be greater than minReadySeconds"));
  }
  return errs;
}

export const deployments: ResourceDefinition = defineResource<Deployment>({
  group: "apps",
  versions: ["v1"],
  resource: "deployments",
  singular: "deployment",
  kind: "Deployment",
  namespaced: true,
  shortNames: ["deploy"],
  categories: ["all"],
  schema: `${APPS_V1}.Deployment`,
  // Upstream's deployment status strategy keeps the stored labels.
  subresources: [scale(replicaScale<Deployment>()), status({ metadata: ["annotations"] })],
  defaults: defaultDeployment,
  prepareForCreate(obj) {
    obj.status = {};
  },
  validate: (obj) => validateDeploymentSpec(obj.spec ?? {}),
  validateUpdate: (obj, old) => [
    ...validateDeploymentSpec(obj.spec ?? {}),
    // apps/v1 made the selector immutable: changing it would orphan the running pods.
    ...immutable(obj.spec?.selector, old.spec?.selector, "spec.selector"),
  ],
  table: workloadTable<Deployment>(
    {
      columns: [
        { name: "Ready", type: "string", description: "Number of the pod with ready state", priority: 0 },
        { name: "Up-to-date", type: "string", description: "Total number of non-terminated pods targeted by this deployment that have the desired template spec.", priority: 0 },
        { name: "Available", type: "string", description: "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.", priority: 0 },
      ],
      cells(obj) {
        const status = obj.status ?? {};
        return [`${status.readyReplicas ?? 0}/${obj.spec?.replicas ?? 0}`, status.updatedReplicas ?? 0, status.availableReplicas ?? 0];
      },
    },
    specPods(),
  ),
});
