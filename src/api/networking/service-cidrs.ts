// servicecidrs (networking.<suffix>/v1, cluster-scoped, status subresource):
// the ranges Services get ClusterIPs from. The API server creates `kubernetes`
// from --service-cluster-ip-range and keeps each object's Ready condition and
// its finalizer (src/apiserver/services/service-cidrs.ts). upstream's
// ValidateServiceCIDR/Update messages and table (NAME CIDRS AGE).

import { field, parseCidr, validateCidr, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { status } from "../subresources/index.js";
import { nameAgeTable } from "../table-format.js";
import { NETWORKING_V1 } from "./schemas.js";
import type { ServiceCIDR } from "./types.js";

/** The ServiceCIDR the API server makes from its service range (upstream's well-known name). */
export const DEFAULT_SERVICE_CIDR = "kubernetes";

/** The finalizer that keeps a ServiceCIDR while addresses in it are in use (upstream: networking.k8s.io/service-cidr-finalizer). */
export function serviceCIDRFinalizer(naming: Naming): string {
  return `${naming.networkingGroup}/service-cidr-finalizer`;
}

function validate(sc: ServiceCIDR): FieldError[] {
  const path = "spec.cidrs";
  const cidrs = sc.spec?.cidrs ?? [];
  if (cidrs.length === 0) return [field.required(path, "at least one CIDR required")];
  if (cidrs.length > 2) return [field.invalid(path, sc.spec, "may only hold up to 2 values")];
  if (cidrs.length === 2) {
    const [a, b] = cidrs.map((c) => parseCidr(c));
    if (a === undefined || b === undefined || a.family === b.family) {
      return [field.invalid(path, sc.spec, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64")];
    }
  }
  return cidrs.flatMap((cidr, i) => validateCidr(cidr).map((m) => field.invalid(`${path}[${i}]`, cidr, m)));
}

export function serviceCIDRs(naming: Naming): ResourceDefinition {
  return defineResource<ServiceCIDR>({
    group: naming.networkingGroup,
    versions: ["v1"],
    resource: "servicecidrs",
    singular: "servicecidr",
    kind: "ServiceCIDR",
    namespaced: false,
    schema: `${NETWORKING_V1}.ServiceCIDR`,
    subresources: [status({ validate: () => [] })],
    prepareForCreate(sc) {
      sc.status = {};
      // Held until no address in the range is in use (the API server removes it).
      const finalizer = serviceCIDRFinalizer(naming);
      const finalizers = (sc.metadata.finalizers ??= []);
      if (!finalizers.includes(finalizer)) finalizers.push(finalizer);
    },
    validate,
    validateUpdate(sc, old) {
      if (JSON.stringify(sc.spec?.cidrs ?? []) === JSON.stringify(old.spec?.cidrs ?? [])) return [];
      return [field.immutable("spec.cidrs", sc.spec?.cidrs ?? [])];
    },
    table: nameAgeTable<ServiceCIDR>({
      columns: [{ name: "CIDRs", type: "string", description: "CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or \"2001:db8::/64\") from which to assign service cluster IPs.", priority: 0 }],
      cells: (sc) => [(sc.spec?.cidrs ?? []).join(",")],
    }),
  });
}
