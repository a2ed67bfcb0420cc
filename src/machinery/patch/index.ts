// The PATCH algorithms, one per content type (seed 000, "Update mechanisms"):
// JSON patch, JSON merge patch and strategic merge patch. Pure functions over
// decoded JSON; the HTTP layer picks one by Content-Type. Server-side apply
// lives in ../apply.

export type { Json } from "./merge-patch.js";
export { applyMergePatch } from "./merge-patch.js";
export type { JsonPatchOptions } from "./json-patch.js";
export { applyJsonPatch, MAX_JSON_PATCH_OPERATIONS, MAX_JSON_PATCH_COPY_BYTES } from "./json-patch.js";
export type { StrategicMergeContext } from "./strategic-merge.js";
export { applyStrategicMergePatch } from "./strategic-merge.js";
export { PATCH_REJECTED_MESSAGE } from "./errors.js";
