// The apiregistration.<suffix>/v1 types as schema data (definition names keep
// upstream's `io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.*`).
// Protobuf field numbers from kube-aggregator's apiregistration/v1/generated.proto.

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { listOf } from "../core/index.js";
import { META_V1 } from "../meta/schemas.js";

export const APIREGISTRATION_V1 = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1";

const r = (name: string) => s.ref(`${APIREGISTRATION_V1}.${name}`);

export const APIREGISTRATION_TYPES: readonly TypeDef[] = [
  type(`${APIREGISTRATION_V1}.APIService`, "A server for a group and version of the API: the API server itself (local) or a Service it proxies to.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata; the name is VERSION.GROUP."),
    spec: f(2, r("APIServiceSpec"), "Where the group version is served."),
    status: f(3, r("APIServiceStatus"), "Whether it is available."),
  }),
  type(`${APIREGISTRATION_V1}.APIServiceSpec`, "Where a group version is served.", {
    service: f(1, r("ServiceReference"), "The Service that serves the group version; null: the API server itself (local)."),
    group: f(2, s.string(), "The API group."),
    version: f(3, s.string(), "The API version."),
    insecureSkipTLSVerify: f(4, s.bool(), "Do not verify the serving certificate of the service (discouraged)."),
    caBundle: f(5, s.string({ format: "byte" }), "PEM CA bundle that signs the service's serving certificate."),
    groupPriorityMinimum: f(7, s.int32(), "The group's place in discovery: the highest of its APIServices' minimums orders the groups.", { required: true }),
    versionPriority: f(8, s.int32(), "The version's place within its group (highest first, then kube-like version order).", { required: true }),
  }),
  type(`${APIREGISTRATION_V1}.ServiceReference`, "A Service by namespace and name, and its port.", {
    namespace: f(1, s.string(), "The Service's namespace."),
    name: f(2, s.string(), "The Service's name."),
    port: f(3, s.int32(), "A port of the Service (default 443).", { default: 443 }),
  }),
  type(`${APIREGISTRATION_V1}.APIServiceStatus`, "The state of an APIService.", {
    conditions: f(1, s.array(r("APIServiceCondition"), { listType: "map", listMapKeys: ["type"] }), "Its conditions (Available).", { patchStrategy: "merge", patchMergeKey: "type" }),
  }),
  type(`${APIREGISTRATION_V1}.APIServiceCondition`, "A condition of an APIService.", {
    type: f(1, s.string(), "The condition's type (Available).", { required: true }),
    status: f(2, s.string(), "True, False or Unknown.", { required: true }),
    lastTransitionTime: f(3, s.time(), "When the status last changed."),
    reason: f(4, s.string(), "The reason of the last change, in CamelCase."),
    message: f(5, s.string(), "A human-readable message about the last change."),
  }),
  listOf(APIREGISTRATION_V1, "APIService", "A list of APIServices."),
];
