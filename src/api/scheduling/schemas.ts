// PriorityClass of scheduling.<suffix>/v1 as schema data (definition names
// keep upstream's `io.k8s.api.scheduling.v1`). Protobuf field numbers from
// k8s.io/api/scheduling/v1/generated.proto.

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1, listOf } from "../apps/schemas.js";

export const SCHEDULING_V1 = "io.k8s.api.scheduling.v1";

export const SCHEDULING_TYPES: readonly TypeDef[] = [
  type(`${SCHEDULING_V1}.PriorityClass`, "A mapping from a priority class name to the integer priority pods of that class get.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    value: f(2, s.int32(), "The priority pods of this class receive; higher is more important.", { required: true }),
    globalDefault: f(3, s.bool(), "Whether this class's value applies to pods without a priorityClassName."),
    description: f(4, s.string(), "When this class should be used."),
    preemptionPolicy: f(5, s.string({ enum: ["Never", "PreemptLowerPriority"] }), "Never or PreemptLowerPriority (the default)."),
  }),
  listOf(SCHEDULING_V1, "PriorityClass", "A list of PriorityClasses."),
];
