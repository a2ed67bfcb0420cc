// mutatingwebhookconfigurations and validatingwebhookconfigurations
// (admissionregistration.<suffix>/v1, cluster-scoped): upstream's defaults
// (failurePolicy Fail, matchPolicy Equivalent, empty selectors, timeout 10 s,
// scope '*', service port 443, reinvocationPolicy Never), its v1 validation and
// messages, and the NAME WEBHOOKS AGE table.

import { compileExpression } from "../apiextensions/cel.js";
import { field, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { isDNS1035Label, isDNS1123Subdomain } from "../../machinery/validation/names.js";
import { validateLabelSelector } from "../apps/workload.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { nameAgeTable } from "../table-format.js";
import { ADMISSIONREGISTRATION_V1 } from "./schemas.js";
import type { RuleWithOperations, Webhook, WebhookConfiguration } from "./types.js";

const OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const SCOPES = ["*", "Cluster", "Namespaced"];
const FAILURE_POLICIES = ["Fail", "Ignore"];
const MATCH_POLICIES = ["Equivalent", "Exact"];
const REINVOCATION_POLICIES = ["IfNeeded", "Never"];
const SIDE_EFFECTS_V1 = ["None", "NoneOnDryRun"];
const REVIEW_VERSIONS = ["v1", "v1beta1"];

function defaultWebhook(w: Webhook, mutating: boolean): void {
  if (typeof w !== "object" || w === null) return;
  w.failurePolicy ??= "Fail";
  w.matchPolicy ??= "Equivalent";
  w.namespaceSelector ??= {};
  w.objectSelector ??= {};
  w.timeoutSeconds ??= 10;
  if (mutating) w.reinvocationPolicy ??= "Never";
  for (const r of Array.isArray(w.rules) ? w.rules : []) if (typeof r === "object" && r !== null) r.scope ??= "*";
  const service = w.clientConfig?.service;
  if (typeof service === "object" && service !== null) service.port ??= 443;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

export function validateRule(r: RuleWithOperations, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const ops = strings(r.operations);
  if (ops.length === 0) errs.push(field.required(`${path}.operations`, ""));
  if (ops.length > 1 && ops.includes("*")) errs.push(field.invalid(`${path}.operations`, ops, "if '*' is present, must not specify other operations"));
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(field.notSupported(`${path}.operations[${i}]`, op, OPERATIONS));
  });
  if (strings(r.apiGroups).length === 0) errs.push(field.required(`${path}.apiGroups`, ""));
  if (strings(r.apiGroups).length > 1 && strings(r.apiGroups).includes("*")) errs.push(field.invalid(`${path}.apiGroups`, r.apiGroups, "if '*' is present, must not specify other API groups"));
  const versions = strings(r.apiVersions);
  if (versions.length === 0) errs.push(field.required(`${path}.apiVersions`, ""));
  if (versions.length > 1 && versions.includes("*")) errs.push(field.invalid(`${path}.apiVersions`, versions, "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === "") errs.push(field.required(`${path}.apiVersions[${i}]`, ""));
  });
  const resources = strings(r.resources);
  if (resources.length === 0) errs.push(field.required(`${path}.resources`, ""));
  const seen = new Set<string>();
  resources.forEach((res, i) => {
    if (res === "") {
      errs.push(field.required(`${path}.resources[${i}]`, ""));
      return;
    }
    if (seen.has(res)) errs.push(field.duplicate(`${path}.resources[${i}]`, res));
    seen.add(res);
    const [main, sub] = res.split("/", 2);
    if (main === "*" && sub === undefined && resources.length > 1) errs.push(field.invalid(`${path}.resources`, resources, "if '*' is present, must not specify other resources without subresources"));
    if (sub === "*" && resources.some((o) => o !== res && o.startsWith(`${main}/`))) errs.push(field.invalid(`${path}.resources`, resources, `if '${main}/*' is present, must not specify ${main}/<subresource>`));
  });
  if (r.scope != null && !SCOPES.includes(r.scope)) errs.push(field.notSupported(`${path}.scope`, r.scope, SCOPES));
  return errs;
}

