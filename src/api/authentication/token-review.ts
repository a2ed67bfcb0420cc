// TokenReview (authentication.<suffix>/v1): "whose token is this", asked by
// a component that was handed a bearer token. Create-only and never stored:
// the answer says whether the server knows the token and, if so, its user.
// Served under the same group names as SelfSubjectReview.

import type { UserInfoStatus } from "./self-subject-review.js";

export const TOKEN_REVIEWS = "tokenreviews";
export const TOKEN_REVIEW_KIND = "TokenReview";

export interface TokenReview {
  apiVersion: string;
  kind: typeof TOKEN_REVIEW_KIND;
  metadata: { creationTimestamp: string | null };
  spec: { token: string; audiences?: string[] };
  status: { authenticated: boolean; user: UserInfoStatus | Record<string, never>; audiences?: string[]; error?: string };
}
