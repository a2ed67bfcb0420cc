// The `Status` object every API error leaves the server as (KUBECTL.md, "Errors").
// buildStatus() emits fields in upstream's order and omits empty ones as Go's
// `omitempty` does, so JSON.stringify gives upstream's bytes.

import type { ListMeta } from "./meta.js";

/** metav1.StatusReason values; "" is StatusReasonUnknown (omitted on the wire). */
export type StatusReason =
  | ""
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Gone"
  | "Invalid"
  | "ServerTimeout"
  /** Upstream's StatusReasonStoreReadError; this is its wire value. */
  | "StorageReadError"
  | "Timeout"
  | "TooManyRequests"
  | "BadRequest"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "RequestEntityTooLarge"
  | "UnsupportedMediaType"
  | "InternalError"
  | "Expired"
  | "ServiceUnavailable";

export interface StatusCause {
  /** The cause type (a field error type, "ResourceVersionTooLarge", ...); JSON name `reason`. */
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  /** For most errors the resource (plural), for Invalid the kind — as upstream. */
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: "Status";
  apiVersion: "v1";
  metadata: ListMeta;
  status: "Success" | "Failure";
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

export interface StatusInit {
  code: number;
  reason: StatusReason;
  message: string;
  /** Kept even when every field is empty: upstream sends `"details":{}` for a non-nil pointer. */
  details?: StatusDetails;
  /** List metadata, e.g. `continue` on an inconsistent-continuation 410. */
  metadata?: ListMeta;
  status?: "Success" | "Failure";
}

/** A Status with upstream's field order and omitempty behaviour. */
export function buildStatus(init: StatusInit): Status {
  const s: Status = {
    kind: "Status",
    apiVersion: "v1",
    metadata: init.metadata ? { ...init.metadata } : {},
    status: init.status ?? "Failure",
  } as Status;
  if (init.message) s.message = init.message;
  if (init.reason) s.reason = init.reason;
  if (init.details) s.details = normalizeDetails(init.details);
  s.code = init.code;
  return s;
}

function normalizeDetails(d: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  if (d.name) out.name = d.name;
  if (d.group) out.group = d.group;
  if (d.kind) out.kind = d.kind;
  if (d.uid) out.uid = d.uid;
  if (d.causes && d.causes.length > 0) {
    out.causes = d.causes.map((c) => {
      const cause: StatusCause = {};
      if (c.reason) cause.reason = c.reason;
      if (c.message) cause.message = c.message;
      if (c.field) cause.field = c.field;
      return cause;
    });
  }
  if (d.retryAfterSeconds) out.retryAfterSeconds = d.retryAfterSeconds;
  return out;
}

/** True when a decoded body looks like a Status (kind Status, apiVersion v1 or meta/v1). */
export function isStatusObject(body: unknown): body is Status {
  if (body === null || typeof body !== "object") return false;
  const b = body as { kind?: unknown; apiVersion?: unknown };
  return b.kind === "Status" && (b.apiVersion === "v1" || (typeof b.apiVersion === "string" && /^meta\.[^/]+\/v1$/.test(b.apiVersion)));
}
