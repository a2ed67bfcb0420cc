// Server-side apply and managed-fields bookkeeping (structured-merge-diff's
// semantics) as pure functions: the HTTP layer decodes the request, calls
// apply() or updateManagedFields(), and stores the object they return.

export type { JsonValue, PathElement, FieldPath } from "./field-set.js";
export {
  FieldSet,
  fieldElement,
  keyElement,
  valueElement,
  indexElement,
  serializePathElement,
  parsePathElement,
  formatPath,
  comparePathElements,
} from "./field-set.js";
export type { TypeContext, Comparison } from "./typed.js";
export { fieldSetOf, compare, merge, removeItems, jsonEqual } from "./typed.js";
export type { ManagerEntry, ManagedFields, UpdateManagedFieldsOptions, WriteResult } from "./managed-fields.js";
export {
  updateManagedFields,
  decodeManagedFields,
  encodeManagedFields,
  managerId,
  STRIPPED_FIELDS,
  MAX_UPDATE_MANAGERS,
  ANCIENT_CHANGES_MANAGER,
} from "./managed-fields.js";
export type { ApplyOptions, Conflict } from "./apply.js";
export { apply, conflictError } from "./apply.js";
