// Authorization: may this user do what the request attributes say? Each
// Authorizer allows, denies or has no opinion; the first that decides wins,
// and a request none allows is a 403 with upstream's wording. Today's policy
// is AlwaysAllow (whoever authenticated may do everything); the Node and RBAC
// authorizers (issue 14) go in the list before it or replace it.

import { forbidden, goQuote } from "../../machinery/index.js";
import { addAuditAnnotation } from "../audit/index.js";
import { ANONYMOUS } from "./authentication.js";
import type { Filter, UserInfo } from "./context.js";
import type { RequestAttributes } from "./request-info.js";

export interface Decision {
  readonly decision: "Allow" | "Deny" | "NoOpinion";
  /** Why, for the 403's message and audit. */
  readonly reason?: string;
}

export interface Authorizer {
  authorize(user: UserInfo, request: RequestAttributes): Decision | Promise<Decision>;
}

const ALLOW: Decision = Object.freeze({ decision: "Allow" });

/** `--authorization-mode=AlwaysAllow`. */
export const alwaysAllow: Authorizer = { authorize: () => ALLOW };

export interface AuthorizationOptions {
  /** Asked in order until one allows or denies. */
  readonly authorizers: readonly Authorizer[];
  /** The group of the audit annotations `<group>/decision` and `<group>/reason` (naming.authorizationGroup; default upstream's). */
  readonly authorizationGroup?: string;
}

export function authorizationFilter({ authorizers, authorizationGroup = "authorization.k8s.io" }: AuthorizationOptions): Filter {
  const decisionKey = `${authorizationGroup}/decision`;
  const reasonKey = `${authorizationGroup}/reason`;
  return async (ctx, next) => {
    // Authentication runs first and always sets a user (anonymous on public paths).
    const user = ctx.user ?? ANONYMOUS;
    const d = await decide(authorizers, user, ctx.attributes);
    // Upstream's annotations on the audit event: allow or forbid, and the authorizer's reason (possibly empty).
    addAuditAnnotation(ctx.req, decisionKey, d.decision === "Allow" ? "allow" : "forbid");
    addAuditAnnotation(ctx.req, reasonKey, d.reason ?? "");
    if (d.decision === "Allow") return next();
    throw refusal(user, ctx.attributes, d.reason ?? "");
  };
}

/**
 * Upstream's union authorizer: the first Allow or Deny wins; when nobody
 * decides, NoOpinion with their reasons joined. The filter and the access
 * reviews (authorization/reviews.ts) ask the same way.
 */
export async function decide(authorizers: readonly Authorizer[], user: UserInfo, attributes: RequestAttributes): Promise<Decision> {
  const reasons: string[] = [];
  for (const a of authorizers) {
    const d = await a.authorize(user, attributes);
    if (d.decision !== "NoOpinion") return d;
    if (d.reason) reasons.push(d.reason);
  }
  return { decision: "NoOpinion", reason: reasons.join("\n") };
}

/** Upstream's 403: `pods "x" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "team-b"`. */
export function refusal(user: UserInfo, a: RequestAttributes, reason: string): Error {
  const who = `User ${goQuote(user.name)} cannot ${a.verb}`;
  const resource = goQuote(a.subresource === "" ? a.resource : `${a.resource}/${a.subresource}`);
  const message = !a.resourceRequest
    ? `${who} path ${goQuote(a.path)}`
    : `${who} resource ${resource} in API group ${goQuote(a.apiGroup)} ${a.namespace !== "" ? `in the namespace ${goQuote(a.namespace)}` : "at the cluster scope"}`;
  return forbidden({ group: a.apiGroup, resource: a.resource }, a.name, reason === "" ? message : `${message}: ${reason}`);
}