/** A CEL expression: required, and compiled (upstream's `compilation failed: ...`). */
export function validateExpression(expr: unknown, path: string): FieldError[] {
  if (typeof expr !== "string" || expr.trim() === "") return [field.required(path, "")];
  try {
    compileExpression(expr);
    return [];
  } catch (err) {
    return [field.invalid(path, expr, `compilation failed: ${(err as Error).message}`)];
  }
}

function validateUrl(url: string, path: string): FieldError[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [field.invalid(path, url, "host must be specified")];
  }
  const errs: FieldError[] = [];
  if (u.protocol !== "https:") errs.push(field.invalid(path, url, "'https' is the only allowed URL scheme"));
  if (u.hostname === "") errs.push(field.invalid(path, url, "host must be specified"));
  if (u.username !== "" || u.password !== "") errs.push(field.invalid(path, url, "user information is not permitted in the URL"));
  if (u.hash !== "" || url.includes("#")) errs.push(field.invalid(path, url, "fragments are not permitted in the URL"));
  if (u.search !== "" || url.includes("?")) errs.push(field.invalid(path, url, "query parameters are not permitted in the URL"));
  return errs;
}

function validateWebhook(w: Webhook, path: string, mutating: boolean): FieldError[] {
  if (typeof w !== "object" || w === null) return [field.required(path, "")];
  const errs: FieldError[] = [];
  const name = w.name ?? "";
  if (name === "") errs.push(field.required(`${path}.name`, ""));
  else {
    for (const msg of isDNS1123Subdomain(name)) errs.push(field.invalid(`${path}.name`, name, msg));
    if (name.split(".").length < 3) errs.push(field.invalid(`${path}.name`, name, "should be a domain with at least three segments separated by dots"));
  }
  (Array.isArray(w.rules) ? w.rules : []).forEach((r, i) => errs.push(...validateRule(r ?? {}, `${path}.rules[${i}]`)));
  if (w.failurePolicy != null && !FAILURE_POLICIES.includes(w.failurePolicy)) errs.push(field.notSupported(`${path}.failurePolicy`, w.failurePolicy, FAILURE_POLICIES));
  if (w.matchPolicy != null && !MATCH_POLICIES.includes(w.matchPolicy)) errs.push(field.notSupported(`${path}.matchPolicy`, w.matchPolicy, MATCH_POLICIES));
  if (mutating && w.reinvocationPolicy != null && !REINVOCATION_POLICIES.includes(w.reinvocationPolicy)) errs.push(field.notSupported(`${path}.reinvocationPolicy`, w.reinvocationPolicy, REINVOCATION_POLICIES));
  if (w.sideEffects == null) errs.push(field.required(`${path}.sideEffects`, ""));
  else if (!SIDE_EFFECTS_V1.includes(w.sideEffects)) errs.push(field.notSupported(`${path}.sideEffects`, w.sideEffects, SIDE_EFFECTS_V1));
  if (w.timeoutSeconds != null && (typeof w.timeoutSeconds !== "number" || w.timeoutSeconds < 1 || w.timeoutSeconds > 30)) {
    errs.push(field.invalid(`${path}.timeoutSeconds`, w.timeoutSeconds, "the timeout value must be between 1 and 30 seconds"));
  }
  errs.push(...validateLabelSelector(w.namespaceSelector, `${path}.namespaceSelector`), ...validateLabelSelector(w.objectSelector, `${path}.objectSelector`));
  errs.push(...validateReviewVersions(strings(w.admissionReviewVersions), `${path}.admissionReviewVersions`));
  errs.push(...validateClientConfig(w, `${path}.clientConfig`));
  const conditions = Array.isArray(w.matchConditions) ? w.matchConditions : [];
  if (conditions.length > 64) errs.push(field.tooMany(`${path}.matchConditions`, conditions.length, 64));
  const names = new Set<string>();
  conditions.forEach((c, i) => {
    const p = `${path}.matchConditions[${i}]`;
    if (!c?.name) errs.push(field.required(`${p}.name`, ""));
    else if (names.has(c.name)) errs.push(field.duplicate(`${p}.name`, c.name));
    else names.add(c.name);
    errs.push(...validateExpression(c?.expression, `${p}.expression`));
  });
  return errs;
}

