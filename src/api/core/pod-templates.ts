// podtemplates (core/v1): a stored pod template, plain CRUD, upstream's
// table (Name, Containers, Images, Pod Labels; no Age). Also the template
// rules every kind that embeds a pod template shares (ReplicationControllers
// here, the apps and batch workloads above): core is the lowest group that
// has templates, so the rules live here and apps/workload.ts re-exports them.

import { field, validateAnnotations, validateLabels, type ApiObject, type FieldError, type ObjectMeta } from "../../machinery/index.js";
import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { defineResource, type ResourceDefinition, type TableDefinition } from "../resource.js";
import { formatLabels, nameAgeTable, NAME_COLUMN } from "../table-format.js";
import { defaultPodSpec } from "./pod-defaults.js";
import { validatePodSpec } from "./pod-validation.js";
import { META_V1 } from "../meta/schemas.js";
import { CORE_V1, listOf } from "./schemas.js";
import type { PodSpec } from "./types.js";

/** What the template rules read of a pod template; the kinds' own views (core's, apps') fit it. */
export interface TemplateView {
  metadata?: ObjectMeta;
  spec?: { containers?: { name?: string; image?: string }[] | null; restartPolicy?: string; activeDeadlineSeconds?: number | null; [field: string]: unknown };
}

export interface PodTemplate extends ApiObject {
  template?: TemplateView;
}

/** upstream's ValidateNonnegativeField. */
export function nonnegative(value: unknown, path: string): FieldError[] {
  return typeof value === "number" && value < 0 ? [field.invalid(path, value, "must be greater than or equal to 0")] : [];
}

/**
 * Pod defaults for a workload's template: core's pod-spec defaults (pull
 * policy, requests from limits, ...) after the schema's declared ones.
 * restartPolicy is a schema default too; it is repeated here because the
 * workload checks below depend on it (a Job without one fails on exactly that).
 */
export function defaultPodTemplate(template: TemplateView): void {
  const spec = (template.spec ??= {});
  if (spec.restartPolicy === undefined || spec.restartPolicy === "") spec.restartPolicy = "Always";
  defaultPodSpec(spec as PodSpec);
}

/** The template's metadata: labels and annotations. */
export function validateTemplateMetadata(template: TemplateView, path: string): FieldError[] {
  return [
    ...validateLabels(template.metadata?.labels, `${path}.metadata.labels`),
    ...validateAnnotations(template.metadata?.annotations, `${path}.metadata.annotations`),
  ];
}

/** upstream's ValidatePodTemplateSpec: metadata, then the pod spec with core's rules at `<path>.spec`. */
export function validatePodTemplate(template: TemplateView | undefined, path: string): FieldError[] {
  if (template === undefined || template === null) return [field.required(path, "")];
  return [...validateTemplateMetadata(template, path), ...validatePodSpec(template.spec as PodSpec | undefined, `${path}.spec`, { template: true })];
}

/**
 * What ReplicationControllers, Deployments, ReplicaSets, DaemonSets and
 * StatefulSets require of their pods: restartPolicy Always and no activeDeadlineSeconds.
 */
export function validateLongRunningTemplate(
  template: TemplateView | undefined,
  path: string,
  what: string,
  deadline: "forbidden" | "invalid" = "forbidden",
): FieldError[] {
  const errs: FieldError[] = [];
  const spec = template?.spec ?? {};
  if (spec.restartPolicy !== "Always") errs.push(field.notSupported(`${path}.spec.restartPolicy`, spec.restartPolicy ?? "", ["Always"]));
  if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds !== null) {
    const detail = `activeDeadlineSeconds in ${what} is not Supported`;
    errs.push(
      deadline === "forbidden"
        ? field.forbidden(`${path}.spec.activeDeadlineSeconds`, detail)
        : field.invalid(`${path}.spec.activeDeadlineSeconds`, spec.activeDeadlineSeconds, detail),
    );
  }
  return errs;
}

// ---- table cells ----

/** Comma-joined container names and images (upstream's layoutContainerCells). */
export function containerCells(template: TemplateView | undefined): [string, string] {
  const containers = template?.spec?.containers ?? [];
  return [containers.map((c) => c.name ?? "").join(","), containers.map((c) => c.image ?? "").join(",")];
}

export const CONTAINERS_COLUMN = { name: "Containers", type: "string", description: "Names of each container in the template.", priority: 1 } as const;
export const IMAGES_COLUMN = { name: "Images", type: "string", description: "Images referenced by each container in the template.", priority: 1 } as const;
export const SELECTOR_COLUMN = { name: "Selector", type: "string", description: "Label selector of the Pods this object manages.", priority: 1 } as const;

/** Where a workload's table finds its pods: the template, and the selector cell where the kind prints one. */
export interface WorkloadPods<T> {
  template(obj: T): TemplateView | undefined;
  selector?(obj: T): string;
}

/**
 * A workload's table as upstream prints every kind that owns pods: Name, the
 * kind's own columns, Age, then for `-o wide` the template's containers and
 * images and (where the kind has it) the selector.
 */
export function workloadTable<T extends ApiObject>(own: TableDefinition<T>, pods: WorkloadPods<T>): TableDefinition<T> {
  const { template, selector } = pods;
  return nameAgeTable(own, {
    columns: selector === undefined ? [CONTAINERS_COLUMN, IMAGES_COLUMN] : [CONTAINERS_COLUMN, IMAGES_COLUMN, SELECTOR_COLUMN],
    cells: (obj) => (selector === undefined ? containerCells(template(obj)) : [...containerCells(template(obj)), selector(obj)]),
  });
}

// ---- the PodTemplate kind ----

export const POD_TEMPLATE_TYPES: readonly TypeDef[] = [
  type(`${CORE_V1}.PodTemplate`, "A stored template of pods, for other objects to copy.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    template: f(2, s.ref(`${CORE_V1}.PodTemplateSpec`), "The pods' metadata and spec."),
  }),
  listOf(CORE_V1, "PodTemplate", "A list of PodTemplates."),
];

export function podTemplatesResource(): ResourceDefinition {
  return defineResource<PodTemplate>({
    group: "",
    versions: ["v1"],
    resource: "podtemplates",
    singular: "podtemplate",
    kind: "PodTemplate",
    namespaced: true,
    schema: `${CORE_V1}.PodTemplate`,
    // upstream's podTemplateStrategy: pod-spec defaults, then ValidatePodTemplateSpec at "template".
    defaults: (pt) => {
      if (pt.template !== undefined && pt.template !== null) defaultPodSpec((pt.template.spec ??= {}) as PodSpec);
    },
    validate: (pt) => validatePodTemplate(pt.template, "template"),
    validateUpdate: (pt) => validatePodTemplate(pt.template, "template"),
    table: {
      columns: [
        NAME_COLUMN,
        { name: "Containers", type: "string", description: "Names of each container in the template.", priority: 0 },
        { name: "Images", type: "string", description: "Images referenced by each container in the template.", priority: 0 },
        { name: "Pod Labels", type: "string", description: "The labels for the pod template.", priority: 0 },
      ],
      cells: (pt) => [pt.metadata.name ?? "", ...containerCells(pt.template), formatLabels(pt.template?.metadata?.labels)],
    },
  });
}
