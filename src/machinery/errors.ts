// ApiError: the one error class the API layers throw; it carries the Status the
// server answers with. Constructors reproduce upstream's messages byte for byte
// (k8s.io/apimachinery/pkg/api/errors and friends) because kubectl prints them.

import type { GroupKind, GroupResource, ListMeta } from "./meta.js";
import { formatGroupKind, formatGroupResource } from "./meta.js";
import { buildStatus } from "./status.js";
import type { Status, StatusCause, StatusDetails, StatusReason } from "./status.js";
import { aggregateFieldErrors, fieldErrorBody } from "./field-errors.js";
import type { FieldError } from "./field-errors.js";
import { goQuote } from "./go-format.js";

/**
 * An API error. `code` is the HTTP status, `reason` the stable machine-readable
 * StatusReason; `status` is the exact body to send.
 */
export class ApiError extends Error {
  readonly status: Status;
  constructor(status: Status, options?: { cause?: unknown }) {
    super(status.message ?? "", options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ApiError";
    this.status = status;
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): StatusReason {
    return this.status.reason ?? "";
  }
  /** Seconds a client should wait before retrying (Retry-After), 0 when none. */
  get retryAfterSeconds(): number {
    return this.status.details?.retryAfterSeconds ?? 0;
  }
}

export function isApiError(err: unknown, reason?: StatusReason): err is ApiError {
  return err instanceof ApiError && (reason === undefined || err.reason === reason);
}

/**
 * The Status to answer with for any thrown value. Non-API errors become a 500
 * with reason unknown and the error's message, as upstream's ErrorToAPIStatus.
 */
export function statusFromError(err: unknown): Status {
  if (err instanceof ApiError) return err.status;
  const message = err instanceof Error ? err.message : String(err);
  return buildStatus({ code: 500, reason: "", message });
}

function apiError(code: number, reason: StatusReason, message: string, extra?: Partial<Pick<Status, "details" | "metadata">>): ApiError {
  return new ApiError(buildStatus({ code, reason, message, details: extra?.details, metadata: extra?.metadata }));
}

// --- 4xx -------------------------------------------------------------------

/** 400 BadRequest with the given message. */
export function badRequest(message: string, details?: StatusDetails): ApiError {
  return apiError(400, "BadRequest", message, details ? { details } : undefined);
}

/** 401: `not authorized` when no message is given, as upstream's NewUnauthorized. */
export function unauthorized(message = ""): ApiError {
  return apiError(401, "Unauthorized", message || "not authorized");
}

/**
 * 403: `pods "x" is forbidden: <reason>`; without a name `pods is forbidden: ...`;
 * without a resource `forbidden: ...`.
 */
export function forbidden(gr: GroupResource, name: string, reason: string): ApiError {
  const res = formatGroupResource(gr);
  let message: string;
  if (gr.group === "" && gr.resource === "") message = `forbidden: ${reason}`;
  else if (name === "") message = `${res} is forbidden: ${reason}`;
  else message = `${res} ${goQuote(name)} is forbidden: ${reason}`;
  return apiError(403, "Forbidden", message, { details: { name, group: gr.group, kind: gr.resource } });
}

/** 404: `pods "x" not found`, `deployments.apps "x" not found`. */
export function notFound(gr: GroupResource, name: string): ApiError {
  return apiError(404, "NotFound", `${formatGroupResource(gr)} ${goQuote(name)} not found`, {
    details: { name, group: gr.group, kind: gr.resource },
  });
}

/** 404 for a path that names no resource, group or document: upstream's text, empty details (as kubectl shows it). */
export function pathNotFound(): ApiError {
  return apiError(404, "NotFound", "the server could not find the requested resource", { details: {} });
}

/** 405: `<action> is not supported on resources of kind "pods"`. */
export function methodNotSupported(gr: GroupResource, action: string): ApiError {
  return apiError(405, "MethodNotAllowed", `${action} is not supported on resources of kind ${goQuote(formatGroupResource(gr))}`, {
    details: { group: gr.group, kind: gr.resource },
  });
}

/** 406: `only the following media types are accepted: a, b`. */
export function notAcceptable(accepted: readonly string[]): ApiError {
  return apiError(406, "NotAcceptable", `only the following media types are accepted: ${accepted.join(", ")}`);
}

/** 406 for a conversion target (Table, PartialObjectMetadata) not available in a media type. */
export function notAcceptableConversion(target: string, accepted: readonly string[]): ApiError {
  return apiError(406, "NotAcceptable", `only the following media types are accepted when converting to ${target}: ${accepted.join(", ")}`);
}

/** 409 AlreadyExists: `pods "x" already exists`. */
export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return apiError(409, "AlreadyExists", `${formatGroupResource(gr)} ${goQuote(name)} already exists`, {
    details: { name, group: gr.group, kind: gr.resource },
  });
}

