// ipaddresses (networking.<suffix>/v1, cluster-scoped, `ip`): one object per
// allocated address, named by the address in canonical form, pointing at the
// object it belongs to (a Service, for the ClusterIPs the API server's
// allocator hands out). upstream's ValidateIPAddress/Update messages and
// table (NAME PARENTREF).

import { field, isDNS1123Subdomain, isValidPathSegmentName, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { NAME_COLUMN } from "../table-format.js";
import { NETWORKING_V1 } from "./schemas.js";
import type { IPAddress, ParentReference } from "./types.js";

/** The label the API server's allocator puts on the IPAddresses it manages (upstream: ipaddress.kubernetes.io/managed-by). */
export function ipAddressManagedByLabel(naming: Naming): string {
  return `ipaddress.${naming.keyDomain}/managed-by`;
}

/** That label's value on the allocator's objects (upstream: ipallocator.k8s.io). */
export function ipAllocatorName(naming: Naming): string {
  return `ipallocator.${naming.groupSuffix}`;
}

/** upstream's validateIPAddressParentReference. */
function validateParentRef(ref: ParentReference | null | undefined): FieldError[] {
  const path = "spec.parentRef";
  if (ref == null) return [field.required(path, "")];
  const errs: FieldError[] = [];
  // The core group (Services) is the empty value, so group cannot be required.
  if (ref.group) for (const m of isDNS1123Subdomain(ref.group)) errs.push(field.invalid(`${path}.group`, ref.group, m));
  const segment = (key: "resource" | "name" | "namespace", required: boolean) => {
    const value = ref[key] ?? "";
    if (value === "") {
      if (required) errs.push(field.required(`${path}.${key}`, ""));
      return;
    }
    for (const m of isValidPathSegmentName(value)) errs.push(field.invalid(`${path}.${key}`, value, m));
  };
  segment("resource", true);
  segment("name", true);
  segment("namespace", false);
  return errs;
}

/** The PARENTREF cell: resource[.group][/namespace]/name, lower case, as upstream's printer. */
export function parentRefText(ref: ParentReference | null | undefined): string {
  if (ref == null) return "<none>";
  const gr = ref.group ? `${ref.resource ?? ""}.${ref.group}` : ref.resource ?? "";
  return `${gr.toLowerCase()}${ref.namespace ? `/${ref.namespace}` : ""}/${ref.name ?? ""}`;
}

export function ipAddresses(naming: Naming): ResourceDefinition {
  return defineResource<IPAddress>({
    group: naming.networkingGroup,
    versions: ["v1"],
    resource: "ipaddresses",
    singular: "ipaddress",
    kind: "IPAddress",
    namespaced: false,
    shortNames: ["ip"],
    schema: `${NETWORKING_V1}.IPAddress`,
    nameRule: "ip-address",
    validate: (ip) => validateParentRef(ip.spec?.parentRef),
    validateUpdate(ip, old) {
      if (JSON.stringify(ip.spec?.parentRef ?? null) === JSON.stringify(old.spec?.parentRef ?? null)) return [];
      return [field.immutable("spec.parentRef", ip.spec?.parentRef ?? null)];
    },
    table: {
      columns: [
        NAME_COLUMN,
        { name: "ParentRef", type: "string", description: "ParentRef references the resource that an IPAddress is attached to.", priority: 0 },
      ],
      cells: (ip) => [ip.metadata.name ?? "", parentRefText(ip.spec?.parentRef)],
    },
  });
}
