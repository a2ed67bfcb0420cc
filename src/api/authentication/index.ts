// The authentication.<suffix>/v1 API group: TokenReview and
// SelfSubjectReview. They are answered by the API server
// (apiserver/handlers/authentication.ts) and never stored; the module
// registers their schemas (OpenAPI, `kubectl explain`) and declares them
// create-only so discovery lists them as upstream's does.

import { f, s, type, type SchemaRegistry, type TypeDef } from "../../machinery/schema.js";
import type { Naming } from "../../machinery/naming.js";
import { META_V1 } from "../meta/schemas.js";
import { defineResource, type ApiGroupModule, type ResourceDefinition } from "../resource.js";
import { AUTHENTICATION_VERSION, SELF_SUBJECT_REVIEW_KIND, SELF_SUBJECT_REVIEWS } from "./self-subject-review.js";
import { TOKEN_REVIEW_KIND, TOKEN_REVIEWS } from "./token-review.js";

export * from "./self-subject-review.js";
export * from "./token-review.js";

/** Upstream's definition names; field numbers from k8s.io/api/authentication/v1/generated.proto. */
export const AUTHENTICATION_V1 = "io.k8s.api.authentication.v1";
const ref = (name: string) => s.ref(`${AUTHENTICATION_V1}.${name}`);
const strings = (tag: number, description: string) => f(tag, s.array(s.string(), { listType: "atomic" }), description);

export const AUTHENTICATION_TYPES: readonly TypeDef[] = [
  type(`${AUTHENTICATION_V1}.UserInfo`, "A user as an authenticator knows it.", {
    username: f(1, s.string(), "The user's name."),
    uid: f(2, s.string(), "A value unique to this user across time."),
    groups: strings(3, "The groups the user is in."),
    extra: f(4, s.map(s.any()), "What else the authenticator knows of the user (lists of strings by key)."),
  }),
  type(`${AUTHENTICATION_V1}.TokenReviewSpec`, "The token to check.", {
    token: f(1, s.string(), "The bearer token."),
    audiences: strings(2, "The audiences the token must be meant for (default: the API server's)."),
  }),
  type(`${AUTHENTICATION_V1}.TokenReviewStatus`, "Whether the token is known, and whose it is.", {
    authenticated: f(1, s.bool(), "True when the token is known and good for the audiences."),
    user: f(2, ref("UserInfo"), "Whose token it is."),
    audiences: strings(4, "The audiences the token is good for, of those asked."),
    error: f(3, s.string(), "Why the token could not be checked."),
  }),
  type(`${AUTHENTICATION_V1}.TokenReview`, "Asks whose a bearer token is. Create-only; never stored.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object's metadata."),
    spec: f(2, ref("TokenReviewSpec"), "The token.", { required: true }),
    status: f(3, ref("TokenReviewStatus"), "The server's answer."),
  }),
  type(`${AUTHENTICATION_V1}.SelfSubjectReviewStatus`, "The caller as the server sees it.", {
    userInfo: f(1, ref("UserInfo"), "The caller's user, after impersonation."),
  }),
  type(`${AUTHENTICATION_V1}.SelfSubjectReview`, "Asks who the caller is (kubectl auth whoami). Create-only; never stored.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object's metadata."),
    status: f(2, ref("SelfSubjectReviewStatus"), "The server's answer."),
  }),
];

/**
 * A review: created and answered, never stored (discovery lists only
 * `create`). The handlers that answer reviews read their bodies themselves
 * (Protobuf ones too); the declaration serves discovery and OpenAPI.
 */
export function reviewResource(group: string, version: string, resource: string, kind: string, schema: string, namespaced = false): ResourceDefinition {
  return defineResource({ group, versions: [version], resource, singular: "", kind, namespaced, verbs: ["create"], schema, protobuf: false });
}

export const authenticationModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...AUTHENTICATION_TYPES);
  },
  resources: (naming: Naming) => [
    reviewResource(naming.authenticationGroup, AUTHENTICATION_VERSION, TOKEN_REVIEWS, TOKEN_REVIEW_KIND, `${AUTHENTICATION_V1}.${TOKEN_REVIEW_KIND}`),
    reviewResource(naming.authenticationGroup, AUTHENTICATION_VERSION, SELF_SUBJECT_REVIEWS, SELF_SUBJECT_REVIEW_KIND, `${AUTHENTICATION_V1}.${SELF_SUBJECT_REVIEW_KIND}`),
  ],
};