/** 409 AlreadyExists when generateName kept colliding. */
export function generateNameConflict(gr: GroupResource, name: string, retryAfterSeconds: number): ApiError {
  return apiError(
    409,
    "AlreadyExists",
    `${formatGroupResource(gr)} ${goQuote(name)} already exists, the server was not able to generate a unique name for the object`,
    { details: { name, group: gr.group, kind: gr.resource, retryAfterSeconds } },
  );
}

/** upstream's OptimisticLockErrorMsg: the reason of a stale-resourceVersion conflict. */
export const OPTIMISTIC_LOCK_ERROR_MSG = "the object has been modified; please apply your changes to the latest version and try again";

/**
 * 409 Conflict: `Operation cannot be fulfilled on pods "x": <reason>`. Without a
 * reason, the stale-resourceVersion text (seed 000, "PUT ... stale one causes 409").
 */
export function conflict(gr: GroupResource, name: string, reason: string = OPTIMISTIC_LOCK_ERROR_MSG): ApiError {
  return apiError(409, "Conflict", `Operation cannot be fulfilled on ${formatGroupResource(gr)} ${goQuote(name)}: ${reason}`, {
    details: { name, group: gr.group, kind: gr.resource },
  });
}

/** 409 Conflict from server-side apply, with one cause per conflicting field. */
export function applyConflict(causes: readonly StatusCause[], message: string): ApiError {
  return apiError(409, "Conflict", message, { details: { causes: [...causes] } });
}

/** 410 Gone (deprecated upstream in favour of Expired, still used for some paths). */
export function gone(message: string): ApiError {
  return apiError(410, "Gone", message);
}

/** 410 Expired: the requested version is no longer available (seed 000, "Watch behavior" 2). */
export function resourceExpired(message: string, metadata?: ListMeta): ApiError {
  return apiError(410, "Expired", message, metadata ? { metadata } : undefined);
}

/** 410 for a watch or list from before the oldest retained event: `too old resource version: X (Y)`. */
export function tooOldResourceVersion(requested: number | string, oldest: number | string): ApiError {
  return resourceExpired(`too old resource version: ${requested} (${oldest})`);
}

/** 410 for an Exact/NotOlderThan list whose version was compacted away. */
export function listExpired(): ApiError {
  return resourceExpired("The resourceVersion for the provided list is too old.");
}

/** 410 for a watch whose version was compacted away in the backing store. */
export function watchExpired(): ApiError {
  return resourceExpired("The resourceVersion for the provided watch is too old.");
}

const CONTINUE_EXPIRED =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter";

/**
 * 410 for an expired continue token (seed 000, "Chunked lists" 3). With
 * `inconsistentToken`, upstream's offer to continue at the latest version: the
 * token travels in the Status's `metadata.continue`.
 */
export function continueExpired(inconsistentToken?: string): ApiError {
  if (inconsistentToken === undefined) return resourceExpired(CONTINUE_EXPIRED + ".");
  return resourceExpired(
    CONTINUE_EXPIRED +
      ", or use the continue token in this response to retrieve the remainder of the results. " +
      "Continuing with the provided token results in an inconsistent list - objects that were created, " +
      "modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    { continue: inconsistentToken },
  );
}

/** 413: `Request entity too large: <message>`. */
export function requestEntityTooLarge(message: string): ApiError {
  return apiError(413, "RequestEntityTooLarge", `Request entity too large: ${message}`);
}