function validateReviewVersions(versions: string[], path: string): FieldError[] {
  if (versions.length === 0) return [field.required(path, `must specify one of ${REVIEW_VERSIONS.join(", ")}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v)) errs.push(field.invalid(`${path}[${i}]`, v, "duplicate version"));
    seen.add(v);
    for (const msg of isDNS1035Label(v)) errs.push(field.invalid(`${path}[${i}]`, v, msg));
  });
  if (!versions.some((v) => REVIEW_VERSIONS.includes(v))) errs.push(field.invalid(path, versions, `must include at least one of ${REVIEW_VERSIONS.join(", ")}`));
  return errs;
}

function validateClientConfig(w: Webhook, path: string): FieldError[] {
  const cc = w.clientConfig;
  const hasUrl = typeof cc?.url === "string";
  const hasService = typeof cc?.service === "object" && cc.service !== null;
  if (hasUrl === hasService) return [field.required(path, "exactly one of url or service is required")];
  if (hasUrl) return validateUrl(cc!.url!, `${path}.url`);
  const svc = cc!.service!;
  const errs: FieldError[] = [];
  if (!svc.name) errs.push(field.required(`${path}.service.name`, "service name is required"));
  if (!svc.namespace) errs.push(field.required(`${path}.service.namespace`, "service namespace is required"));
  if (svc.port != null && (typeof svc.port !== "number" || !Number.isInteger(svc.port) || svc.port < 1 || svc.port > 65535)) {
    errs.push(field.invalid(`${path}.service.port`, svc.port, "port is not valid: must be between 1 and 65535, inclusive"));
  }
  if (svc.path != null && svc.path !== "") {
    if (!svc.path.startsWith("/")) errs.push(field.invalid(`${path}.service.path`, svc.path, "must start with a '/'"));
    else if (svc.path.includes("//")) errs.push(field.invalid(`${path}.service.path`, svc.path, "segment[1] may not be empty"));
  }
  return errs;
}

function validate(cfg: WebhookConfiguration, mutating: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (cfg.webhooks != null && !Array.isArray(cfg.webhooks)) return [field.invalid("webhooks", cfg.webhooks, "must be a list")];
  const names = new Set<string>();
  (cfg.webhooks ?? []).forEach((w, i) => {
    errs.push(...validateWebhook(w, `webhooks[${i}]`, mutating));
    const name = w?.name;
    if (name) {
      if (names.has(name)) errs.push(field.duplicate(`webhooks[${i}].name`, name));
      names.add(name);
    }
  });
  return errs;
}

function configurations(naming: Naming, mutating: boolean): ResourceDefinition {
  const kind = mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration";
  return defineResource<WebhookConfiguration>({
    group: naming.admissionregistrationGroup,
    versions: ["v1"],
    resource: kind.toLowerCase() + "s",
    singular: kind.toLowerCase(),
    kind,
    namespaced: false,
    categories: ["api-extensions"],
    schema: `${ADMISSIONREGISTRATION_V1}.${kind}`,
    defaults(cfg) {
      for (const w of Array.isArray(cfg.webhooks) ? cfg.webhooks : []) defaultWebhook(w, mutating);
    },
    validate: (cfg) => validate(cfg, mutating),
    validateUpdate: (cfg) => validate(cfg, mutating),
    table: nameAgeTable<WebhookConfiguration>({
      columns: [{ name: "Webhooks", type: "integer", description: "The number of webhooks in the configuration.", priority: 0 }],
      cells: (cfg) => [Array.isArray(cfg.webhooks) ? cfg.webhooks.length : 0],
    }),
  });
}

export const mutatingWebhookConfigurations = (naming: Naming) => configurations(naming, true);
export const validatingWebhookConfigurations = (naming: Naming) => configurations(naming, false);
