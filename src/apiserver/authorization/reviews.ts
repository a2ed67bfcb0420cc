// The access reviews of authorization.<suffix>/v1 (api/authorization),
// answered with the server's own authorizers and never stored: POST
// subjectaccessreviews (any user; the filters have already checked the caller
// may create them), namespaces/NS/localsubjectaccessreviews (the same, in NS:
// spec.resourceAttributes.namespace must be NS), selfsubjectaccessreviews
// (the caller) and selfsubjectrulesreviews (the caller's rules in a
// namespace, from the authorizers that can list theirs: RBAC, AlwaysAllow;
// any other makes the answer `incomplete`, as upstream). Bodies are JSON,
// YAML or Protobuf (kubectl's `auth can-i` sends Protobuf); the answer is
// JSON. Validation and messages are upstream's (pkg/apis/authorization/validation,
// pkg/registry/authorization).

import { AUTHORIZATION_REVIEWS, AUTHORIZATION_V1, AUTHORIZATION_VERSION, type AuthorizationReviewResource, type NonResourceRule, type ResourceRule, type SubjectAccessReviewSpec, type SubjectAccessReviewStatus, type SubjectRulesReviewStatus } from "../../api/authorization/index.js";
import { ApiError, badRequest, buildStatus, field, invalid, methodNotSupported, type FieldError } from "../../machinery/index.js";
import { negotiate, parseAccept } from "../../machinery/negotiation.js";
import { decide, type Authorizer, type RequestAttributes, type UserInfo } from "../filters/index.js";
import { methodAction } from "../handlers/authentication.js";
import { readReviewBody, type ReviewDecoding } from "../http/review-body.js";
import { sendJson, type Incoming, type Outgoing } from "../http/respond.js";
import { aggregate, resolveRules } from "./rules.js";

export interface AuthorizationReviews extends ReviewDecoding {
  /** The group names served: the profile's authorization group and upstream's. */
  readonly groups: readonly string[];
  /** The server's authorizers, in --authorization-mode's order (the same the filter chain asks). */
  readonly authorizers: readonly Authorizer[];
}

type ReviewBody = Record<string, unknown> & { metadata?: Record<string, unknown> | null; spec?: Record<string, unknown> | null };

/** Whether the path names one of the reviews (the router asks before looking up stored kinds). */
export function isAuthorizationReview(reviews: AuthorizationReviews, group: string, version: string, resource: string, namespace: string | undefined): boolean {
  if (version !== AUTHORIZATION_VERSION || !reviews.groups.includes(group) || !(resource in AUTHORIZATION_REVIEWS)) return false;
  return (namespace !== undefined) === (resource === "localsubjectaccessreviews");
}

