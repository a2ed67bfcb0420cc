// TypeScript views of the batch/v1 kinds for strategies and tables. Every
// field is optional: request bodies are untrusted until validated.

import type { ApiObject, LabelSelector, ObjectMeta } from "../../machinery/index.js";
import type { PodTemplateSpec } from "../apps/types.js";

export interface PodFailurePolicyRule {
  action?: string;
  onExitCodes?: { containerName?: string | null; operator?: string; values?: number[] } | null;
  onPodConditions?: { type?: string; status?: string }[] | null;
}

export interface SuccessPolicyRule {
  succeededIndexes?: string | null;
  succeededCount?: number | null;
}

export interface JobSpec {
  parallelism?: number | null;
  completions?: number | null;
  activeDeadlineSeconds?: number | null;
  podFailurePolicy?: { rules?: PodFailurePolicyRule[] } | null;
  successPolicy?: { rules?: SuccessPolicyRule[] } | null;
  backoffLimit?: number | null;
  backoffLimitPerIndex?: number | null;
  maxFailedIndexes?: number | null;
  selector?: LabelSelector | null;
  manualSelector?: boolean | null;
  template?: PodTemplateSpec;
  ttlSecondsAfterFinished?: number | null;
  completionMode?: string | null;
  suspend?: boolean | null;
  podReplacementPolicy?: string | null;
  managedBy?: string | null;
}

export interface JobCondition {
  type?: string;
  status?: string;
  lastProbeTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface JobStatus {
  conditions?: JobCondition[];
  startTime?: string | null;
  completionTime?: string | null;
  active?: number;
  succeeded?: number;
  failed?: number;
  terminating?: number | null;
  completedIndexes?: string;
  failedIndexes?: string | null;
  uncountedTerminatedPods?: { succeeded?: string[]; failed?: string[] } | null;
  ready?: number | null;
}

export interface Job extends ApiObject {
  spec?: JobSpec;
  status?: JobStatus;
}

export interface JobTemplateSpec {
  metadata?: ObjectMeta;
  spec?: JobSpec;
}

export interface CronJobSpec {
  schedule?: string;
  timeZone?: string | null;
  startingDeadlineSeconds?: number | null;
  concurrencyPolicy?: string;
  suspend?: boolean | null;
  jobTemplate?: JobTemplateSpec;
  successfulJobsHistoryLimit?: number | null;
  failedJobsHistoryLimit?: number | null;
}

export interface CronJobStatus {
  active?: { kind?: string; namespace?: string; name?: string; uid?: string }[];
  lastScheduleTime?: string | null;
  lastSuccessfulTime?: string | null;
}

export interface CronJob extends ApiObject {
  spec?: CronJobSpec;
  status?: CronJobStatus;
}
