// autoscaling/v1 Scale: the body of every `/scale` subresource (kubectl
// scale reads and writes it). Protobuf field numbers from
// k8s.io/api/autoscaling/v1/generated.proto.

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1 } from "../apps/schemas.js";

export const AUTOSCALING_V1 = "io.k8s.api.autoscaling.v1";

export const AUTOSCALING_TYPES: readonly TypeDef[] = [
  type(`${AUTOSCALING_V1}.Scale`, "The replica count of a scalable resource, read and written through its scale subresource.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Metadata of the scaled object."),
    spec: f(2, s.ref(`${AUTOSCALING_V1}.ScaleSpec`), "The desired replica count."),
    status: f(3, s.ref(`${AUTOSCALING_V1}.ScaleStatus`), "The observed replica count and the selector of the counted pods."),
  }),
  type(`${AUTOSCALING_V1}.ScaleSpec`, "The desired scale.", {
    replicas: f(1, s.int32(), "The desired number of replicas."),
  }),
  type(`${AUTOSCALING_V1}.ScaleStatus`, "The observed scale.", {
    replicas: f(1, s.int32(), "The observed number of replicas.", { required: true }),
    selector: f(2, s.string(), "The label selector of the counted pods, in query-string form (`app=web,tier in (a,b)`)."),
  }),
];

/** What a Scale looks like on the wire. */
export interface Scale {
  apiVersion: string;
  kind: "Scale";
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string; creationTimestamp?: string | null };
  spec?: { replicas?: number };
  status?: { replicas: number; selector?: string };
}
