// What the four RBAC kinds declare alike: group, version, names from the
// kind, schema, and names that are path segments (upstream's
// ValidateRBACName: "system:basic-user" is a name).

import type { Naming } from "../../machinery/naming.js";
import { RBAC_V1 } from "./schemas.js";

export function rbacKind(naming: Naming, kind: string, namespaced: boolean) {
  return {
    group: naming.rbacGroup,
    versions: ["v1"],
    resource: `${kind.toLowerCase()}s`,
    singular: kind.toLowerCase(),
    kind,
    namespaced,
    schema: `${RBAC_V1}.${kind}`,
    nameRule: "path-segment",
  } as const;
}
