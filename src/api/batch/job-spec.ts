// JobSpec rules shared by Jobs and CronJob job templates: upstream's
// SetDefaults_Job and validateJobSpec (counts, completion modes, pod failure
// and success policies, pod replacement, restart policy) with its messages.

import { field, isDNS1123Subdomain, isQualifiedName, omitValue as omit, type FieldError } from "../../machinery/index.js";
import { defaultPodTemplate, nonnegative, validatePodTemplate } from "../apps/workload.js";
import type { JobSpec, JobTemplateSpec, PodFailurePolicyRule, SuccessPolicyRule } from "./types.js";

const MAX_PARALLELISM_INDEXED = 100_000;
const MAX_FAILED_INDEXES_INDEXED = 100_000;
const COMPLETIONS_SOFT_LIMIT = 100_000;
const PARALLELISM_HIGH_COMPLETIONS = 10_000;
const MAX_FAILED_INDEXES_HIGH_COMPLETIONS = 10_000;
const MAX_RULES = 20;
const MAX_CONDITION_PATTERNS = 20;
const MAX_EXIT_CODES = 255;
const MAX_MANAGED_BY = 63;
const MAX_SUCCEEDED_INDEXES = 64 * 1024;
const INT32_MAX = 2 ** 31 - 1;

/** upstream's SetDefaults_Job on the spec (the Job's own labels are defaulted by the caller). */
export function defaultJobSpec(spec: JobSpec): void {
  // A non-parallel job may leave both unset: one pod, run once.
  if (spec.completions == null && spec.parallelism == null) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  // With per-index limits the global limit would only get in the way, so it becomes "unlimited".
  spec.backoffLimit ??= spec.backoffLimitPerIndex != null ? INT32_MAX : 6;
  spec.completionMode ??= "NonIndexed";
  spec.suspend ??= false;
  for (const rule of spec.podFailurePolicy?.rules ?? []) for (const p of rule.onPodConditions ?? []) if (!p.status) p.status = "True";
  spec.podReplacementPolicy ??= spec.podFailurePolicy != null ? "Failed" : "TerminatingOrFailed";
  defaultPodTemplate((spec.template ??= {}));
}

/** upstream's validateJobSpec: everything about a JobSpec except its selector. */
export function validateJobSpec(spec: JobSpec, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of ["parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished", "backoffLimitPerIndex"] as const) {
    errs.push(...nonnegative(spec[key], `${path}.${key}`));
  }
  if (spec.maxFailedIndexes != null) {
    errs.push(...nonnegative(spec.maxFailedIndexes, `${path}.maxFailedIndexes`));
    if (spec.backoffLimitPerIndex == null) errs.push(field.required(`${path}.backoffLimitPerIndex`, "when maxFailedIndexes is specified"));
  }
  if (spec.managedBy != null) errs.push(...validateManagedBy(spec.managedBy, `${path}.managedBy`));
  const indexed = spec.completionMode === "Indexed";
  if (spec.completionMode != null) {
    if (spec.completionMode !== "NonIndexed" && !indexed) {
      errs.push(field.notSupported(`${path}.completionMode`, spec.completionMode, ["NonIndexed", "Indexed"]));
    }
    if (indexed) errs.push(...validateIndexed(spec, path));
  }
  if (!indexed) {
    if (spec.backoffLimitPerIndex != null) errs.push(field.invalid(`${path}.backoffLimitPerIndex`, spec.backoffLimitPerIndex, "requires indexed completion mode"));
    if (spec.maxFailedIndexes != null) errs.push(field.invalid(`${path}.maxFailedIndexes`, spec.maxFailedIndexes, "requires indexed completion mode"));
  }
  if (spec.podFailurePolicy != null) errs.push(...validatePodFailurePolicy(spec, `${path}.podFailurePolicy`));
  if (spec.successPolicy != null) errs.push(...validateSuccessPolicy(spec, `${path}.successPolicy`));
  errs.push(...validatePodReplacementPolicy(spec, `${path}.podReplacementPolicy`));
  errs.push(...validatePodTemplate(spec.template, `${path}.template`));

  // Pod defaulting turns an unset restartPolicy into Always, so both mean "not chosen".
  const restart = spec.template?.spec?.restartPolicy ?? "";
  const restartPath = `${path}.template.spec.restartPolicy`;
  if (restart === "Always" || restart === "") errs.push(field.required(restartPath, 'valid values: "OnFailure", "Never"'));
  else if (restart !== "OnFailure" && restart !== "Never") errs.push(field.notSupported(restartPath, restart, ["OnFailure", "Never"]));
  else if (spec.podFailurePolicy != null && restart !== "Never") errs.push(field.invalid(restartPath, restart, 'only "Never" is supported when podFailurePolicy is specified'));
  return errs;
}

