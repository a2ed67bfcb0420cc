// `status`: writes there change .status, and writes to the main resource
// leave .status as stored (upstream's status strategies). Upstream's status
// strategies reset the spec but take the new object's metadata, so labels and
// annotations move through /status too (conformance's status lifecycles patch
// an annotation there), except where a kind resets them (`metadata`). A kind
// may check status writes with a rule of its own; otherwise its
// validateUpdate runs.

import type { StrategyContext, Subresource } from "../resource.js";
import type { ApiObject, FieldError } from "../../machinery/index.js";
import { onlyMoving } from "./only-moving.js";
import { copyJson } from "../../machinery/patch/json-value.js";

export interface StatusOptions<T extends ApiObject> {
  /** The kind's rule for writes through /status (default: its validateUpdate). */
  validate?(obj: T, old: T, ctx: StrategyContext): FieldError[];
  /** The metadata fields a status write may change (default labels and annotations; upstream's ResetObjectMetaForStatus kinds: none). */
  metadata?: readonly ("labels" | "annotations")[];
}

export function status<T extends ApiObject>(options: StatusOptions<T> = {}): Subresource<T> {
  return {
    name: "status",
    verbs: ["get", "patch", "update"],
    recordsManager: true,
    resetFields: { here: ["spec"], main: ["status"] },
    prepareUpdate(input, current) {
      const next = onlyMoving(current, input, ["status"], ...(options.metadata ?? ["labels", "annotations"]).map((key): ["metadata", string] => ["metadata", key]));
      // An apply through /status brings its own managedFields.
      if (input.metadata?.managedFields !== undefined) next.metadata.managedFields = input.metadata.managedFields;
      return next;
    },
    prepareMainUpdate(next, current) {
      const kept = next as Record<string, unknown>;
      if ("status" in current) kept["status"] = copyJson(current["status"]);
      else delete kept["status"];
    },
    ...(options.validate !== undefined ? { validate: options.validate } : {}),
  };
}
