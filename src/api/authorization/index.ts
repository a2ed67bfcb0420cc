// The authorization.<suffix>/v1 API group: the access reviews
// (SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview,
// SelfSubjectRulesReview). They are answered by the API server and never
// stored: the module registers their schemas and declares them create-only,
// so discovery lists them as upstream's does (the stores skip them).

import type { Naming } from "../../machinery/naming.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { reviewResource } from "../authentication/index.js";
import type { ApiGroupModule } from "../resource.js";
import { AUTHORIZATION_REVIEWS, AUTHORIZATION_VERSION, type AuthorizationReviewResource } from "./reviews.js";
import { AUTHORIZATION_TYPES, AUTHORIZATION_V1 } from "./schemas.js";

export { AUTHORIZATION_TYPES, AUTHORIZATION_V1 } from "./schemas.js";
export * from "./reviews.js";

export const authorizationModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...AUTHORIZATION_TYPES);
  },
  resources: (naming: Naming) =>
    (Object.entries(AUTHORIZATION_REVIEWS) as [AuthorizationReviewResource, string][]).map(([resource, kind]) =>
      reviewResource(naming.authorizationGroup, AUTHORIZATION_VERSION, resource, kind, `${AUTHORIZATION_V1}.${kind}`, resource === "localsubjectaccessreviews")),
};

export default authorizationModule;