function validateIndexed(spec: JobSpec, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const { completions, parallelism, maxFailedIndexes } = spec;
  if (completions == null) errs.push(field.required(`${path}.completions`, "when completion mode is Indexed"));
  if (parallelism != null && parallelism > MAX_PARALLELISM_INDEXED) {
    errs.push(field.invalid(`${path}.parallelism`, parallelism, `must be less than or equal to ${MAX_PARALLELISM_INDEXED} when completion mode is Indexed`));
  }
  if (completions != null && maxFailedIndexes != null && maxFailedIndexes > completions) {
    errs.push(field.invalid(`${path}.maxFailedIndexes`, maxFailedIndexes, "must be less than or equal to completions"));
  }
  if (maxFailedIndexes != null && maxFailedIndexes > MAX_FAILED_INDEXES_INDEXED) {
    errs.push(field.invalid(`${path}.maxFailedIndexes`, maxFailedIndexes, `must be less than or equal to ${MAX_FAILED_INDEXES_INDEXED}`));
  }
  if (completions != null && completions > COMPLETIONS_SOFT_LIMIT && spec.backoffLimitPerIndex != null) {
    if (maxFailedIndexes == null) errs.push(field.required(`${path}.maxFailedIndexes`, `must be specified when completions is above ${COMPLETIONS_SOFT_LIMIT}`));
    else if (maxFailedIndexes > MAX_FAILED_INDEXES_HIGH_COMPLETIONS) {
      errs.push(
        field.invalid(`${path}.maxFailedIndexes`, maxFailedIndexes, `must be less than or equal to ${MAX_FAILED_INDEXES_HIGH_COMPLETIONS} when completions more than ${COMPLETIONS_SOFT_LIMIT}`),
      );
    }
    if (parallelism != null && parallelism > PARALLELISM_HIGH_COMPLETIONS) {
      errs.push(field.invalid(`${path}.parallelism`, parallelism, `must be less than or equal to ${PARALLELISM_HIGH_COMPLETIONS} when completions more than ${COMPLETIONS_SOFT_LIMIT}`));
    }
  }
  return errs;
}

const PATH_CHARS = /^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;

