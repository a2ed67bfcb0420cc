// The four access reviews of authorization.<suffix>/v1 (upstream's
// authorization.k8s.io/v1): questions put to the server's authorizers,
// create-only and never stored. kubectl (`auth can-i`) posts them to
// authorization.k8s.io, a name compiled into it, so that spelling is served
// beside the product's on every profile, as the authentication reviews are.

import type { Naming } from "../../machinery/naming.js";

export const AUTHORIZATION_VERSION = "v1";

/** resource → kind; LocalSubjectAccessReview is the namespaced one. */
export const AUTHORIZATION_REVIEWS = {
  subjectaccessreviews: "SubjectAccessReview",
  localsubjectaccessreviews: "LocalSubjectAccessReview",
  selfsubjectaccessreviews: "SelfSubjectAccessReview",
  selfsubjectrulesreviews: "SelfSubjectRulesReview",
} as const;
export type AuthorizationReviewResource = keyof typeof AUTHORIZATION_REVIEWS;

export interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

export interface NonResourceAttributes {
  path?: string;
  verb?: string;
}

/** SubjectAccessReviewSpec; SelfSubjectAccessReviewSpec is its first two fields. */
export interface SubjectAccessReviewSpec {
  resourceAttributes?: ResourceAttributes | null;
  nonResourceAttributes?: NonResourceAttributes | null;
  user?: string;
  groups?: string[] | null;
  extra?: Record<string, string[]> | null;
  uid?: string;
}

export interface SubjectAccessReviewStatus {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs?: string[];
}

export interface SubjectRulesReviewStatus {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  incomplete: boolean;
  evaluationError?: string;
}

/** The group names the reviews are served under: the profile's, and upstream's. */
export function authorizationGroups(naming: Naming): readonly string[] {
  return [...new Set([naming.authorizationGroup, "authorization.k8s.io"])];
}
