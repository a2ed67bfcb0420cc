// What the workload kinds (apps/v1 and batch/v1) share: label selector and
// pod template checks with upstream's messages, int-or-percent rules, the
// immutability test, table cell helpers and the Scale subresource access.

import {
  field,
  selectorFromLabelSelector,
  isQualifiedName,
  isValidLabelValue,
  regexError,
  validateLabels,
  validateAnnotations,
  type ApiObject,
  type FieldError,
  type LabelSelector,
  type Selector,
} from "../../machinery/index.js";
import type { ScaleAccess } from "../resource.js";
import { nonnegative, validateLongRunningTemplate, validatePodTemplate, type WorkloadPods } from "../core/pod-templates.js";
import type { IntOrString, PodTemplateSpec } from "./types.js";

// The template rules and table cells core's ReplicationControllers share live with core's pod templates.
export {
  nonnegative,
  defaultPodTemplate,
  validateTemplateMetadata,
  validatePodTemplate,
  validateLongRunningTemplate,
  containerCells,
  workloadTable,
  CONTAINERS_COLUMN,
  IMAGES_COLUMN,
  SELECTOR_COLUMN,
  type WorkloadPods,
} from "../core/pod-templates.js";
// Name, Age and label sets are formatted alike in every group's table.
export { NAME_COLUMN, AGE_COLUMN, formatLabels } from "../table-format.js";

// ---- label selectors ----

const IN_NOT_IN = new Set(["In", "NotIn"]);
const EXISTS = new Set(["Exists", "DoesNotExist"]);