export async function handleAuthorizationReview(
  reviews: AuthorizationReviews, req: Incoming, res: Outgoing, path: { group: string; resource: string; namespace?: string | undefined }, user: UserInfo,
): Promise<void> {
  const resource = path.resource as AuthorizationReviewResource;
  const kind = AUTHORIZATION_REVIEWS[resource];
  if (req.method !== "POST") throw methodNotSupported({ group: path.group, resource }, methodAction(req.method));
  // The answer is the review itself: a client that accepts only a Table or metadata of it gets upstream's 406.
  const plain = parseAccept(req.headers.accept).filter((r) => !r.params["as"]);
  if (plain.length === 0) {
    const as = parseAccept(req.headers.accept).find((r) => r.params["as"])?.params["as"] ?? "Table";
    throw new ApiError(buildStatus({ code: 406, reason: "NotAcceptable", message: `the resource ${resource}.${path.group} does not support being converted to a ${as}` }));
  }
  negotiate(plain.map((r) => `${r.type}/${r.subtype}`).join(", "), { cbor: reviews.cbor, protobuf: true, list: false }); // a 406 when no format is ours
  const apiVersion = `${path.group}/${AUTHORIZATION_VERSION}`;
  const body = await readReview(reviews, req, apiVersion, kind);
  const gk = { group: path.group, kind };
  if (resource === "selfsubjectrulesreviews") {
    const namespace = (body.spec as { namespace?: unknown } | null | undefined)?.namespace;
    if (typeof namespace !== "string" || namespace === "") throw badRequest("no namespace on request");
    const status = await rulesReview(reviews.authorizers, user, namespace);
    return sendJson(res, 201, { kind, apiVersion, metadata: { creationTimestamp: null }, spec: {}, status });
  }
  const spec = (body.spec ?? {}) as SubjectAccessReviewSpec;
  const metadata = { ...(body.metadata ?? {}) };
  if (resource === "localsubjectaccessreviews") {
    // As upstream's create handler: the object's namespace defaults to the URL's and may not differ from it.
    if (metadata.namespace !== undefined && metadata.namespace !== null && metadata.namespace !== "" && metadata.namespace !== path.namespace) {
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
    }
    metadata.namespace = path.namespace;
  }
  const errs = validate(resource, spec, metadata);
  if (errs.length > 0) throw invalid(gk, "", errs);
  const subject: UserInfo = resource === "selfsubjectaccessreviews" ? user : {
    name: spec.user ?? "",
    groups: spec.groups ?? [],
    ...(spec.uid ? { uid: spec.uid } : {}),
    ...(spec.extra ? { extra: spec.extra } : {}),
  };
  const d = await decide(reviews.authorizers, subject, attributesOf(spec));
  const status: SubjectAccessReviewStatus = {
    allowed: d.decision === "Allow",
    ...(d.decision === "Deny" ? { denied: true } : {}),
    ...(d.reason ? { reason: d.reason } : {}),
  };
  return sendJson(res, 201, { ...body, kind, apiVersion, metadata: { ...metadata, creationTimestamp: null }, spec, status });
}

/** The body as an object, its kind and apiVersion checked when given, its spec's strings too. */
async function readReview(reviews: AuthorizationReviews, req: Incoming, apiVersion: string, kind: string): Promise<ReviewBody> {
  const sent = await readReviewBody(req, reviews, apiVersion, kind, `${AUTHORIZATION_V1}.${kind}`);
  if (sent === undefined) return {};
  for (const key of ["spec", "metadata"] as const) {
    const v = sent[key];
    if (v !== undefined && v !== null && (typeof v !== "object" || Array.isArray(v))) throw badRequest(`${key}: the ${kind}'s ${key} must be an object`);
  }
  checkStrings(sent.spec as Record<string, unknown> | undefined);
  return sent as ReviewBody;
}

/** The spec's string fields must be strings (a malformed body is a 400, never a crash). */
function checkStrings(spec: Record<string, unknown> | null | undefined): void {
  if (spec === undefined || spec === null) return;
  const strings = (where: string, o: unknown, keys: readonly string[]) => {
    if (o === undefined || o === null) return;
    if (typeof o !== "object" || Array.isArray(o)) throw badRequest(`${where} must be an object`);
    for (const k of keys) {
      const v = (o as Record<string, unknown>)[k];
      if (v !== undefined && v !== null && typeof v !== "string") throw badRequest(`${where}.${k} must be a string`);
    }
  };
  strings("spec", spec, ["user", "uid", "namespace"]);
  strings("spec.resourceAttributes", spec.resourceAttributes, ["namespace", "verb", "group", "version", "resource", "subresource", "name"]);
  strings("spec.nonResourceAttributes", spec.nonResourceAttributes, ["path", "verb"]);
  const groups = spec.groups;
  if (groups !== undefined && groups !== null && !(Array.isArray(groups) && groups.every((g) => typeof g === "string"))) throw badRequest("spec.groups must be a list of strings");
  const extra = spec.extra;
  if (extra !== undefined && extra !== null) {
    const ok = typeof extra === "object" && !Array.isArray(extra) &&
      Object.values(extra).every((v) => v === null || (Array.isArray(v) && v.every((s) => typeof s === "string")));
    if (!ok) throw badRequest("spec.extra must map keys to lists of strings");
  }
}

