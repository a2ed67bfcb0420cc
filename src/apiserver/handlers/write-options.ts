// The options every write carries in its query (seed 000, "Dry run", "Field
// validation", "Update mechanisms"): dryRun, fieldManager (or the manager
// derived from the User-Agent, as upstream), fieldValidation and force, with
// upstream's checks; field validation of a decoded body against its schema;
// and the `Warning: 299` headers that carry the warnings back.

import type { SchemaRegistry } from "../../machinery/schema.js";
import { badRequest, field, formatFieldError, invalid, type FieldError, type GroupKind } from "../../machinery/index.js";
import { checkFields, fieldValidation, parseFieldValidation, type FieldValidationLevel, type YamlDuplicateKey } from "../../machinery/decode/index.js";
import type { Outgoing } from "../http/respond.js";
import type { PatchType } from "../http/decode-body.js";
import { copyJson } from "../../machinery/patch/json-value.js";

export type OptionsKind = "CreateOptions" | "UpdateOptions" | "PatchOptions" | "DeleteOptions";

export interface WriteOptions {
  readonly dryRun: boolean;
  /** The fieldManager parameter, or the User-Agent's product token when it is absent. */
  readonly fieldManager: string;
  readonly fieldValidation: FieldValidationLevel;
  readonly force: boolean;
  readonly optionsKind: OptionsKind;
}

/** Upstream's FieldManagerMaxLength. */
const FIELD_MANAGER_MAX = 128;

/**
 * `dryRun` values: `All`, or none at all (an empty value, as the seed's
 * "no value" form, is not a dry run). Anything else is a 400.
 */
export function parseDryRun(values: readonly string[]): boolean {
  let dry = false;
  for (const v of values) {
    if (v === "All") dry = true;
    else if (v !== "") throw badRequest(`Invalid dry run value: ${JSON.stringify(v)}; supported values: "All"`);
  }
  return dry;
}

/** Reads and checks a write's options (422 Invalid on the options kind, as upstream's Validate*Options). */
export function writeOptions(
  query: URLSearchParams,
  userAgent: string | undefined,
  kind: OptionsKind,
  metaGroup: string,
  patchType?: PatchType,
): WriteOptions {
  const dryRun = parseDryRun(query.getAll("dryRun"));
  const given = query.get("fieldManager") ?? "";
  const errs: FieldError[] = [...validateFieldManager(given)];
  const forceRaw = query.get("force");
  if (patchType === "apply" && given === "") errs.push(field.required("fieldManager", "is required for apply patch"));
  if (kind === "PatchOptions" && patchType !== "apply" && forceRaw !== null) errs.push(field.forbidden("force", "may not be specified for non-apply patch"));
  if (errs.length > 0) throw invalid({ group: metaGroup, kind }, "", errs);
  const level = kind === "DeleteOptions" ? "Ignore" : parseFieldValidation(query.get("fieldValidation"), { optionsKind: kind, metaGroup });
  return {
    dryRun,
    fieldManager: given !== "" ? given : managerFromUserAgent(userAgent ?? ""),
    fieldValidation: level,
    force: forceRaw === "" || forceRaw === "1" || forceRaw?.toLowerCase() === "true",
    optionsKind: kind,
  };
}

function validateFieldManager(manager: string): FieldError[] {
  const errs: FieldError[] = [];
  if (manager.length > FIELD_MANAGER_MAX) errs.push(field.tooLong("fieldManager", FIELD_MANAGER_MAX));
  let i = 0;
  for (const ch of manager) {
    if (!isPrint(ch)) {
      const cp = ch.codePointAt(0)!;
      errs.push(field.invalid("fieldManager", manager, `invalid character U+${cp.toString(16).toUpperCase().padStart(4, "0")} (at position ${i})`));
    }
    i += Buffer.byteLength(ch);
  }
  return errs;
}

/** Upstream's prefixFromUserAgent: the text before the first `/`, printable characters only, at most 128 bytes. */
export function managerFromUserAgent(userAgent: string): string {
  let out = "";
  let bytes = 0;
  for (const ch of userAgent.split("/")[0]!) {
    if (!isPrint(ch)) continue;
    const n = Buffer.byteLength(ch);
    if (bytes + n > FIELD_MANAGER_MAX) break;
    out += ch;
    bytes += n;
  }
  return out;
}

