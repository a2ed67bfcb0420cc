// jobs (batch/v1): defaults, the server-generated selector and pod labels
// (`batch.<keyDomain>/controller-uid`, `batch.<keyDomain>/job-name` and their
// legacy unprefixed forms), create and update validation (the template is
// immutable except scheduling directives of a never-started suspended Job),
// and the `kubectl get` columns.

import { field, generateName, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { status } from "../subresources/index.js";
import { humanDuration } from "../table-format.js";
import type { PodTemplateSpec } from "../apps/types.js";
import {
  asSelector,
  formatLabelSelector,
  immutable,
  selectorMatchesTemplate,
  semanticEqual,
  validateLabelSelector,
  workloadTable,
} from "../apps/workload.js";
import { defaultJobSpec, validateJobSpec } from "./job-spec.js";
import { BATCH_V1 } from "./schemas.js";
import type { Job, JobSpec } from "./types.js";

export const LEGACY_CONTROLLER_UID_LABEL = "controller-uid";
export const LEGACY_JOB_NAME_LABEL = "job-name";
export const controllerUidLabel = (naming: Naming) => `batch.${naming.keyDomain}/controller-uid`;
export const jobNameLabel = (naming: Naming) => `batch.${naming.keyDomain}/job-name`;

export function defaultJob(obj: Job): void {
  const spec = (obj.spec ??= {});
  defaultJobSpec(spec);
  const templateLabels = spec.template?.metadata?.labels;
  if (templateLabels && Object.keys(obj.metadata.labels ?? {}).length === 0) obj.metadata.labels = { ...templateLabels };
}

const manual = (spec: JobSpec) => spec.manualSelector === true;

/**
 * Label the pods with the Job's name and uid and select on the uid, so the
 * Job never adopts another controller's pods. Labels the user set are kept;
 * validation rejects them if they disagree.
 */
export function generateSelector(obj: Job, naming: Naming): void {
  const spec = (obj.spec ??= {});
  const template = (spec.template ??= {});
  const labels = ((template.metadata ??= {}).labels ??= {});
  const name = obj.metadata.name ?? "";
  const uid = obj.metadata.uid ?? "";
  for (const key of [LEGACY_JOB_NAME_LABEL, jobNameLabel(naming)]) if (!Object.hasOwn(labels, key)) labels[key] = name;
  for (const key of [LEGACY_CONTROLLER_UID_LABEL, controllerUidLabel(naming)]) if (!Object.hasOwn(labels, key)) labels[key] = uid;
  const matchLabels = ((spec.selector ??= {}).matchLabels ??= {});
  if (!Object.hasOwn(matchLabels, controllerUidLabel(naming))) matchLabels[controllerUidLabel(naming)] = uid;
}

function hasLabel(template: PodTemplateSpec | undefined, key: string, want: string): FieldError[] {
  const labels = template?.metadata?.labels ?? {};
  const path = `spec.template.metadata.labels[${key}]`;
  if (!Object.hasOwn(labels, key)) return [field.required(path, `must be '${want}'`)];
  return labels[key] === want ? [] : [field.invalid(path, labels, `must be '${want}'`)];
}

/** upstream's validateGeneratedSelector: the generated labels are present and the selector picks exactly them. */
function validateGeneratedSelector(obj: Job, naming: Naming): FieldError[] {
  const spec = obj.spec ?? {};
  if (manual(spec)) return [];
  const uid = obj.metadata.uid ?? "";
  const name = obj.metadata.name ?? "";
  const errs: FieldError[] = [];
  if (uid === "") errs.push(field.required("metadata.uid", ""));
  const expected: Record<string, string> = {
    [LEGACY_CONTROLLER_UID_LABEL]: uid,
    [LEGACY_JOB_NAME_LABEL]: name,
    [controllerUidLabel(naming)]: uid,
    [jobNameLabel(naming)]: name,
  };
  for (const [key, value] of Object.entries(expected)) errs.push(...hasLabel(spec.template, key, value));
  const selector = asSelector(spec.selector);
  if (selector !== undefined && !selector.matches(expected)) errs.push(field.invalid("spec.selector", spec.selector ?? null, "`selector` not auto-generated"));
  return errs;
}

export function validateJob(obj: Job, naming: Naming): FieldError[] {
  const spec = obj.spec ?? {};
  const errs = validateGeneratedSelector(obj, naming);
  errs.push(...validateJobSpec(spec, "spec"));
  if (spec.selector == null) errs.push(field.required("spec.selector", ""));
  else errs.push(...validateLabelSelector(spec.selector, "spec.selector"));
  const selector = asSelector(spec.selector);
  if (selector !== undefined) errs.push(...selectorMatchesTemplate(selector, spec.template, "spec.template"));
  if (spec.completionMode === "Indexed" && typeof spec.completions === "number" && spec.completions > 0) {
    // Indexed pods are named <job>-<index>, which must stay a DNS label.
    const hostname = `${obj.metadata.name ?? ""}-${spec.completions - 1}`;
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(hostname) || hostname.length > 63) {
      errs.push(field.invalid("metadata.name", obj.metadata.name ?? "", `will not able to create pod with invalid DNS label: ${hostname}`));
    }
  }
  return errs;
}

