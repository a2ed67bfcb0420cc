// runtimeclasses (node.<suffix>/v1, cluster-scoped): upstream's
// ValidateRuntimeClass/Update messages and table (NAME HANDLER AGE). The
// RuntimeClass admission step (src/apiserver/admission/runtime-class.ts)
// copies a class's overhead and scheduling into the pods that name it.

import { field, isDNS1123Label, isQualifiedName, validateLabels, type ApiObject, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { validateTolerations, type Quantities, type Toleration } from "../core/index.js";
import { parseQuantity, QUANTITY_FORMAT_ERROR } from "../core/quantity.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { NODE_V1 } from "./schemas.js";

export interface RuntimeClass extends ApiObject {
  handler?: string;
  overhead?: { podFixed?: Quantities | null } | null;
  scheduling?: { nodeSelector?: Record<string, string> | null; tolerations?: Toleration[] | null } | null;
}

function validateOverhead(podFixed: Quantities, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [name, value] of Object.entries(podFixed)) {
    const at = `${path}[${name}]`;
    for (const m of isQualifiedName(name)) errs.push(field.invalid(at, name, m));
    const n = parseQuantity(value);
    if (n === undefined) errs.push(field.invalid(at, value, QUANTITY_FORMAT_ERROR));
    else if (n < 0) errs.push(field.invalid(at, value, "must be greater than or equal to 0"));
  }
  return errs;
}

function validate(rc: RuntimeClass): FieldError[] {
  const errs = isDNS1123Label(rc.handler ?? "").map((m) => field.invalid("handler", rc.handler ?? "", m));
  if (rc.overhead?.podFixed != null) errs.push(...validateOverhead(rc.overhead.podFixed, "overhead.podFixed"));
  const sched = rc.scheduling;
  if (sched != null) {
    errs.push(...validateLabels(sched.nodeSelector ?? undefined, "scheduling.nodeSelector"));
    const tolerations = sched.tolerations ?? [];
    errs.push(...validateTolerations(tolerations, "scheduling.tolerations"));
    const seen = new Set<string>();
    tolerations.forEach((t, i) => {
      const key = JSON.stringify([t?.key ?? "", t?.operator ?? "", t?.value ?? "", t?.effect ?? ""]);
      if (seen.has(key)) errs.push(field.duplicate(`scheduling.tolerations[${i}]`, t));
      seen.add(key);
    });
  }
  return errs;
}

export function runtimeClasses(naming: Naming): ResourceDefinition {
  return defineResource<RuntimeClass>({
    group: naming.nodeGroup,
    versions: ["v1"],
    resource: "runtimeclasses",
    singular: "runtimeclass",
    kind: "RuntimeClass",
    namespaced: false,
    schema: `${NODE_V1}.RuntimeClass`,
    validate,
    validateUpdate(rc, old) {
      return rc.handler === old.handler ? [] : [field.immutable("handler", rc.handler ?? "")];
    },
    table: nameAgeTable<RuntimeClass>({
      columns: [{ name: "Handler", type: "string", description: "The runtime handler on the node.", priority: 0 }],
      cells: (rc) => [rc.handler ?? ""],
    }),
  });
}
