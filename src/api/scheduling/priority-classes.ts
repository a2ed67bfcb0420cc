// priorityclasses (scheduling.<suffix>/v1, cluster-scoped, short name `pc`):
// upstream's ValidatePriorityClass (user values up to 1e9, the `system-`
// prefix reserved, value and preemptionPolicy immutable) and its table. The
// built-in system classes are here too, for the server's bootstrap and the
// pod priority admission.

import { field, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { SCHEDULING_V1 } from "./schemas.js";
import type { PriorityClass } from "./types.js";

/** Upstream's HighestUserDefinablePriority. */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
/** Upstream's SystemCriticalPriority. */
export const SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;
const PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"];

/** The classes every cluster has (upstream's SystemPriorityClasses). */
export const SYSTEM_PRIORITY_CLASSES: readonly { name: string; value: number; description: string }[] = [
  { name: "system-node-critical", value: SYSTEM_CRITICAL_PRIORITY + 1000, description: "Used for system critical pods that must not be moved from their current node." },
  { name: "system-cluster-critical", value: SYSTEM_CRITICAL_PRIORITY, description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary." },
];

function validate(pc: PriorityClass): FieldError[] {
  const errs: FieldError[] = [];
  const name = pc.metadata.name ?? "";
  const system = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === name);
  if (name.startsWith("system-")) {
    if (system === undefined) errs.push(field.forbidden("metadata.name", "priority class names with 'system-' prefix are reserved for system use only"));
    else if (pc.value !== system.value) errs.push(field.forbidden("metadata.name", `${name} is a known system priority class with value ${system.value}`));
  } else if (typeof pc.value === "number" && pc.value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    errs.push(field.forbidden("value", `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`));
  }
  if (typeof pc.value !== "number") errs.push(field.required("value", ""));
  if (pc.preemptionPolicy != null && !PREEMPTION_POLICIES.includes(pc.preemptionPolicy)) {
    errs.push(field.notSupported("preemptionPolicy", pc.preemptionPolicy, PREEMPTION_POLICIES));
  }
  return errs;
}

export function priorityClasses(naming: Naming): ResourceDefinition {
  return defineResource<PriorityClass>({
    group: naming.schedulingGroup,
    versions: ["v1"],
    resource: "priorityclasses",
    singular: "priorityclass",
    kind: "PriorityClass",
    namespaced: false,
    shortNames: ["pc"],
    schema: `${SCHEDULING_V1}.PriorityClass`,
    defaults(pc) {
      pc.preemptionPolicy ??= "PreemptLowerPriority";
    },
    validate,
    validateUpdate(pc, old) {
      const errs = validate(pc);
      if (pc.value !== old.value) errs.push(field.forbidden("value", "may not be changed in an update."));
      if ((pc.preemptionPolicy ?? "PreemptLowerPriority") !== (old.preemptionPolicy ?? "PreemptLowerPriority")) {
        errs.push(field.invalid("preemptionPolicy", pc.preemptionPolicy, "field is immutable"));
      }
      return errs;
    },
    table: nameAgeTable<PriorityClass>(
      {
        columns: [
          { name: "Value", type: "integer", description: "The priority pods of this class receive.", priority: 0 },
          { name: "Global-Default", type: "boolean", description: "Whether pods without a class get this one.", priority: 0 },
        ],
        cells: (pc) => [pc.value ?? 0, pc.globalDefault === true],
      },
      // After Age, as upstream prints it.
      {
        columns: [{ name: "PreemptionPolicy", type: "string", description: "Whether pods of this class may preempt others.", priority: 0 }],
        cells: (pc) => [pc.preemptionPolicy ?? ""],
      },
    ),
  });
}
