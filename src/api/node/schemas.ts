// The node.<suffix>/v1 types as schema data (definition names keep upstream's
// `io.k8s.api.node.v1.*`). Protobuf field numbers from
// k8s.io/api/node/v1/generated.proto.

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { CORE_V1, listOf } from "../core/index.js";
import { META_V1 } from "../meta/schemas.js";

export const NODE_V1 = "io.k8s.api.node.v1";

export const NODE_TYPES: readonly TypeDef[] = [
  type(`${NODE_V1}.RuntimeClass`, "A container runtime configuration (a handler of the node's runtime) pods may ask for.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    handler: f(2, s.string(), "The runtime handler on the node (a DNS-1123 label); immutable.", { required: true }),
    overhead: f(3, s.ref(`${NODE_V1}.Overhead`), "Resources the pod sandbox of this class uses, added to the pod's."),
    scheduling: f(4, s.ref(`${NODE_V1}.Scheduling`), "The nodes that support this class."),
  }),
  type(`${NODE_V1}.Overhead`, "The fixed resource overhead of a pod of the class.", {
    podFixed: f(1, s.map(s.quantity()), "The overhead per resource name."),
  }),
  type(`${NODE_V1}.Scheduling`, "Where pods of the class may run.", {
    nodeSelector: f(1, s.map(s.string()), "Labels the node must have; merged into the pod's nodeSelector."),
    tolerations: f(2, s.array(s.ref(`${CORE_V1}.Toleration`), { listType: "atomic" }), "Tolerations added to the pod's."),
  }),
  listOf(NODE_V1, "RuntimeClass", "A list of RuntimeClasses."),
];