/** upstream's IsDomainPrefixedPath plus the 63-character limit. */
function validateManagedBy(value: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const slash = value.indexOf("/");
  if (slash < 0) {
    errs.push(field.invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")'));
  } else {
    for (const msg of isDNS1123Subdomain(value.slice(0, slash))) errs.push(field.invalid(path, value.slice(0, slash), msg));
    const rest = value.slice(slash + 1);
    if (rest !== "" && !PATH_CHARS.test(rest)) errs.push(field.invalid(path, rest, `Invalid path: must match the regex ${PATH_CHARS.source.slice(1, -1)}`));
  }
  if (value.length > MAX_MANAGED_BY) errs.push(field.tooLong(path, MAX_MANAGED_BY));
  return errs;
}

const ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"];
const CONDITION_STATUSES = ["False", "True", "Unknown"];

function validatePodFailurePolicy(spec: JobSpec, path: string): FieldError[] {
  const rules = spec.podFailurePolicy?.rules ?? [];
  const errs: FieldError[] = [];
  if (rules.length > MAX_RULES) errs.push(field.tooMany(`${path}.rules`, rules.length, MAX_RULES));
  const pod = spec.template?.spec ?? {};
  const names = new Set<string>();
  for (const key of ["containers", "initContainers"]) {
    const list = pod[key];
    if (Array.isArray(list)) for (const c of list as { name?: string }[]) names.add(c?.name ?? "");
  }
  rules.forEach((rule, i) => errs.push(...validateRule(spec, rule, `${path}.rules[${i}]`, names)));
  return errs;
}

function validateRule(spec: JobSpec, rule: PodFailurePolicyRule, path: string, containers: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  if (rule.action === "FailIndex") {
    if (spec.backoffLimitPerIndex == null) errs.push(field.invalid(`${path}.action`, rule.action, "requires the backoffLimitPerIndex to be set"));
  } else if (!ACTIONS.includes(rule.action ?? "")) {
    errs.push(field.notSupported(`${path}.action`, rule.action ?? "", ACTIONS));
  }
  const codes = rule.onExitCodes;
  if (codes != null) {
    const at = `${path}.onExitCodes`;
    if (codes.operator !== "In" && codes.operator !== "NotIn") errs.push(field.notSupported(`${at}.operator`, codes.operator ?? "", ["In", "NotIn"]));
    if (codes.containerName != null && !containers.has(codes.containerName)) {
      errs.push(field.invalid(`${at}.containerName`, codes.containerName, "must be one of the container or initContainer names in the pod template"));
    }
    const values = codes.values ?? [];
    if (values.length === 0) errs.push(field.invalid(`${at}.values`, values, "at least one value is required"));
    else if (values.length > MAX_EXIT_CODES) errs.push(field.tooMany(`${at}.values`, values.length, MAX_EXIT_CODES));
    const seen = new Set<number>();
    let ordered = true;
    values.forEach((v, j) => {
      if (codes.operator === "In" && v === 0) errs.push(field.invalid(`${at}.values[${j}]`, v, "must not be 0 for the In operator"));
      if (seen.has(v)) errs.push(field.duplicate(`${at}.values[${j}]`, v));
      seen.add(v);
      if (j > 0 && values[j - 1]! > v) ordered = false;
    });
    if (!ordered) errs.push(field.invalid(`${at}.values`, values, "must be ordered"));
  }
  const patterns = rule.onPodConditions ?? [];
  if (patterns.length > MAX_CONDITION_PATTERNS) errs.push(field.tooMany(`${path}.onPodConditions`, patterns.length, MAX_CONDITION_PATTERNS));
  patterns.forEach((p, j) => {
    const at = `${path}.onPodConditions[${j}]`;
    for (const msg of isQualifiedName(p.type ?? "")) errs.push(field.invalid(`${at}.type`, p.type ?? "", msg));
    if (!CONDITION_STATUSES.includes(p.status ?? "")) errs.push(field.notSupported(`${at}.status`, p.status ?? "", CONDITION_STATUSES));
  });
  if (codes != null && patterns.length > 0) errs.push(field.invalid(path, omit, "specifying both OnExitCodes and OnPodConditions is not supported"));
  if (codes == null && patterns.length === 0) errs.push(field.invalid(path, omit, "specifying one of OnExitCodes and OnPodConditions is required"));
  return errs;
}

function validateSuccessPolicy(spec: JobSpec, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const rules = spec.successPolicy?.rules ?? [];
  if (spec.completionMode !== "Indexed") errs.push(field.invalid(path, spec.successPolicy, "requires indexed completion mode"));
  if (rules.length === 0) errs.push(field.required(`${path}.rules`, "at least one rules must be specified when the successPolicy is specified"));
  if (rules.length > MAX_RULES) errs.push(field.tooMany(`${path}.rules`, rules.length, MAX_RULES));
  rules.forEach((rule, i) => errs.push(...validateSuccessRule(spec, rule, `${path}.rules[${i}]`)));
  return errs;
}

function validateSuccessRule(spec: JobSpec, rule: SuccessPolicyRule, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const completions = spec.completions ?? 0;
  if (rule.succeededCount == null && rule.succeededIndexes == null) {
    errs.push(field.required(path, "at least one of succeededCount or succeededIndexes must be specified"));
  }
  let total = 0;
  if (rule.succeededIndexes != null) {
    const at = `${path}.succeededIndexes`;
    if (rule.succeededIndexes.length > MAX_SUCCEEDED_INDEXES) errs.push(field.tooLong(at, MAX_SUCCEEDED_INDEXES));
    const parsed = countIndexes(rule.succeededIndexes, completions);
    if (typeof parsed === "string") errs.push(field.invalid(at, rule.succeededIndexes, `error parsing succeededIndexes: ${parsed}`));
    else total = parsed;
  }
  if (rule.succeededCount != null) {
    const at = `${path}.succeededCount`;
    const n = rule.succeededCount;
    if (n < 0) errs.push(field.invalid(at, n, "must be greater than or equal to 0"));
    if (n > completions) errs.push(field.invalid(at, n, `must be less than or equal to ${completions} (the number of specified completions)`));
    if (rule.succeededIndexes != null && n > total) {
      errs.push(field.invalid(at, n, `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`));
    }
  }
  return errs;
}

/** How many indexes `1,3-5` names, or upstream's parse error text. */
export function countIndexes(text: string, completions: number): number | string {
  if (text === "") return 0;
  let last: number | undefined;
  let total = 0;
  const atoi = (s: string) => (/^[+-]?[0-9]+$/.test(s) ? Number(s) : undefined);
  for (const interval of text.split(",")) {
    const limits = interval.split("-");
    if (limits.length > 2) return `the fragment ${JSON.stringify(interval)} violates the requirement that an index interval can have at most two parts separated by '-'`;
    const x = atoi(limits[0]!);
    if (x === undefined) return `cannot convert string to integer for index: ${JSON.stringify(limits[0])}`;
    if (x >= completions) return `too large index: ${JSON.stringify(limits[0])}`;
    if (last !== undefined && last >= x) return `non-increasing order, previous: ${last}, current: ${x}`;
    total += 1;
    last = x;
    if (limits.length > 1) {
      const y = atoi(limits[1]!);
      if (y === undefined) return `cannot convert string to integer for index: ${JSON.stringify(limits[1])}`;
      if (y >= completions) return `too large index: ${JSON.stringify(limits[1])}`;
      if (last >= y) return `non-increasing order, previous: ${last}, current: ${y}`;
      total += y - x;
      last = y;
    }
  }
  return total;
}

function validatePodReplacementPolicy(spec: JobSpec, path: string): FieldError[] {
  const policy = spec.podReplacementPolicy;
  if (policy == null) return [];
  if (spec.podFailurePolicy != null) return policy === "Failed" ? [] : [field.notSupported(path, policy, ["Failed"])];
  return policy === "Failed" || policy === "TerminatingOrFailed" ? [] : [field.notSupported(path, policy, ["Failed", "TerminatingOrFailed"])];
}

/**
 * A CronJob's template gets only pod defaults: upstream defaults JobSpec
 * fields on Jobs, so the Jobs a CronJob creates are defaulted when created.
 */
export function defaultPodTemplateOfJobTemplate(template: JobTemplateSpec): void {
  defaultPodTemplate(((template.spec ??= {}).template ??= {}));
}

/** upstream's ValidateJobTemplateSpec: a JobSpec whose selector the server will generate. */
export function validateJobTemplate(template: JobTemplateSpec, path: string): FieldError[] {
  const spec = template.spec ?? {};
  const errs = validateJobSpec(spec, `${path}.spec`);
  if (spec.selector != null) errs.push(field.invalid(`${path}.spec.selector`, spec.selector, "`selector` will be auto-generated"));
  if (spec.manualSelector === true) errs.push(field.notSupported(`${path}.spec.manualSelector`, true, ["nil", "false"]));
  return errs;
}