/** The template may change only while the Job is suspended and never started, and then only in where its pods may run. */
function validateTemplateUpdate(obj: Job, old: Job): FieldError[] {
  const next = obj.spec?.template;
  const prev = old.spec?.template;
  const mutable = old.spec?.suspend === true && !old.status?.startTime;
  if (!mutable) return immutable(next, prev, "spec.template");
  const relaxed: PodTemplateSpec = structuredClone(prev ?? {});
  const meta = (relaxed.metadata ??= {});
  meta.labels = next?.metadata?.labels;
  meta.annotations = next?.metadata?.annotations;
  const pod = (relaxed.spec ??= {});
  const nextPod = next?.spec ?? {};
  for (const key of ["nodeSelector", "tolerations", "schedulingGates"]) pod[key] = nextPod[key];
  const nextAffinity = nextPod["affinity"] as Record<string, unknown> | undefined;
  const oldAffinity = pod["affinity"] as Record<string, unknown> | undefined;
  if (nextAffinity == null && oldAffinity != null) {
    const rest = { ...oldAffinity, nodeAffinity: undefined };
    pod["affinity"] = semanticEqual(rest, {}) ? undefined : rest;
  } else if (nextAffinity != null) {
    pod["affinity"] = { ...(oldAffinity ?? {}), nodeAffinity: nextAffinity["nodeAffinity"] };
  }
  return semanticEqual(next, relaxed) ? [] : [field.immutable("spec.template", next ?? null)];
}

export function validateJobUpdate(obj: Job, old: Job, naming: Naming): FieldError[] {
  const spec = obj.spec ?? {};
  const prev = old.spec ?? {};
  const errs = validateJob(obj, naming);
  if (spec.completionMode === "Indexed" && !semanticEqual(spec.completions, prev.completions)) {
    // Elastic Indexed Jobs: completions may follow parallelism, never on its own.
    if (spec.completions != null && spec.completions !== spec.parallelism) {
      errs.push(field.invalid("spec.completions", spec.completions, "can only be modified in tandem with spec.parallelism"));
    }
  } else if (spec.completionMode !== "Indexed") {
    errs.push(...immutable(spec.completions, prev.completions, "spec.completions"));
  }
  errs.push(...immutable(spec.selector, prev.selector, "spec.selector"));
  errs.push(...validateTemplateUpdate(obj, old));
  for (const key of ["completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy", "successPolicy", "podReplacementPolicy"] as const) {
    errs.push(...immutable(spec[key], prev[key], `spec.${key}`));
  }
  return errs;
}

function hasCondition(obj: Job, type: string): boolean {
  return (obj.status?.conditions ?? []).some((c) => c.type === type && c.status === "True");
}

/** upstream's printJob status, in its order of precedence. */
export function jobStatusCell(obj: Job): string {
  if (hasCondition(obj, "Complete")) return "Complete";
  if (hasCondition(obj, "Failed")) return "Failed";
  if (obj.metadata.deletionTimestamp) return "Terminating";
  if (hasCondition(obj, "Suspended")) return "Suspended";
  if (hasCondition(obj, "FailureTarget")) return "FailureTarget";
  if (hasCondition(obj, "SuccessCriteriaMet")) return "SuccessCriteriaMet";
  return "Running";
}

export function completionsCell(obj: Job): string {
  const succeeded = obj.status?.succeeded ?? 0;
  const { completions, parallelism } = obj.spec ?? {};
  if (completions != null) return `${succeeded}/${completions}`;
  return (parallelism ?? 0) > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

export function durationCell(obj: Job, now: Date): string {
  const start = obj.status?.startTime;
  if (!start) return "";
  const end = obj.status?.completionTime;
  const from = Date.parse(start);
  const to = end ? Date.parse(end) : now.getTime();
  return Number.isNaN(from) || Number.isNaN(to) ? "" : humanDuration(to - from);
}

export function jobs(naming: Naming): ResourceDefinition {
  return defineResource<Job>({
    group: "batch",
    versions: ["v1"],
    resource: "jobs",
    singular: "job",
    kind: "Job",
    namespaced: true,
    categories: ["all"],
    schema: `${BATCH_V1}.Job`,
    subresources: [status()],
    defaults: defaultJob,
    prepareForCreate(obj) {
      // The generated labels carry the name, so a generateName must become a name first.
      if (!obj.metadata.name && obj.metadata.generateName) obj.metadata.name = generateName(obj.metadata.generateName);
      if (!manual((obj.spec ??= {}))) generateSelector(obj, naming);
      obj.status = {};
    },
    validate: (obj) => validateJob(obj, naming),
    validateUpdate: (obj, old) => validateJobUpdate(obj, old, naming),
    table: workloadTable<Job>(
      {
        columns: [
          { name: "Status", type: "string", description: "Status of the job.", priority: 0 },
          { name: "Completions", type: "string", description: "The completion status of the job.", priority: 0 },
          { name: "Duration", type: "string", description: "Time required to complete the job.", priority: 0 },
        ],
        cells: (obj, now) => [jobStatusCell(obj), completionsCell(obj), durationCell(obj, now)],
      },
      { template: (obj) => obj.spec?.template, selector: (obj) => formatLabelSelector(obj.spec?.selector) },
    ),
  });
}
