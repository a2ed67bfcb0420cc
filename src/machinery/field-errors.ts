// Field-level validation errors, formatted as upstream's field.Error
// (`spec.replicas: Invalid value: -1: must be greater than or equal to 0`) and
// aggregated as its ErrorList (`[a, b]`, duplicates dropped, one without brackets).

import { goJson, goNumber, goQuote } from "./go-format.js";

export type FieldErrorType =
  | "FieldValueNotFound"
  | "FieldValueRequired"
  | "FieldValueDuplicate"
  | "FieldValueInvalid"
  | "FieldValueNotSupported"
  | "FieldValueForbidden"
  | "FieldValueTooLong"
  | "FieldValueTooMany"
  | "InternalError"
  | "FieldValueTypeInvalid";

/** Pass as a bad value to leave the value out of the message (upstream's omitValue). */
export const omitValue: unique symbol = Symbol("omitValue");

export interface FieldError {
  readonly type: FieldErrorType;
  /** Path of the field, e.g. `spec.containers[0].image`. */
  readonly field: string;
  /** The offending value; `undefined`/`null` print as `null`, `omitValue` prints nothing. */
  readonly badValue: unknown;
  readonly detail: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: "Not found",
  FieldValueRequired: "Required value",
  FieldValueDuplicate: "Duplicate value",
  FieldValueInvalid: "Invalid value",
  FieldValueNotSupported: "Unsupported value",
  FieldValueForbidden: "Forbidden",
  FieldValueTooLong: "Too long",
  FieldValueTooMany: "Too many",
  InternalError: "Internal error",
  FieldValueTypeInvalid: "Invalid value",
};

/** upstream's FieldImmutableErrorMsg. */
export const FIELD_IMMUTABLE_ERROR_MSG = "field is immutable";

/** The message without the field name (upstream's ErrorBody; a Status cause's `message`). */
export function fieldErrorBody(e: FieldError): string {
  let s = TYPE_TEXT[e.type];
  switch (e.type) {
    case "FieldValueRequired":
    case "FieldValueForbidden":
    case "FieldValueTooLong":
    case "InternalError":
      break; // these never print the value
    default:
      if (e.badValue !== omitValue) s += ": " + formatBadValue(e.badValue);
  }
  if (e.detail) s += ": " + e.detail;
  return s;
}

/** `field: body`, upstream's field.Error.Error(). */
export function formatFieldError(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

/**
 * An error list as one message (upstream's ErrorList.ToAggregate().Error()):
 * duplicates dropped, a single message bare, several as `[a, b]`; "" when empty.
 */
export function aggregateFieldErrors(errs: readonly FieldError[]): string {
  const seen = new Set<string>();
  const msgs: string[] = [];
  for (const e of errs) {
    const m = formatFieldError(e);
    if (!seen.has(m)) {
      seen.add(m);
      msgs.push(m);
    }
  }
  if (msgs.length === 0) return "";
  if (msgs.length === 1) return msgs[0]!;
  return "[" + msgs.join(", ") + "]";
}

function formatBadValue(v: unknown): string {
  if (v === null || v === undefined) return "null";
  switch (typeof v) {
    case "string":
      return goQuote(v);
    case "number":
      return goNumber(v);
    case "boolean":
      return v ? "true" : "false";
    case "bigint":
      return v.toString();
    default:
      // upstream marshals composite values to JSON.
      return goJson(v);
  }
}

function make(type: FieldErrorType, field: string, badValue: unknown, detail: string): FieldError {
  return Object.freeze({ type, field, badValue, detail });
}

/**
 * Constructors mirroring upstream's `field` package: `field.invalid("spec.replicas", -1, "...")`.
 */
export const field = Object.freeze({
  required(path: string, detail = ""): FieldError {
    return make("FieldValueRequired", path, "", detail);
  },
  invalid(path: string, value: unknown, detail: string): FieldError {
    return make("FieldValueInvalid", path, value, detail);
  },
  typeInvalid(path: string, value: unknown, detail: string): FieldError {
    return make("FieldValueTypeInvalid", path, value, detail);
  },
  notFound(path: string, value: unknown): FieldError {
    return make("FieldValueNotFound", path, value, "");
  },
  duplicate(path: string, value: unknown): FieldError {
    return make("FieldValueDuplicate", path, value, "");
  },
  /** `Unsupported value: "x": supported values: "a", "b"`. */
  notSupported(path: string, value: unknown, validValues: readonly string[]): FieldError {
    const detail = validValues.length > 0 ? "supported values: " + validValues.map(goQuote).join(", ") : "";
    return make("FieldValueNotSupported", path, value, detail);
  },
  forbidden(path: string, detail: string): FieldError {
    return make("FieldValueForbidden", path, "", detail);
  },
  /** `Too long: may not be more than N bytes` (the value itself is never printed). */
  tooLong(path: string, maxLength: number): FieldError {
    const detail = maxLength >= 0 ? `may not be more than ${maxLength} ${maxLength === 1 ? "byte" : "bytes"}` : "value is too long";
    return make("FieldValueTooLong", path, "<value omitted>", detail);
  },
  /** `Too many: 5: must have at most 3 items`; a negative `actual` leaves the count out. */
  tooMany(path: string, actual: number, max: number): FieldError {
    const detail = max >= 0 ? `must have at most ${max} items` : "has too many items";
    return make("FieldValueTooMany", path, actual >= 0 ? actual : omitValue, detail);
  },
  internal(path: string, err: unknown): FieldError {
    return make("InternalError", path, null, err instanceof Error ? err.message : String(err));
  },
  /** `Invalid value: <value>: field is immutable`. */
  immutable(path: string, value: unknown): FieldError {
    return make("FieldValueInvalid", path, value, FIELD_IMMUTABLE_ERROR_MSG);
  },
});
