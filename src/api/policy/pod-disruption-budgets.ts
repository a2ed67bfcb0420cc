// poddisruptionbudgets (policy/v1, namespaced, short name `pdb`, with a
// status subresource): upstream's ValidatePodDisruptionBudget (not both
// minAvailable and maxUnavailable, numbers or percentages up to 100%, a valid
// selector) and its table. The scheduler reads them when preempting.

import { field, type FieldError } from "../../machinery/index.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { status } from "../subresources/index.js";
import { nameAgeTable } from "../table-format.js";
import { nonnegative, notMoreThan100Percent, validateIntOrPercent, validateLabelSelector } from "../apps/workload.js";
import { POLICY_V1 } from "./schemas.js";
import type { PodDisruptionBudget, PodDisruptionBudgetSpec } from "./types.js";

const EVICTION_POLICIES = ["IfHealthyBudget", "AlwaysAllow"];

function validateSpec(spec: PodDisruptionBudgetSpec): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.minAvailable != null && spec.maxUnavailable != null) {
    errs.push(field.invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set"));
  }
  for (const name of ["minAvailable", "maxUnavailable"] as const) {
    errs.push(...validateIntOrPercent(spec[name], `spec.${name}`), ...notMoreThan100Percent(spec[name], `spec.${name}`));
  }
  errs.push(...validateLabelSelector(spec.selector, "spec.selector"));
  if (spec.unhealthyPodEvictionPolicy != null && !EVICTION_POLICIES.includes(spec.unhealthyPodEvictionPolicy)) {
    errs.push(field.notSupported("spec.unhealthyPodEvictionPolicy", spec.unhealthyPodEvictionPolicy, EVICTION_POLICIES));
  }
  return errs;
}

function validateStatus(pdb: PodDisruptionBudget): FieldError[] {
  const st = pdb.status ?? {};
  return (["disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"] as const).flatMap((k) => nonnegative(st[k], `status.${k}`));
}

export const podDisruptionBudgets: ResourceDefinition = defineResource<PodDisruptionBudget>({
  group: "policy",
  versions: ["v1"],
  resource: "poddisruptionbudgets",
  singular: "poddisruptionbudget",
  kind: "PodDisruptionBudget",
  namespaced: true,
  shortNames: ["pdb"],
  schema: `${POLICY_V1}.PodDisruptionBudget`,
  subresources: [status({ validate: (pdb) => validateStatus(pdb) })],
  prepareForCreate(pdb) {
    pdb.status = {};
  },
  validate: (pdb) => validateSpec(pdb.spec ?? {}),
  validateUpdate: (pdb) => validateSpec(pdb.spec ?? {}),
  table: nameAgeTable<PodDisruptionBudget>({
    columns: [
      { name: "Min Available", type: "string", description: "Pods that must stay available.", priority: 0 },
      { name: "Max Unavailable", type: "string", description: "Pods that may be unavailable.", priority: 0 },
      { name: "Allowed Disruptions", type: "integer", description: "Disruptions allowed now.", priority: 0 },
    ],
    cells: (pdb) => [
      pdb.spec?.minAvailable != null ? String(pdb.spec.minAvailable) : "N/A",
      pdb.spec?.maxUnavailable != null ? String(pdb.spec.maxUnavailable) : "N/A",
      pdb.status?.disruptionsAllowed ?? 0,
    ],
  }),
});
