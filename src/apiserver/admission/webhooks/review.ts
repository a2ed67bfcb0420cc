// AdmissionReview admission.k8s.io/v1 as webhooks in the wild speak it: the
// request built from the admission attributes, the response checked as
// upstream checks it. The group is upstream's literal `admission.k8s.io` in
// both naming profiles (webhook libraries compare it); a response in
// `admission.<suffix>/v1` is accepted too.

import { randomUUID } from "node:crypto";
import type { AdmissionAttributes } from "../../../api/admission.js";
import type { ApiObject } from "../../../machinery/index.js";
import type { ServedAs } from "./equivalent.js";

export const REVIEW_API_VERSION = "admission.k8s.io/v1";

export interface ReviewStatus {
  code?: number;
  message?: string;
  reason?: string;
  status?: string;
}

export interface ReviewResponse {
  uid: string;
  allowed: boolean;
  status?: ReviewStatus;
  patch?: string;
  patchType?: string;
  auditAnnotations?: Record<string, string>;
  warnings?: string[];
}

const OPTIONS_KIND = { CREATE: "CreateOptions", UPDATE: "UpdateOptions", DELETE: "DeleteOptions" } as const;

function withTypeMeta(obj: ApiObject | undefined, apiVersion: string, kind: string): ApiObject | null {
  if (obj === undefined) return null;
  return { ...obj, apiVersion: obj.apiVersion ?? apiVersion, kind: obj.kind ?? kind };
}

/**
 * The request half of a review; `uid` fresh per call. `as`: the resource the
 * webhook matched when it is an equivalent of the request's (matchPolicy
 * Equivalent): `kind` and `resource` name it, `requestKind` and
 * `requestResource` the request's own, and the objects are already in it.
 */
export function reviewRequest(attrs: AdmissionAttributes, version: string, as?: ServedAs): { apiVersion: string; kind: string; request: Record<string, unknown> } {
  const { group, resource } = attrs.resource;
  const requestKind = { group, version, kind: attrs.kind };
  const requestResource = { group, version, resource };
  const kind = as === undefined ? requestKind : { group: as.group, version: as.version, kind: as.kind };
  const res = as === undefined ? requestResource : { group: as.group, version: as.version, resource: as.resource };
  const apiVersion = kind.group === "" ? kind.version : `${kind.group}/${kind.version}`;
  const user = attrs.request?.user;
  const request: Record<string, unknown> = {
    uid: randomUUID(),
    kind,
    resource: res,
    ...(attrs.subresource ? { subResource: attrs.subresource, requestSubResource: attrs.subresource } : {}),
    requestKind,
    requestResource,
    name: attrs.name,
    ...(attrs.namespace ? { namespace: attrs.namespace } : {}),
    operation: attrs.operation,
    userInfo: user === undefined ? {} : { username: user.name, ...(user.uid ? { uid: user.uid } : {}), groups: [...user.groups], ...(user.extra ? { extra: user.extra } : {}) },
    object: withTypeMeta(attrs.object, apiVersion, kind.kind),
    oldObject: withTypeMeta(attrs.oldObject, apiVersion, kind.kind),
    dryRun: attrs.dryRun,
    // A connect request has no operation options (upstream sends none).
    ...(attrs.operation === "CONNECT" ? {} : { options: { apiVersion: "meta.k8s.io/v1", kind: OPTIONS_KIND[attrs.operation], ...(attrs.dryRun ? { dryRun: ["All"] } : {}) } }),
  };
  return { apiVersion: REVIEW_API_VERSION, kind: "AdmissionReview", request };
}

/** The response of a review, or an error text (upstream's wording) when it is not one. */
export function reviewResponse(body: unknown, uid: string): ReviewResponse | string {
  const review = body as { apiVersion?: unknown; kind?: unknown; response?: Partial<ReviewResponse> } | null;
  if (typeof review !== "object" || review === null) return "received invalid webhook response: not an object";
  const apiVersion = typeof review.apiVersion === "string" ? review.apiVersion : "";
  if (!/^admission\.[^/]+\/v1$/.test(apiVersion) || review.kind !== "AdmissionReview") {
    return `received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${apiVersion}, Kind=${String(review.kind ?? "")}`;
  }
  const r = review.response;
  if (typeof r !== "object" || r === null) return "received invalid webhook response: webhook response was absent";
  if (r.uid !== uid) return `received invalid webhook response: expected response.uid="${uid}", got "${String(r.uid ?? "")}"`;
  if (typeof r.allowed !== "boolean") return "received invalid webhook response: response.allowed must be a bool";
  if (r.patch !== undefined && r.patchType !== "JSONPatch") return `received invalid webhook response: response.patchType must be JSONPatch, got "${String(r.patchType ?? "")}"`;
  return r as ReviewResponse;
}