/** upstream's metav1 ValidateLabelSelector with label values checked strictly. */
export function validateLabelSelector(sel: LabelSelector | null | undefined, path: string): FieldError[] {
  if (sel === null || sel === undefined) return [];
  const errs = validateLabels(sel.matchLabels ?? undefined, `${path}.matchLabels`);
  (sel.matchExpressions ?? []).forEach((expr, i) => {
    const at = `${path}.matchExpressions[${i}]`;
    const values = expr.values ?? [];
    if (IN_NOT_IN.has(expr.operator)) {
      if (values.length === 0) errs.push(field.required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (EXISTS.has(expr.operator)) {
      if (values.length > 0) errs.push(field.forbidden(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      errs.push(field.invalid(`${at}.operator`, expr.operator, "not a valid selector operator"));
    }
    for (const msg of isQualifiedName(expr.key ?? "")) errs.push(field.invalid(`${at}.key`, expr.key ?? "", msg));
    values.forEach((v, j) => {
      for (const msg of isValidLabelValue(v)) errs.push(field.invalid(`${at}.values[${j}]`, v, msg));
    });
  });
  return errs;
}

/** The selector a LabelSelector stands for, or undefined where upstream's LabelSelectorAsSelector errs. */
export function asSelector(sel: LabelSelector | null | undefined): Selector | undefined {
  try {
    return selectorFromLabelSelector(sel);
  } catch {
    return undefined;
  }
}

export function isEmptySelector(sel: LabelSelector): boolean {
  return Object.keys(sel.matchLabels ?? {}).length + (sel.matchExpressions ?? []).length === 0;
}

/**
 * The selector rules shared by Deployments, ReplicaSets and StatefulSets: required,
 * valid, non-empty ("empty selector is invalid for <what>"). Returns the parsed
 * selector for the template check, or undefined when it cannot be parsed.
 */
export function validateRequiredSelector(
  sel: LabelSelector | null | undefined,
  path: string,
  what: string,
  errs: FieldError[],
): Selector | undefined {
  if (sel === null || sel === undefined) {
    errs.push(field.required(path, ""));
  } else {
    errs.push(...validateLabelSelector(sel, path));
    if (isEmptySelector(sel)) errs.push(field.invalid(path, sel, `empty selector is invalid for ${what}`));
  }
  return asSelector(sel);
}

/**
 * What Deployments and ReplicaSets require of their selector and template: a
 * required, valid, non-empty selector that selects the template, and a valid
 * template of long-running pods. "for deployment" and "ReplicaSet" are
 * upstream's own wording for both kinds; clients may match on it.
 */
export function validateSelectedTemplate(spec: { selector?: LabelSelector | null; template?: PodTemplateSpec }, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const selector = validateRequiredSelector(spec.selector, `${path}.selector`, "deployment", errs);
  if (selector === undefined) {
    errs.push(field.invalid(`${path}.selector`, spec.selector ?? null, "invalid label selector"));
  } else {
    errs.push(...selectorMatchesTemplate(selector, spec.template, `${path}.template`));
    errs.push(...validatePodTemplate(spec.template, `${path}.template`));
    errs.push(...validateLongRunningTemplate(spec.template, `${path}.template`, "ReplicaSet"));
  }
  return errs;
}

/** `<path>.metadata.labels: Invalid value: ...: \`selector\` does not match template \`labels\`` (an empty selector is not checked). */
export function selectorMatchesTemplate(selector: Selector, template: PodTemplateSpec | undefined, path: string): FieldError[] {
  const labels = template?.metadata?.labels;
  if (selector.empty || selector.matches(labels ?? {})) return [];
  return [field.invalid(`${path}.metadata.labels`, labels ?? null, "`selector` does not match template `labels`")];
}

// ---- pod templates ----

/** Surge and unavailability limits of a rolling update (Deployments and DaemonSets). */
export interface RollingUpdateLimits {
  maxUnavailable?: IntOrString;
  maxSurge?: IntOrString;
}

/** Upstream's strategy defaults: type RollingUpdate, and for a rolling update the limits left unset. */
export function defaultRollingUpdate(
  strategy: { type?: string; rollingUpdate?: RollingUpdateLimits | null },
  limits: Required<RollingUpdateLimits>,
): void {
  if (!strategy.type) strategy.type = "RollingUpdate";
  if (strategy.type === "RollingUpdate") {
    const ru = (strategy.rollingUpdate ??= {});
    ru.maxUnavailable ??= limits.maxUnavailable;
    ru.maxSurge ??= limits.maxSurge;
  }
}

// ---- int or percent ----

const PERCENT_RE = /^[0-9]+%$/;
const PERCENT_MSG = regexError("a valid percent string must be a numeric string followed by an ending '%'", "[0-9]+%", "1%", "93%");

/** upstream's ValidatePositiveIntOrPercent (which in fact allows 0). */
export function validateIntOrPercent(value: IntOrString | null | undefined, path: string): FieldError[] {
  if (value === undefined || value === null) return [];
  if (typeof value === "string") return PERCENT_RE.test(value) ? [] : [field.invalid(path, value, PERCENT_MSG)];
  if (typeof value === "number") return nonnegative(value, path);
  return [field.invalid(path, value, "must be an integer or percentage (e.g '5%')")];
}

/** The number in 5 or "5%" (upstream's getIntOrPercentValue); NaN when neither. */
export function intOrPercentValue(value: IntOrString | null | undefined): number {
  if (typeof value === "number") return value;
  if (typeof value === "string" && PERCENT_RE.test(value)) return Number(value.slice(0, -1));
  return Number.NaN;
}

export function notMoreThan100Percent(value: IntOrString | null | undefined, path: string): FieldError[] {
  if (typeof value !== "string" || !PERCENT_RE.test(value) || intOrPercentValue(value) <= 100) return [];
  return [field.invalid(path, value, "must not be greater than 100%")];
}

// ---- immutability ----

/** Semantic equality as upstream compares API values: key order ignored, null/absent and empty lists/maps equal. */
export function semanticEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map(canonical);
  if (v === null || typeof v !== "object") return v === null ? undefined : v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) {
    const c = canonical((v as Record<string, unknown>)[k]);
    if (c !== undefined) out[k] = c;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/** upstream's ValidateImmutableField: `<path>: Invalid value: <new>: field is immutable`. */
export function immutable(next: unknown, old: unknown, path: string): FieldError[] {
  return semanticEqual(next, old) ? [] : [field.immutable(path, next ?? null)];
}

// ---- table cells ----

/** The selector as text; "<invalid>" when it cannot be parsed (deployments, replica sets, daemon sets). */
export function selectorCell(sel: LabelSelector | null | undefined): string {
  const parsed = asSelector(sel);
  return parsed === undefined ? "<invalid>" : parsed.toString();
}

/** upstream's metav1.FormatLabelSelector: "<none>" for nothing, "<error>" when it cannot be parsed. */
export function formatLabelSelector(sel: LabelSelector | null | undefined): string {
  const parsed = asSelector(sel);
  if (parsed === undefined) return "<error>";
  return parsed.toString() || "<none>";
}

/** The pods of a kind with spec.template and spec.selector: deployments, replica sets, daemon sets. */
export function specPods<T extends { spec?: { template?: PodTemplateSpec; selector?: LabelSelector | null } }>(): WorkloadPods<T> {
  return { template: (obj) => obj.spec?.template, selector: (obj) => selectorCell(obj.spec?.selector) };
}

// ---- scale ----

interface Replicated {
  spec?: { replicas?: number; selector?: LabelSelector | null };
  status?: { replicas?: number };
}

/** Scale access over spec.replicas / status.replicas / spec.selector, the shape all three scalable kinds share. */
export function replicaScale<T extends Replicated>(): ScaleAccess<T> {
  return {
    specReplicas: (obj) => obj.spec?.replicas ?? 0,
    setSpecReplicas: (obj, replicas) => {
      (obj.spec ??= {}).replicas = replicas;
    },
    statusReplicas: (obj) => obj.status?.replicas ?? 0,
    selector: (obj) => asSelector(obj.spec?.selector)?.toString() ?? "",
  };
}
