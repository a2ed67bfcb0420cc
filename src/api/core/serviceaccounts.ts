// serviceaccounts: identities for pods. PUT may create (as upstream); the
// table counts the listed secrets. Token issuing lives elsewhere.

import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { CORE_V1 } from "./schemas.js";
import type { ServiceAccount } from "./types.js";

export function serviceAccountsResource(): ResourceDefinition {
  return defineResource<ServiceAccount>({
    group: "",
    versions: ["v1"],
    resource: "serviceaccounts",
    singular: "serviceaccount",
    kind: "ServiceAccount",
    namespaced: true,
    shortNames: ["sa"],
    schema: `${CORE_V1}.ServiceAccount`,
    allowCreateOnUpdate: true,

    table: nameAgeTable<ServiceAccount>({
      columns: [{ name: "Secrets", type: "string", description: "Number of secrets listed.", priority: 0 }],
      cells: (sa) => [(sa.secrets ?? []).length],
    }),
  });
}
