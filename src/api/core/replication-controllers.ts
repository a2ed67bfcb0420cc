// replicationcontrollers (core/v1, short name `rc`, in `all`): the ReplicaSet
// of the core group, with a plain map as selector. Upstream's defaults (the
// selector and the object's labels from the template's labels, one replica),
// its ValidateReplicationControllerSpec messages, `kubectl get` columns and
// Scale access over spec.replicas. The apps ReplicaSet controller runs them.

import { field, validateLabels, type ApiObject, type FieldError } from "../../machinery/index.js";
import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1 } from "../meta/schemas.js";
import { defineResource, type ResourceDefinition, type ScaleAccess } from "../resource.js";
import { scale, status } from "../subresources/index.js";
import { formatLabels } from "../table-format.js";
import { defaultPodTemplate, nonnegative, validateLongRunningTemplate, validatePodTemplate, workloadTable, type TemplateView } from "./pod-templates.js";
import { CORE_V1, listOf } from "./schemas.js";

export interface ReplicationControllerSpec {
  replicas?: number;
  minReadySeconds?: number;
  selector?: Record<string, string> | null;
  template?: TemplateView | null;
}

export interface ReplicationControllerStatus {
  replicas?: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: { type?: string; status?: string; lastTransitionTime?: string; reason?: string; message?: string }[];
}

export interface ReplicationController extends ApiObject {
  spec?: ReplicationControllerSpec;
  status?: ReplicationControllerStatus;
}

const core = (name: string) => s.ref(`${CORE_V1}.${name}`);

export const REPLICATION_CONTROLLER_TYPES: readonly TypeDef[] = [
  type(`${CORE_V1}.ReplicationController`, "Keeps a given number of identical Pods running (the core group's ReplicaSet).", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata; labels default to the template's."),
    spec: f(2, core("ReplicationControllerSpec"), "The desired state."),
    status: f(3, core("ReplicationControllerStatus"), "The most recently observed state; written by the system."),
  }),
  type(`${CORE_V1}.ReplicationControllerSpec`, "The desired state of a ReplicationController.", {
    replicas: f(1, s.int32(), "How many Pods to run; 1 when unset."),
    minReadySeconds: f(4, s.int32(), "Seconds a new Pod must stay ready before it counts as available."),
    selector: f(2, s.map(s.string()), "Labels of the Pods this controller counts; the template's labels when unset."),
    template: f(3, core("PodTemplateSpec"), "The Pods to create when too few exist."),
  }),
  type(`${CORE_V1}.ReplicationControllerStatus`, "The observed state of a ReplicationController.", {
    replicas: f(1, s.int32(), "Non-terminating Pods last observed.", { required: true }),
    fullyLabeledReplicas: f(2, s.int32(), "Non-terminating Pods whose labels match the template's."),
    readyReplicas: f(4, s.int32(), "Non-terminating Pods with a Ready condition."),
    availableReplicas: f(5, s.int32(), "Non-terminating Pods ready for at least minReadySeconds."),
    observedGeneration: f(3, s.int64(), "The generation the controller last acted on."),
    conditions: f(6, s.array(core("ReplicationControllerCondition"), { listType: "map", listMapKeys: ["type"] }), "The latest observations of the controller's state.", {
      patchStrategy: "merge",
      patchMergeKey: "type",
    }),
  }),
  type(`${CORE_V1}.ReplicationControllerCondition`, "One observed condition of a ReplicationController.", {
    type: f(1, s.string(), "The kind of condition (ReplicaFailure).", { required: true }),
    status: f(2, s.string(), "True, False or Unknown.", { required: true }),
    lastTransitionTime: f(3, s.time(), "When the status last changed."),
    reason: f(4, s.string(), "A one-word, CamelCase reason for the last change."),
    message: f(5, s.string(), "A human-readable explanation of the last change."),
  }),
  listOf(CORE_V1, "ReplicationController", "A list of ReplicationControllers."),
];

