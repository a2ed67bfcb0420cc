// limitranges (core/v1, short name `limits`): per-namespace defaults and
// bounds on what containers, pods and claims ask for. Upstream's defaults
// (a Container item's default limit from max, default request from the
// default limit, then from min) and ValidateLimitRange messages. The
// LimitRanger admission step (src/apiserver/admission/limit-ranger.ts) applies them.

import { field, isQualifiedName, type ApiObject, type FieldError } from "../../machinery/index.js";
import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1 } from "../meta/schemas.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { cmp, formatQuantity, quantity, type Quantity } from "./quantity-math.js";
import { CORE_V1, listOf } from "./schemas.js";
import type { Quantities } from "./types.js";

export interface LimitRangeItem {
  type?: string;
  max?: Quantities | null;
  min?: Quantities | null;
  default?: Quantities | null;
  defaultRequest?: Quantities | null;
  maxLimitRequestRatio?: Quantities | null;
}

export interface LimitRange extends ApiObject {
  spec?: { limits?: LimitRangeItem[] | null };
}

export const LIMIT_TYPES = ["Pod", "Container", "PersistentVolumeClaim"];

const quantities = () => s.map(s.quantity());

export const LIMIT_RANGE_TYPES: readonly TypeDef[] = [
  type(`${CORE_V1}.LimitRange`, "Defaults and bounds on the resources that objects of a namespace ask for.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    spec: f(2, s.ref(`${CORE_V1}.LimitRangeSpec`), "The limits."),
  }),
  type(`${CORE_V1}.LimitRangeSpec`, "The limits of a LimitRange.", {
    limits: f(1, s.array(s.ref(`${CORE_V1}.LimitRangeItem`), { listType: "atomic" }), "One item per kind of object limited.", { required: true }),
  }),
  type(`${CORE_V1}.LimitRangeItem`, "Defaults and bounds for one kind of object (Pod, Container, PersistentVolumeClaim).", {
    type: f(1, s.string(), "Pod, Container or PersistentVolumeClaim.", { required: true }),
    max: f(2, quantities(), "The most any one object may use, by resource."),
    min: f(3, quantities(), "The least any one object may use, by resource."),
    default: f(4, quantities(), "Limits given to containers that set none."),
    defaultRequest: f(5, quantities(), "Requests given to containers that set none."),
    maxLimitRequestRatio: f(6, quantities(), "The largest limit-to-request ratio allowed, by resource."),
  }),
  listOf(CORE_V1, "LimitRange", "A list of LimitRanges."),
];

/** upstream's SetDefaults_LimitRangeItem, for Container items. */
function defaultItem(item: LimitRangeItem): void {
  if (item.type !== "Container") return;
  const def = (item.default ??= {});
  const req = (item.defaultRequest ??= {});
  for (const [k, v] of Object.entries(item.max ?? {})) if (!(k in def)) def[k] = v;
  for (const [k, v] of Object.entries(def)) if (!(k in req)) req[k] = v;
  for (const [k, v] of Object.entries(item.min ?? {})) if (!(k in req)) req[k] = v;
}

type Bound = "max" | "min" | "default" | "defaultRequest" | "maxLimitRequestRatio";

