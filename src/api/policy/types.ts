// TypeScript view of a PodDisruptionBudget; fields optional, as request bodies are untrusted.

import type { ApiObject, LabelSelector } from "../../machinery/index.js";
import type { IntOrString } from "../apps/types.js";
import type { Condition } from "../core/types.js";

export interface PodDisruptionBudgetSpec {
  minAvailable?: IntOrString | null;
  selector?: LabelSelector | null;
  maxUnavailable?: IntOrString | null;
  unhealthyPodEvictionPolicy?: string | null;
}

export interface PodDisruptionBudgetStatus {
  observedGeneration?: number;
  disruptedPods?: Record<string, string> | null;
  disruptionsAllowed?: number;
  currentHealthy?: number;
  desiredHealthy?: number;
  expectedPods?: number;
  conditions?: Condition[] | null;
}

export interface PodDisruptionBudget extends ApiObject {
  spec?: PodDisruptionBudgetSpec;
  status?: PodDisruptionBudgetStatus;
}
