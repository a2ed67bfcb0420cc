// The authorization.<suffix>/v1 API group: the access reviews
// (SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview,
// SelfSubjectRulesReview). They are answered by the API server and never
// stored, so the module registers their schemas and declares no stored kind.

import type { SchemaRegistry } from "../../machinery/schema.js";
import type { ApiGroupModule } from "../resource.js";
import { AUTHORIZATION_TYPES } from "./schemas.js";

export { AUTHORIZATION_TYPES, AUTHORIZATION_V1 } from "./schemas.js";
export * from "./reviews.js";

export const authorizationModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...AUTHORIZATION_TYPES);
  },
  resources: () => [],
};

export default authorizationModule;
