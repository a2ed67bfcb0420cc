// The three ways upstream's PATCH handler reports a patch that cannot be
// applied (k8s.io/apiserver endpoints/handlers/patch.go), and Go's `%v` / type
// names, which upstream's strategic-merge messages embed and kubectl prints.

import { ApiError } from "../errors.js";
import { goNumber } from "../go-format.js";
import { buildStatus } from "../status.js";

/** Upstream's NewGenericServerResponse text for 422; it drops the underlying error. */
export const PATCH_REJECTED_MESSAGE = "the server rejected our request due to an error in our request";

/**
 * 422 Invalid, as upstream answers a JSON patch that fails to apply (a failed
 * `test`, a missing path, the copy limit) and a strategic patch with lists of
 * lists. Upstream's Status carries only the generic message and an empty
 * `details`, so kubectl prints "The request is invalid: the server rejected our
 * request ..."; the precise reason rides along as the error's `cause` for logs.
 */
export function patchRejected(reason: string): ApiError {
  return new ApiError(buildStatus({ code: 422, reason: "Invalid", message: PATCH_REJECTED_MESSAGE, details: {} }), {
    cause: new Error(reason),
  });
}

/**
 * 500 with reason "" (StatusReasonUnknown): what upstream answers for the
 * strategic-merge errors it does not classify (missing merge key, unknown
 * `$patch` value, ...). kubectl prints `Error from server: <message>`.
 */
export function patchUnclassified(message: string): ApiError {
  return new ApiError(buildStatus({ code: 500, reason: "", message }));
}

/** Go's `%v` of a decoded JSON value: `map[a:1 b:[x y]]`, `<nil>`, numbers as Go prints them. */
export function goValue(value: unknown): string {
  if (value === null || value === undefined) return "<nil>";
  if (typeof value === "string") return value;
  if (typeof value === "number") return goNumber(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (Array.isArray(value)) return "[" + value.map(goValue).join(" ") + "]";
  if (typeof value === "object") {
    const obj = value as Record<string, unknown>;
    // fmt sorts map keys when printing, so the text is stable.
    return "map[" + Object.keys(obj).sort().map((k) => `${k}:${goValue(obj[k])}`).join(" ") + "]";
  }
  return String(value);
}

/** The Go type name `reflect.TypeOf` gives a decoded JSON value (the apiserver keeps integers as int64). */
export function goTypeName(value: unknown): string {
  if (value === null || value === undefined) return "%!s(<nil>)";
  if (Array.isArray(value)) return "[]interface {}";
  switch (typeof value) {
    case "object":
      return "map[string]interface {}";
    case "string":
      return "string";
    case "number":
      return Number.isInteger(value) ? "int64" : "float64";
    case "boolean":
      return "bool";
    default:
      return typeof value;
  }
}

/** Go's `expected a X, but received a Y` (mergepatch.ErrBadArgType). */
export function badArgType(expectedType: "map[string]interface {}" | "[]interface {}", actual: unknown): ApiError {
  return patchUnclassified(`expected a ${expectedType}, but received a ${goTypeName(actual)}`);
}
