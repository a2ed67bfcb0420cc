// serviceaccounts: identities for pods. PUT may create (as upstream); the
// table counts the listed secrets. `serviceaccounts/NAME/token` issues the
// account's tokens (TokenRequest: ../subresources/token.ts).

import type { Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { token } from "../subresources/token.js";
import { nameAgeTable } from "../table-format.js";
import { CORE_V1 } from "./schemas.js";
import type { ServiceAccount } from "./types.js";

export function serviceAccountsResource(naming: Naming): ResourceDefinition {
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
    subresources: [token(naming)],

    table: nameAgeTable<ServiceAccount>({
      columns: [{ name: "Secrets", type: "string", description: "Number of secrets listed.", priority: 0 }],
      cells: (sa) => [(sa.secrets ?? []).length],
    }),
  });
}