/** upstream's SetDefaults_ReplicationController, then the template's pod defaults. */
export function defaultReplicationController(rc: ReplicationController): void {
  const spec = (rc.spec ??= {});
  const labels = spec.template?.metadata?.labels;
  if (labels !== undefined && labels !== null) {
    if (Object.keys(spec.selector ?? {}).length === 0) spec.selector = { ...labels };
    if (Object.keys(rc.metadata.labels ?? {}).length === 0) rc.metadata.labels = { ...labels };
  }
  spec.replicas ??= 1;
  if (spec.template !== undefined && spec.template !== null) defaultPodTemplate(spec.template);
}

function matches(selector: Record<string, string>, labels: Record<string, string> | null | undefined): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** upstream's ValidateReplicationControllerSpec. */
export function validateReplicationControllerSpec(spec: ReplicationControllerSpec, path = "spec"): FieldError[] {
  const selector = spec.selector ?? {};
  const errs = [...nonnegative(spec.minReadySeconds, `${path}.minReadySeconds`)];
  if (Object.keys(selector).length === 0) errs.push(field.required(`${path}.selector`, ""));
  else errs.push(...validateLabels(selector, `${path}.selector`));
  errs.push(...nonnegative(spec.replicas, `${path}.replicas`));
  const template = spec.template;
  if (template === undefined || template === null) {
    errs.push(field.required(`${path}.template`, ""));
    return errs;
  }
  if (Object.keys(selector).length > 0 && !matches(selector, template.metadata?.labels)) {
    errs.push(field.invalid(`${path}.template.metadata.labels`, template.metadata?.labels ?? null, "`selector` does not match template `labels`"));
  }
  errs.push(...validatePodTemplate(template, `${path}.template`));
  errs.push(...validateLongRunningTemplate(template, `${path}.template`, "ReplicationController"));
  return errs;
}

/** Scale over spec.replicas; the selector is the map as `k=v,...` (as upstream's scale subresource for RCs). */
export const rcScale: ScaleAccess<ReplicationController> = {
  specReplicas: (rc) => rc.spec?.replicas ?? 0,
  setSpecReplicas: (rc, replicas) => {
    (rc.spec ??= {}).replicas = replicas;
  },
  statusReplicas: (rc) => rc.status?.replicas ?? 0,
  selector: (rc) =>
    Object.keys(rc.spec?.selector ?? {})
      .sort()
      .map((k) => `${k}=${rc.spec!.selector![k]}`)
      .join(","),
};

export function replicationControllersResource(): ResourceDefinition {
  return defineResource<ReplicationController>({
    group: "",
    versions: ["v1"],
    resource: "replicationcontrollers",
    singular: "replicationcontroller",
    kind: "ReplicationController",
    namespaced: true,
    shortNames: ["rc"],
    categories: ["all"],
    schema: `${CORE_V1}.ReplicationController`,
    subresources: [scale(rcScale), status()],
    defaultPropagationPolicy: "Orphan",
    defaults: defaultReplicationController,
    prepareForCreate(rc) {
      rc.status = { replicas: 0 };
    },
    validate: (rc) => validateReplicationControllerSpec(rc.spec ?? {}),
    validateUpdate: (rc) => validateReplicationControllerSpec(rc.spec ?? {}),
    table: workloadTable<ReplicationController>(
      {
        columns: [
          { name: "Desired", type: "integer", description: "Number of desired pods.", priority: 0 },
          { name: "Current", type: "integer", description: "Number of actually running pods.", priority: 0 },
          { name: "Ready", type: "integer", description: "Number of ready pods.", priority: 0 },
        ],
        cells: (rc) => [rc.spec?.replicas ?? 0, rc.status?.replicas ?? 0, rc.status?.readyReplicas ?? 0],
      },
      { template: (rc) => rc.spec?.template ?? undefined, selector: (rc) => formatLabels(rc.spec?.selector) },
    ),
  });
}