/** Upstream's ValidateSubjectAccessReview and friends. */
function validate(resource: AuthorizationReviewResource, spec: SubjectAccessReviewSpec, metadata: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const hasResource = spec.resourceAttributes !== undefined && spec.resourceAttributes !== null;
  const hasNonResource = spec.nonResourceAttributes !== undefined && spec.nonResourceAttributes !== null;
  if (hasResource && hasNonResource) errs.push(field.invalid("spec.nonResourceAttributes", spec.nonResourceAttributes, "cannot be specified in combination with resourceAttributes"));
  if (!hasResource && !hasNonResource) errs.push(field.invalid("spec.resourceAttributes", null, "exactly one of nonResourceAttributes or resourceAttributes must be specified"));
  if (resource !== "selfsubjectaccessreviews" && (spec.user ?? "") === "" && (spec.groups ?? []).length === 0) {
    errs.push(field.invalid("spec.user", spec.user ?? "", "at least one of user or group must be specified"));
  }
  const local = resource === "localsubjectaccessreviews";
  const extraMeta = Object.entries(metadata).filter(([k, v]) => k !== "managedFields" && !(local && k === "namespace") && !isEmpty(v));
  if (extraMeta.length > 0) errs.push(field.invalid("metadata", metadata, local ? "must be empty except for namespace" : "must be empty"));
  if (local) {
    if (hasResource && (spec.resourceAttributes!.namespace ?? "") !== metadata.namespace) {
      errs.push(field.invalid("spec.resourceAttributes.namespace", spec.resourceAttributes!.namespace ?? "", "must match metadata.namespace"));
    }
    if (hasNonResource) errs.push(field.invalid("spec.nonResourceAttributes", spec.nonResourceAttributes, "disallowed on this kind of request"));
  }
  return errs;
}

function isEmpty(v: unknown): boolean {
  return v === null || v === undefined || v === "" || v === 0 || (Array.isArray(v) && v.length === 0) || (typeof v === "object" && Object.keys(v).length === 0);
}

/** The request the spec describes, as the authorizers see requests (upstream's AuthorizationAttributesFrom). */
function attributesOf(spec: SubjectAccessReviewSpec): RequestAttributes {
  const r = spec.resourceAttributes;
  if (r !== undefined && r !== null) {
    return {
      resourceRequest: true, verb: r.verb ?? "", apiGroup: r.group ?? "", apiVersion: r.version ?? "", resource: r.resource ?? "",
      subresource: r.subresource ?? "", namespace: r.namespace ?? "", name: r.name ?? "", path: "",
    };
  }
  const n = spec.nonResourceAttributes ?? {};
  return { resourceRequest: false, verb: n.verb ?? "", apiGroup: "", apiVersion: "", resource: "", subresource: "", namespace: "", name: "", path: n.path ?? "" };
}

async function rulesReview(authorizers: readonly Authorizer[], user: UserInfo, namespace: string): Promise<SubjectRulesReviewStatus> {
  const { rules, errors, incomplete } = await resolveRules(authorizers, user, namespace);
  const resourceRules: ResourceRule[] = [];
  const nonResourceRules: NonResourceRule[] = [];
  for (const r of rules) {
    const verbs = r.verbs ?? [];
    if ((r.resources ?? []).length > 0) {
      resourceRules.push({
        verbs,
        ...((r.apiGroups ?? []).length > 0 ? { apiGroups: r.apiGroups } : {}),
        resources: r.resources!,
        ...((r.resourceNames ?? []).length > 0 ? { resourceNames: r.resourceNames } : {}),
      });
    }
    if ((r.nonResourceURLs ?? []).length > 0) nonResourceRules.push({ verbs, nonResourceURLs: r.nonResourceURLs! });
  }
  return { resourceRules, nonResourceRules, incomplete, ...(errors.length > 0 ? { evaluationError: aggregate(errors) } : {}) };
}
