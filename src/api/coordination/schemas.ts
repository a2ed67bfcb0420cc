// Lease types of coordination.<suffix> v1 and v1beta1 (the same fields in
// both; the definition names keep upstream's `io.k8s.api.coordination.*`
// whatever the group suffix, as OpenAPI clients key on them). Protobuf field
// numbers from k8s.io/api/coordination/v1/generated.proto.

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1, listOf } from "../apps/schemas.js";

export const COORDINATION_V1 = "io.k8s.api.coordination.v1";
export const COORDINATION_V1BETA1 = "io.k8s.api.coordination.v1beta1";

function leaseTypes(pkg: string): TypeDef[] {
  return [
    type(`${pkg}.Lease`, "A time-limited claim on a shared resource: who holds it, since when, and for how long.", {
      metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
      spec: f(2, s.ref(`${pkg}.LeaseSpec`), "The current holder and timing of the lease."),
    }),
    type(`${pkg}.LeaseSpec`, "The state of a Lease.", {
      holderIdentity: f(1, s.string(), "Who holds the lease now."),
      leaseDurationSeconds: f(2, s.int32(), "Seconds after renewTime that others must wait before taking the lease over."),
      acquireTime: f(3, s.microTime(), "When the current holder acquired the lease."),
      renewTime: f(4, s.microTime(), "When the current holder last renewed the lease."),
      leaseTransitions: f(5, s.int32(), "How many times the lease has changed holders."),
      strategy: f(6, s.string(), "How coordinated leader election picks the holder; no coordination when unset."),
      preferredHolder: f(7, s.string(), "A better holder the current one should hand the lease to; only with strategy."),
    }),
    listOf(pkg, "Lease", "A list of Leases."),
  ];
}

export const COORDINATION_TYPES: readonly TypeDef[] = [...leaseTypes(COORDINATION_V1), ...leaseTypes(COORDINATION_V1BETA1)];
