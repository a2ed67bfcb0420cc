// leases (coordination.<suffix>, v1 and v1beta1 in ONE declaration): both
// versions are the same stored objects (seed 000, "Identity and naming" 4),
// so a name taken through one version clashes through the other. Validation
// is upstream's ValidateLeaseSpec; the table shows the holder.

import { field, isQualifiedName, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { COORDINATION_V1 } from "./schemas.js";
import type { Lease, LeaseSpec } from "./types.js";

/** Strategies defined by the project itself; others must be domain-prefixed names. */
const STRATEGIES = ["OldestEmulationVersion"];

export function validateLeaseSpec(spec: LeaseSpec, path = "spec"): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.leaseDurationSeconds != null && spec.leaseDurationSeconds <= 0) {
    errs.push(field.invalid(`${path}.leaseDurationSeconds`, spec.leaseDurationSeconds, "must be greater than 0"));
  }
  if (spec.leaseTransitions != null && spec.leaseTransitions < 0) {
    errs.push(field.invalid(`${path}.leaseTransitions`, spec.leaseTransitions, "must be greater than or equal to 0"));
  }
  if (spec.strategy != null) {
    if (!spec.strategy.includes("/")) {
      if (!STRATEGIES.includes(spec.strategy)) errs.push(field.notSupported(`${path}.strategy`, spec.strategy, STRATEGIES));
    } else {
      for (const msg of isQualifiedName(spec.strategy)) errs.push(field.invalid(`${path}.strategy`, spec.strategy, msg));
    }
  }
  if (spec.preferredHolder && !spec.strategy) errs.push(field.forbidden(`${path}.preferredHolder`, "may only be specified if `strategy` is defined"));
  return errs;
}

export function leases(naming: Naming): ResourceDefinition {
  return defineResource<Lease>({
    group: naming.coordinationGroup,
    versions: ["v1", "v1beta1"],
    resource: "leases",
    singular: "lease",
    kind: "Lease",
    namespaced: true,
    schema: `${COORDINATION_V1}.Lease`,
    // As upstream's lease strategy: a PUT to a missing lease creates it.
    allowCreateOnUpdate: true,
    validate: (obj) => validateLeaseSpec(obj.spec ?? {}),
    validateUpdate: (obj) => validateLeaseSpec(obj.spec ?? {}),
    table: nameAgeTable<Lease>({
      columns: [{ name: "Holder", type: "string", description: "holderIdentity contains the identity of the holder of a current lease.", priority: 0 }],
      cells: (obj) => [obj.spec?.holderIdentity ?? ""],
    }),
  });
}