/** 415: `the body of the request was in an unknown format - accepted media types include: ...`. */
export function unsupportedMediaType(accepted: readonly string[]): ApiError {
  return apiError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`,
  );
}

/** The message of an Invalid error: `Pod "x" is invalid: <aggregate>`. */
export function formatInvalidMessage(gk: GroupKind, name: string, errs: readonly FieldError[]): string {
  const head = `${formatGroupKind(gk)} ${goQuote(name)} is invalid`;
  const agg = aggregateFieldErrors(errs);
  return agg === "" ? head : `${head}: ${agg}`;
}

/** One Status cause per field error (all of them, duplicates included, as upstream). */
export function causesFromFieldErrors(errs: readonly FieldError[]): StatusCause[] {
  return errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }));
}

/**
 * 422 Invalid: `Pod "x" is invalid: [spec.containers: Required value, ...]`;
 * details.kind is the kind (not the resource), as upstream's NewInvalid.
 */
export function invalid(gk: GroupKind, name: string, errs: readonly FieldError[]): ApiError {
  return apiError(422, "Invalid", formatInvalidMessage(gk, name, errs), {
    details: { name, group: gk.group, kind: gk.kind, causes: causesFromFieldErrors(errs) },
  });
}

/** 429: too many requests, with a retry hint. */
export function tooManyRequests(message: string, retryAfterSeconds: number): ApiError {
  return apiError(429, "TooManyRequests", message, { details: { retryAfterSeconds } });
}

// --- 5xx -------------------------------------------------------------------

/** 500: `Internal error occurred: <err>` with the error as the single cause. */
export function internalError(err: unknown): ApiError {
  const msg = err instanceof Error ? err.message : String(err);
  return new ApiError(
    buildStatus({ code: 500, reason: "InternalError", message: `Internal error occurred: ${msg}`, details: { causes: [{ message: msg }] } }),
    { cause: err },
  );
}

/**
 * 500: a stored value that cannot be decoded (seed 000, "States and
 * transitions", the corrupt state). The message carries "corrupt object", which
 * is what tells a client that the unsafe delete option applies.
 */
export function corruptObject(key: string, revision: number, detail: string): ApiError {
  return internalError(new Error(`StorageError: corrupt object, Key: ${key}, ResourceVersion: ${revision}, AdditionalErrorMsg: ${detail}`));
}

/** 500 StorageReadError: a list met stored values it cannot decode; one cause per key (at most 100). */
export function storeReadError(gr: GroupResource, prefix: string, corrupt: readonly { key: string; error: Error }[]): ApiError {
  return apiError(500, "StorageReadError", `failed to read one or more ${gr.resource} from the storage`, {
    details: {
      name: prefix,
      ...(gr.group ? { group: gr.group } : {}),
      kind: gr.resource,
      causes: corrupt.slice(0, 100).map((c) => ({ reason: "UnexpectedServerResponse", field: c.key, message: c.error.message })),
    },
  });
}

/** 500 ServerTimeout: a transient storage failure; the client should retry. */
export function serverTimeout(gr: GroupResource, operation: string, retryAfterSeconds: number): ApiError {
  return apiError(
    500,
    "ServerTimeout",
    `The ${operation} operation against ${formatGroupResource(gr)} could not be completed at this time, please try again.`,
    { details: { name: operation, group: gr.group, kind: gr.resource, retryAfterSeconds } },
  );
}

/**
 * 507 Insufficient Storage: the store's disk is full and writes are refused
 * until space is freed (docs/reliability.md, "Disk full"). Upstream answers
 * such storage errors with a 500 InternalError; the reason stays the same so
 * clients treat it alike, and the code says it is the disk.
 */
export function insufficientStorage(message: string): ApiError {
  return apiError(507, "InternalError", message);
}

/** 503 ServiceUnavailable with the given message. */
export function serviceUnavailable(message: string): ApiError {
  return apiError(503, "ServiceUnavailable", message);
}

/** 504 Timeout: `Timeout: <message>`; details is always present, as upstream. */
export function timeout(message: string, retryAfterSeconds: number): ApiError {
  return apiError(504, "Timeout", `Timeout: ${message}`, { details: { retryAfterSeconds } });
}

/**
 * 504 for a read at a version the server has not reached yet (seed 000, "Watch
 * behavior" 6): `Timeout: Too large resource version: X, current: Y`, with the
 * ResourceVersionTooLarge cause clients look for.
 */
export function tooLargeResourceVersion(requested: number | string, current: number | string, retryAfterSeconds = 1): ApiError {
  return apiError(504, "Timeout", `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    details: { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }], retryAfterSeconds },
  });
}

/** True for the 504 tooLargeResourceVersion() builds. */
export function isTooLargeResourceVersion(err: unknown): boolean {
  return isApiError(err, "Timeout") && (err.status.details?.causes ?? []).some((c) => c.reason === "ResourceVersionTooLarge");
}