function isPrint(ch: string): boolean {
  return !/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u.test(ch) && (ch === " " || !/\p{Zs}/u.test(ch));
}

export interface BodyCheck {
  readonly schemas: SchemaRegistry;
  /** OpenAPI name of the body's type (`io.k8s.api.apps.v1.Deployment`). */
  readonly type: string;
  readonly level: FieldValidationLevel;
  /** For messages: the kind and version the body is decoded as, and the object's name. */
  readonly gk: GroupKind;
  readonly version: string;
  readonly name: string;
  readonly optionsKind: OptionsKind;
  /** The kind's own unknown-field detection (custom resources), in place of the schema registry's. */
  readonly pruneUnknown?: ((value: Record<string, unknown>) => string[]) | undefined;
}

/**
 * Field validation of one decoded body (seed 000, "Field validation"): wrong
 * types are always a 400 of their own; unknown and duplicate fields are dropped, and by the
 * level ignored, returned as warnings, or a 400 listing them all.
 * Metrics: upstream's `field_validation_request_duration_seconds` (labels
 * `field_validation`, `status`) is the time of this call; the observability
 * work wraps it here once the metrics registry reaches the API server.
 */
export function checkBody(
  check: BodyCheck,
  value: unknown,
  duplicates: readonly (string | YamlDuplicateKey)[],
): { value: unknown; warnings: string[] } {
  // A type without a schema (a test API's) gets its duplicate keys checked only.
  const { value: cleaned, unknown, typeErrors } =
    check.pruneUnknown !== undefined && typeof value === "object" && value !== null && !Array.isArray(value)
      ? prunedCopy(value as Record<string, unknown>, check)
      : check.schemas.get(check.type) === undefined ? { value, unknown: [], typeErrors: [] } : checkFields(value, check.type, check.schemas);
  // A fatal decoding error: 400 with only that error, whatever the level (seed 000, "Field validation" 4),
  // worded as upstream's decoder failure; the fields are the causes.
  if (typeErrors.length > 0) {
    const { kind } = check.gk;
    const causes = invalid(check.gk, check.name, typeErrors).status.details?.causes ?? [];
    throw badRequest(`${kind} in version "${check.version}" cannot be handled as a ${kind}: ${typeErrors.map(formatFieldError).join(", ")}`, { name: check.name, group: check.gk.group, kind, causes });
  }
  const { warnings } = fieldValidation(check.level, unknown, duplicates, {
    kind: check.gk.kind,
    version: check.version,
    optionsKind: check.optionsKind === "DeleteOptions" ? undefined : check.optionsKind,
  });
  return { value: cleaned, warnings };
}

/**
 * A custom resource's body: the kind prunes what its schema does not name;
 * its metadata is ObjectMeta, checked (types, unknown fields) as built-in
 * kinds' is, through the root type the kind registered.
 */
function prunedCopy(value: Record<string, unknown>, check: BodyCheck) {
  const copy = copyJson(value);
  const unknown = check.pruneUnknown!(copy);
  if (!("metadata" in copy) || check.schemas.get(check.type) === undefined) return { value: copy, unknown, typeErrors: [] };
  const meta = checkFields({ metadata: copy["metadata"] }, check.type, check.schemas);
  copy["metadata"] = (meta.value as Record<string, unknown>)["metadata"];
  return { value: copy, unknown: [...meta.unknown, ...unknown], typeErrors: meta.typeErrors };
}

/**
 * One `Warning: 299 - "text"` header per warning (upstream's NewWarningHeader
 * quoting); the text goes out as UTF-8 bytes, control characters as spaces.
 */
export function setWarnings(res: Outgoing, warnings: readonly string[]): void {
  if (warnings.length === 0) return;
  const quote = (w: string) => w.replace(/[\\"]/g, (c) => "\\" + c).replace(/[\x00-\x1f\x7f]/g, " ");
  const earlier = res.getHeader("warning");
  const before = earlier === undefined ? [] : Array.isArray(earlier) ? earlier : [String(earlier)];
  // Added to what earlier steps warned; the same text once (admission may run again on a retried write), as upstream's recorder.
  res.setHeader("warning", [...new Set([...before, ...warnings.map((w) => Buffer.from(`299 - "${quote(w)}"`, "utf8").toString("latin1"))])]);
}
