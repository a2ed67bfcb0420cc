// TypeScript views of the apps/v1 kinds for strategies and tables. Every
// field is optional: these describe request bodies, which are untrusted until
// validated. Pod specs are seen only through the few fields apps code reads.

import type { ApiObject, LabelSelector, ObjectMeta, OwnerReference } from "../../machinery/index.js";

export type IntOrString = number | string;

/** The parts of a pod spec workload strategies and tables read. */
export interface PodSpecView {
  containers?: { name?: string; image?: string }[];
  restartPolicy?: string;
  activeDeadlineSeconds?: number | null;
  nodeSelector?: Record<string, string> | null;
  [field: string]: unknown;
}

export interface PodTemplateSpec {
  metadata?: ObjectMeta;
  spec?: PodSpecView;
}

export interface Condition {
  type?: string;
  status?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface DeploymentSpec {
  replicas?: number;
  selector?: LabelSelector | null;
  template?: PodTemplateSpec;
  strategy?: { type?: string; rollingUpdate?: { maxUnavailable?: IntOrString; maxSurge?: IntOrString } | null };
  minReadySeconds?: number;
  revisionHistoryLimit?: number | null;
  paused?: boolean;
  progressDeadlineSeconds?: number | null;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  terminatingReplicas?: number;
  conditions?: (Condition & { lastUpdateTime?: string })[];
  collisionCount?: number;
}

export interface Deployment extends ApiObject {
  spec?: DeploymentSpec;
  status?: DeploymentStatus;
}

export interface ReplicaSetSpec {
  replicas?: number;
  minReadySeconds?: number;
  selector?: LabelSelector | null;
  template?: PodTemplateSpec;
}

export interface ReplicaSetStatus {
  replicas?: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  terminatingReplicas?: number;
  observedGeneration?: number;
  conditions?: Condition[];
}

export interface ReplicaSet extends ApiObject {
  spec?: ReplicaSetSpec;
  status?: ReplicaSetStatus;
}

export interface DaemonSetSpec {
  selector?: LabelSelector | null;
  template?: PodTemplateSpec;
  updateStrategy?: { type?: string; rollingUpdate?: { maxUnavailable?: IntOrString; maxSurge?: IntOrString } | null };
  minReadySeconds?: number;
  revisionHistoryLimit?: number | null;
}

export interface DaemonSetStatus {
  currentNumberScheduled?: number;
  numberMisscheduled?: number;
  desiredNumberScheduled?: number;
  numberReady?: number;
  observedGeneration?: number;
  updatedNumberScheduled?: number;
  numberAvailable?: number;
  numberUnavailable?: number;
  collisionCount?: number;
  conditions?: Condition[];
}

export interface DaemonSet extends ApiObject {
  spec?: DaemonSetSpec;
  status?: DaemonSetStatus;
}

export interface StatefulSetSpec {
  replicas?: number;
  selector?: LabelSelector | null;
  template?: PodTemplateSpec;
  volumeClaimTemplates?: unknown[];
  serviceName?: string;
  podManagementPolicy?: string;
  updateStrategy?: { type?: string; rollingUpdate?: { partition?: number | null; maxUnavailable?: IntOrString | null } | null };
  revisionHistoryLimit?: number | null;
  minReadySeconds?: number;
  persistentVolumeClaimRetentionPolicy?: { whenDeleted?: string; whenScaled?: string } | null;
  ordinals?: { start?: number } | null;
}

export interface StatefulSetStatus {
  observedGeneration?: number;
  replicas?: number;
  readyReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  collisionCount?: number;
  conditions?: Condition[];
  availableReplicas?: number;
}

export interface StatefulSet extends ApiObject {
  spec?: StatefulSetSpec;
  status?: StatefulSetStatus;
}

export interface ControllerRevision extends ApiObject {
  data?: unknown;
  revision?: number;
}

export type { OwnerReference };
