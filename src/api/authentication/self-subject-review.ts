// SelfSubjectReview (authentication.<suffix>/v1): "who am I" as the server
// sees the caller. Create-only and never stored: the answer is the request's
// user (after impersonation) in status.userInfo. `kubectl auth whoami` posts
// one to authentication.k8s.io, a name compiled into it, so that spelling is
// served beside the product's on every profile (as the meta group's).

import type { Naming } from "../../machinery/naming.js";

export const SELF_SUBJECT_REVIEWS = "selfsubjectreviews";
export const SELF_SUBJECT_REVIEW_KIND = "SelfSubjectReview";
export const AUTHENTICATION_VERSION = "v1";

/** upstream's authentication/v1 UserInfo. */
export interface UserInfoStatus {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface SelfSubjectReview {
  apiVersion: string;
  kind: typeof SELF_SUBJECT_REVIEW_KIND;
  metadata: { creationTimestamp: string; name?: string };
  status: { userInfo: UserInfoStatus };
}

/** The group names a SelfSubjectReview is served under: the profile's, and upstream's. */
export function authenticationGroups(naming: Naming): readonly string[] {
  return [...new Set([naming.authenticationGroup, "authentication.k8s.io"])];
}