/** upstream's ValidateLimitRange (resource names are not checked against the standard set). */
export function validateLimitRange(lr: LimitRange): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (lr.spec?.limits ?? []).forEach((item, i) => {
    const at = `spec.limits[${i}]`;
    const typeName = item.type ?? "";
    const nameErrs = isQualifiedName(typeName);
    for (const msg of nameErrs) errs.push(field.invalid(`${at}.type`, typeName, msg));
    if (nameErrs.length === 0 && !typeName.includes("/") && !LIMIT_TYPES.includes(typeName)) {
      errs.push(field.invalid(`${at}.type`, typeName, "must be a standard limit type or fully qualified"));
    }
    if (seen.has(typeName)) errs.push(field.duplicate(`${at}.type`, typeName));
    seen.add(typeName);
    if (typeName === "Pod") {
      if (Object.keys(item.default ?? {}).length > 0) errs.push(field.forbidden(`${at}.default`, "may not be specified when `type` is 'Pod'"));
      if (Object.keys(item.defaultRequest ?? {}).length > 0) errs.push(field.forbidden(`${at}.defaultRequest`, "may not be specified when `type` is 'Pod'"));
    }
    if (typeName === "PersistentVolumeClaim" && item.min?.["storage"] === undefined && item.max?.["storage"] === undefined) {
      errs.push(field.required(`${at}.limits`, "either minimum or maximum storage value is required, but neither was provided"));
    }
    const parsed: Partial<Record<Bound, Map<string, Quantity>>> = {};
    const keys = new Set<string>();
    for (const bound of ["max", "min", "default", "defaultRequest", "maxLimitRequestRatio"] as const) {
      if (typeName === "Pod" && (bound === "default" || bound === "defaultRequest")) continue;
      const m = new Map<string, Quantity>();
      for (const [k, v] of Object.entries(item[bound] ?? {})) {
        const q = quantity(v);
        if (q === undefined) continue; // the schema's quantity check reports it
        m.set(k, q);
        keys.add(k);
      }
      parsed[bound] = m;
    }
    const str = formatQuantity;
    for (const k of [...keys].sort()) {
      const min = parsed.min?.get(k);
      const max = parsed.max?.get(k);
      const def = parsed.default?.get(k);
      const req = parsed.defaultRequest?.get(k);
      const ratio = parsed.maxLimitRequestRatio?.get(k);
      if (min && max && cmp(min, max) > 0) errs.push(field.invalid(`${at}.min[${k}]`, str(min), `min value ${str(min)} is greater than max value ${str(max)}`));
      if (req && min && cmp(min, req) > 0) errs.push(field.invalid(`${at}.defaultRequest[${k}]`, str(req), `min value ${str(min)} is greater than default request value ${str(req)}`));
      if (req && max && cmp(req, max) > 0) errs.push(field.invalid(`${at}.defaultRequest[${k}]`, str(req), `default request value ${str(req)} is greater than max value ${str(max)}`));
      if (req && def && cmp(req, def) > 0) errs.push(field.invalid(`${at}.defaultRequest[${k}]`, str(req), `default request value ${str(req)} is greater than default limit value ${str(def)}`));
      if (def && min && cmp(min, def) > 0) errs.push(field.invalid(`${at}.default[${k}]`, str(min), `min value ${str(min)} is greater than default value ${str(def)}`));
      if (def && max && cmp(def, max) > 0) errs.push(field.invalid(`${at}.default[${k}]`, str(max), `default value ${str(def)} is greater than max value ${str(max)}`));
      if (ratio && ratio.milli < 1000n) errs.push(field.invalid(`${at}.maxLimitRequestRatio[${k}]`, str(ratio), `ratio ${str(ratio)} is less than 1`));
      if (ratio && min && max && min.milli > 0n) {
        const largest = Number(max.milli) / Number(min.milli);
        if (Number(ratio.milli) / 1000 > largest) {
          errs.push(field.invalid(`${at}.maxLimitRequestRatio[${k}]`, str(ratio), `ratio ${str(ratio)} is greater than max/min = ${largest.toFixed(6)}`));
        }
      }
    }
  });
  return errs;
}

export function limitRangesResource(): ResourceDefinition {
  return defineResource<LimitRange>({
    group: "",
    versions: ["v1"],
    resource: "limitranges",
    singular: "limitrange",
    kind: "LimitRange",
    namespaced: true,
    shortNames: ["limits"],
    schema: `${CORE_V1}.LimitRange`,
    defaults: (lr) => {
      for (const item of lr.spec?.limits ?? []) defaultItem(item);
    },
    validate: validateLimitRange,
    validateUpdate: validateLimitRange,
    // upstream's table for limit ranges is the default one: Name and Created At.
  });
}

