// The public surface of the shared, pure API machinery: metadata types, Status
// errors, selectors, resource-version decisions, continue tokens, shard
// selectors and name validation. Nothing here does I/O.

export type {
  TypeMeta,
  ObjectMeta,
  ListMeta,
  ShardInfo,
  OwnerReference,
  ManagedFieldsEntry,
  ApiObject,
  ApiList,
  GroupVersion,
  GroupResource,
  GroupKind,
  GroupVersionKind,
} from "./meta.js";
export {
  formatGroupVersion,
  formatGroupResource,
  formatGroupKind,
  newUid,
  formatTimestamp,
  formatMicroTimestamp,
} from "./meta.js";
export { parseGroupVersion, groupVersionKindOf, parseTimestamp } from "./meta-parsing.js";

export type { Status, StatusCause, StatusDetails, StatusReason, StatusInit } from "./status.js";
export { buildStatus, isStatusObject } from "./status.js";

export type { FieldError, FieldErrorType } from "./field-errors.js";
export { field, omitValue, fieldErrorBody, formatFieldError, aggregateFieldErrors, FIELD_IMMUTABLE_ERROR_MSG } from "./field-errors.js";

export {
  ApiError,
  isApiError,
  statusFromError,
  badRequest,
  unauthorized,
  forbidden,
  notFound,
  pathNotFound,
  methodNotSupported,
  notAcceptable,
  notAcceptableConversion,
  alreadyExists,
  generateNameConflict,
  conflict,
  OPTIMISTIC_LOCK_ERROR_MSG,
  applyConflict,
  gone,
  resourceExpired,
  tooOldResourceVersion,
  listExpired,
  watchExpired,
  continueExpired,
  requestEntityTooLarge,
  unsupportedMediaType,
  invalid,
  formatInvalidMessage,
  causesFromFieldErrors,
  tooManyRequests,
  internalError,
  corruptObject,
  storeReadError,
  serverTimeout,
  serviceUnavailable,
  insufficientStorage,
  timeout,
  tooLargeResourceVersion,
  isTooLargeResourceVersion,
} from "./errors.js";

export { goQuote } from "./go-format.js";
export { copyJson } from "./patch/json-value.js";
export { digestsEqual, secretDigest, secretEqual } from "./secret-equal.js";

export type { Selector, Requirement, Labels, LabelOperator, LabelSelector, LabelSelectorRequirement } from "./labels.js";
export {
  parseSelector,
  newRequirement,
  requirementToString,
  selectorFromRequirements,
  selectorFromSet,
  selectorFromLabelSelector,
  everything,
  nothing,
} from "./labels.js";

export type { FieldSelector, FieldRequirement, FieldOperator, Fields } from "./fields.js";
export { parseFieldSelector, fieldSelectorFromSet, everythingFields, escapeFieldValue, unescapeFieldValue, pinnedName } from "./fields.js";

export type {
  ReadMode,
  ListMode,
  Continuation,
  WatchDecision,
  ResourceVersionMatch,
  GetParams,
  ListParams,
  WatchParams,
  DecideOptions,
} from "./resource-version.js";
export {
  isValidResourceVersion,
  parseResourceVersion,
  formatResourceVersion,
  compareResourceVersions,
  decideGet,
  decideList,
  decideWatch,
} from "./resource-version.js";

export type { ContinueToken } from "./continue-token.js";
export { CONTINUE_TOKEN_VERSION, encodeContinueToken, decodeContinueToken, encodeContinue, decodeContinue } from "./continue-token.js";

export type { ShardSelector, ShardRange, ShardField } from "./shard-selector.js";
export { parseShardSelector, fnv1a64, fnv1a64Parts } from "./shard-selector.js";

export type { NameValidator } from "./validation/names.js";
export {
  isDNS1123Label,
  isDNS1123Subdomain,
  isDNS1035Label,
  isQualifiedName,
  isLabelKey,
  isValidLabelValue,
  isValidPathSegmentName,
  isValidPathSegmentPrefix,
  maskTrailingDash,
  nameIsDNSSubdomain,
  nameIsDNSLabel,
  nameIsDNS1035Label,
  validateNamespaceName,
  generateName,
  maxLenError,
  regexError,
  emptyError,
  GENERATE_NAME_ALPHABET,
  GENERATE_NAME_RANDOM_LENGTH,
  GENERATED_NAME_MAX_LENGTH,
  DNS1123_LABEL_MAX_LENGTH,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  DNS1035_LABEL_MAX_LENGTH,
  LABEL_VALUE_MAX_LENGTH,
} from "./validation/names.js";
export { validateLabels, validateAnnotations, annotationsSize, TOTAL_ANNOTATION_SIZE_LIMIT_B } from "./validation/metadata.js";
export { parseIp, formatIp, validateIp, parseCidr, formatCidr, validateCidr, cidrContains, nameIsIPAddress, type ParsedIp, type ParsedCidr } from "./validation/ip.js";
export { formatDuration, parseDuration } from "./duration.js";
