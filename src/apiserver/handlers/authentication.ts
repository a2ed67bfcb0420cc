// The authentication group's two reviews, create-only and never stored
// (api/authentication): POST selfsubjectreviews answers the caller's user as
// authentication and impersonation left it; POST tokenreviews answers the
// user of spec.token, if the server knows it (the admin token,
// --token-auth-file, service-account tokens), for spec.audiences (default the
// API audiences: a service-account token must be meant for one of them, a
// static token is good for the API audiences only, as upstream's
// audience-agnostic wrapper). Any other method is a 405; a body of another kind or
// version is a 400. Bodies are JSON, YAML or Protobuf (kubectl's whoami and
// client-go's TokenReview client, as upstream's conformance suite, send
// Protobuf: http/review-body.ts).

import { AUTHENTICATION_VERSION, SELF_SUBJECT_REVIEW_KIND, SELF_SUBJECT_REVIEWS, type SelfSubjectReview, type UserInfoStatus } from "../../api/authentication/self-subject-review.js";
import { TOKEN_REVIEW_KIND, TOKEN_REVIEWS, type TokenReview } from "../../api/authentication/token-review.js";
import { AUTHENTICATION_V1 } from "../../api/authentication/index.js";
import { badRequest, methodNotSupported } from "../../machinery/index.js";
import { readReviewBody, type ReviewDecoding } from "../http/review-body.js";
import { sendJson, type Incoming, type Outgoing } from "../http/respond.js";
import type { UserInfo } from "../filters/index.js";
import type { TokenCheck } from "../authentication/service-account-tokens.js";

export interface AuthenticationReviews extends ReviewDecoding {
  /** The group names served: the profile's authentication group and upstream's. */
  readonly groups: readonly string[];
  /** The user a bearer token proves, or undefined. */
  reviewToken(token: string): Promise<UserInfo | undefined>;
  /** Service-account tokens: undefined when `token` is not one (then reviewToken is asked). */
  reviewServiceAccountToken?(token: string, audiences: readonly string[] | undefined): Promise<TokenCheck | undefined>;
  /** --api-audiences (what tokens without audiences of their own are good for). */
  readonly apiAudiences?: readonly string[];
}

/** Whether `resource` in `group` is one of the reviews (the router asks before looking up stored kinds). */
export function isAuthenticationReview(reviews: AuthenticationReviews, group: string, version: string, resource: string): boolean {
  return version === AUTHENTICATION_VERSION && reviews.groups.includes(group) && (resource === SELF_SUBJECT_REVIEWS || resource === TOKEN_REVIEWS);
}

export async function handleAuthenticationReview(
  reviews: AuthenticationReviews, req: Incoming, res: Outgoing, group: string, resource: string, user: UserInfo,
): Promise<void> {
  if (req.method !== "POST") throw methodNotSupported({ group, resource }, methodAction(req.method));
  const apiVersion = `${group}/${AUTHENTICATION_VERSION}`;
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  if (resource === SELF_SUBJECT_REVIEWS) {
    await readReviewBody(req, reviews, apiVersion, SELF_SUBJECT_REVIEW_KIND, `${AUTHENTICATION_V1}.${SELF_SUBJECT_REVIEW_KIND}`);
    const review: SelfSubjectReview = { apiVersion, kind: SELF_SUBJECT_REVIEW_KIND, metadata: { creationTimestamp: now }, status: { userInfo: userInfo(user) } };
    return sendJson(res, 201, review);
  }
  const body = await readReviewBody(req, reviews, apiVersion, TOKEN_REVIEW_KIND, `${AUTHENTICATION_V1}.${TOKEN_REVIEW_KIND}`);
  const spec = (body?.spec ?? {}) as { token?: unknown; audiences?: unknown };
  if (typeof spec.token !== "string" || spec.token === "") throw badRequest("token is required for TokenReview in authentication");
  if (spec.audiences != null && (!Array.isArray(spec.audiences) || !spec.audiences.every((a) => typeof a === "string"))) {
    throw badRequest("spec.audiences: must be a list of strings");
  }
  const asked = (spec.audiences ?? []) as string[];
  const review: TokenReview = {
    apiVersion, kind: TOKEN_REVIEW_KIND, metadata: { creationTimestamp: null },
    spec: { token: spec.token, ...(asked.length > 0 ? { audiences: asked } : {}) },
    status: await reviewStatus(reviews, spec.token, asked),
  };
  return sendJson(res, 201, review);
}

async function reviewStatus(reviews: AuthenticationReviews, token: string, asked: readonly string[]): Promise<TokenReview["status"]> {
  const refused = (error?: string): TokenReview["status"] => ({ authenticated: false, user: {}, ...(error !== undefined ? { error } : {}) });
  const serviceAccount = await reviews.reviewServiceAccountToken?.(token, asked.length > 0 ? asked : undefined);
  if (serviceAccount !== undefined) {
    return "user" in serviceAccount ? { authenticated: true, user: userInfo(serviceAccount.user), audiences: [...serviceAccount.audiences] } : refused(serviceAccount.error);
  }
  const found = await reviews.reviewToken(token);
  if (found === undefined) return refused();
  const api = reviews.apiAudiences ?? [];
  const audiences = asked.length > 0 ? asked.filter((a) => api.includes(a)) : api;
  if (asked.length > 0 && audiences.length === 0) return refused(`token audiences ${JSON.stringify(api)} is invalid for the target audiences ${JSON.stringify(asked)}`);
  return { authenticated: true, user: userInfo(found), ...(audiences.length > 0 ? { audiences: [...audiences] } : {}) };
}

function userInfo(user: UserInfo): UserInfoStatus {
  return {
    username: user.name,
    ...(user.uid !== undefined ? { uid: user.uid } : {}),
    groups: [...user.groups],
    ...(user.extra !== undefined ? { extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) } : {}),
  };
}

export function methodAction(method: string | undefined): string {
  return ({ GET: "get", HEAD: "get", PUT: "update", PATCH: "patch", DELETE: "delete" } as Record<string, string>)[method ?? ""] ?? (method ?? "").toLowerCase();
}
