// Validation of the label and annotation maps in object metadata, with
// upstream's field errors (ValidateLabels, ValidateAnnotations) and its
// 256 KiB limit on the total size of annotation keys and values.

import { field } from "../field-errors.js";
import type { FieldError } from "../field-errors.js";
import { isQualifiedName, isValidLabelValue } from "./names.js";

/** upstream's TotalAnnotationSizeLimitB: keys plus values, in bytes. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024;

// Keys are checked in sorted order so messages are stable (Go map order is random).
function sortedKeys(m: Readonly<Record<string, string>>): string[] {
  return Object.keys(m).sort();
}

/** Every key must be a qualified name and every value a valid label value. */
export function validateLabels(labels: Readonly<Record<string, string>> | undefined, path = "metadata.labels"): FieldError[] {
  const errs: FieldError[] = [];
  if (!labels) return errs;
  for (const k of sortedKeys(labels)) {
    for (const msg of isQualifiedName(k)) errs.push(field.invalid(path, k, msg));
    const v = labels[k]!;
    for (const msg of isValidLabelValue(v)) errs.push(field.invalid(path, v, msg));
  }
  return errs;
}

/** Total bytes of annotation keys and values, as upstream counts them. */
export function annotationsSize(annotations: Readonly<Record<string, string>>): number {
  let total = 0;
  for (const k of Object.keys(annotations)) total += Buffer.byteLength(k, "utf8") + Buffer.byteLength(annotations[k]!, "utf8");
  return total;
}

/**
 * Keys must be qualified names, case-insensitively (upstream lowercases them
 * first); the whole map must stay within TOTAL_ANNOTATION_SIZE_LIMIT_B.
 */
export function validateAnnotations(annotations: Readonly<Record<string, string>> | undefined, path = "metadata.annotations"): FieldError[] {
  const errs: FieldError[] = [];
  if (!annotations) return errs;
  for (const k of sortedKeys(annotations)) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(field.invalid(path, k, msg));
  }
  if (annotationsSize(annotations) > TOTAL_ANNOTATION_SIZE_LIMIT_B) errs.push(field.tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT_B));
  return errs;
}
